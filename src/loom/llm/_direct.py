"""A streamed POST of a prebuilt body through an SDK client's own HTTP client.

The SDK's `post` rebuilds the same request on every call: an options model, the URL
joined and parsed, default and auth headers merged, a retry loop's bookkeeping (about a
sixth of a turn's CPU at turn 10, where a turn is mostly fixed costs). Between calls the
request differs only by its body, so the SDK builds it once, with its own steps
(`_prepare_options`, `_build_request`, `_prepare_request`: headers, auth, URL, timeout),
after its first request went the usual way; later calls reuse that request's URL,
headers and extensions with the new body. Failures are raised as the SDK raises them
(its `_make_status_error_from_response` for an HTTP error, `APITimeoutError`,
`APIConnectionError`), so `loom.llm._errors` maps them the same; the SDKs run with
`max_retries=0` (Loom retries), so there is no retry to keep.

A client whose auth can change per request (custom auth, workload identity, a provider
runtime, an idempotency header) keeps the SDK's own path on every call.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

import httpx2

log = logging.getLogger(__name__)

Template = tuple[httpx2.URL, httpx2.Headers, dict[str, Any]]  # url, headers, extensions


class DirectPost:
    def __init__(
        self, client: Any, sdk: str, path: str, options: dict[str, Any] | None = None
    ) -> None:
        self._client = client
        self._sdk = sdk  # "openai" or "anthropic": where the error types live
        self._path = path
        self._options = options or {}
        self._template: Template | None = None
        self.templates_built = 0  # how many times the SDK built the request (tests count it)
        self._given_up = False

    def direct(self) -> bool:
        """Whether the request may be reused: nothing in the client's auth is per call."""
        client = self._client
        return (
            getattr(client, "custom_auth", None) is None
            and getattr(client, "_workload_identity_auth", None) is None
            and getattr(client, "_provider_runtime", None) is None
            and not getattr(client, "_idempotency_header", None)
            and isinstance(getattr(client, "_client", None), httpx2.AsyncClient)
        )

    async def response(self, content: bytes) -> Any:
        """The streamed HTTP response to POSTing `content`. The SDK's own `post` serves
        the first call and any client that is not `direct()`."""
        template = self._template
        if template is None:
            stream = await self._sdk_post(content)
            if not self._given_up and self.direct():
                try:
                    self._template = await self._build_template()
                except Exception as exc:  # an SDK version whose private steps differ
                    self._given_up = True  # its own `post` serves every call, as before
                    log.debug("reusing %s's request is not possible: %r", self._sdk, exc)
            return stream.response
        return await self._send(template, content)

    async def _sdk_post(self, content: bytes) -> Any:
        """The SDK's low-level post: the bytes go as they are (its `create` would walk and
        copy the whole history again); the result has the response as `.response`."""
        stream_cls = importlib.import_module(self._sdk).AsyncStream
        options = {"options": self._options} if self._options else {}
        return await self._client.post(
            self._path,
            cast_to=object,
            content=content,
            stream=True,
            stream_cls=stream_cls[object],
            **options,
        )

    async def _build_template(self) -> Template:
        client = self._client
        models = importlib.import_module(f"{self._sdk}._models")
        options = models.FinalRequestOptions.construct(
            method="post", url=self._path, content=b"", **self._options
        )
        options = await client._prepare_options(options)
        request = client._build_request(options, retries_taken=0)
        await client._prepare_request(request)
        self.templates_built += 1
        headers = request.headers.copy()
        headers.pop("content-length", None)  # set from each body
        return request.url, headers, dict(request.extensions)

    async def _send(self, template: Template, content: bytes) -> Any:
        url, headers, extensions = template
        http = self._client._client
        request = httpx2.Request(
            "POST", url, headers=headers, content=content, extensions=dict(extensions)
        )
        if http.cookies:  # what a server set (a load balancer's cookie) goes back to it
            http.cookies.set_cookie_header(request)
        sdk = importlib.import_module(self._sdk)
        try:
            response = await http.send(request, stream=True)
        except httpx2.TimeoutException as err:
            raise sdk.APITimeoutError(request=request) from err
        except Exception as err:
            if isinstance(err, self._sdk_error(sdk)):
                raise
            raise sdk.APIConnectionError(request=request) from err
        if response.status_code >= 400:
            await response.aread()
            raise self._client._make_status_error_from_response(response) from None
        return response

    @staticmethod
    def _sdk_error(sdk: Any) -> type[BaseException]:
        """The SDK's own base error: raised as it is, never wrapped (as the SDK does)."""
        return getattr(sdk, "OpenAIError", None) or sdk.AnthropicError
