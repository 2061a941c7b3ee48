"""A Gemini streaming request sent with the URL and headers the SDK built once, its
events read straight from the response bytes.

The SDK's request layer rebuilds the same request on every call (its options patched,
the URL joined and parsed, a tenacity retry object run for one attempt) and reads the
stream as `str` lines through several generators: with `loom.llm._direct` doing the same
for OpenAI and Anthropic, Google was the costliest provider per turn. Between calls only
the body differs, so the SDK's own `_build_request` builds the URL and headers once per
model path; each call sends a new `httpx2.Request` through the SDK's own HTTP client and
raises failures as the SDK raises them (`errors.APIError.raise_for_async_response`, the
transport's exceptions as they are: the SDK does not wrap them either).

Only a plain API-key client on httpx with no retry options goes this way (the one Loom
builds). Vertex AI (per-call access tokens), aiohttp and retrying clients keep the SDK's
`_async_request` and its reader.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

from loom.core.jsonish import is_json_object
from loom.llm._sse import loads, sse_events

Template = tuple[httpx2.URL, httpx2.Headers, dict[str, Any]]  # url, headers, extensions


class GeminiPost:
    def __init__(self, client: Any) -> None:
        self._client = client  # a google.genai.Client
        self._templates: dict[str, Template] = {}  # by model path
        self._direct: bool | None = None
        self.templates_built = 0  # how many times the SDK built a request (tests count it)

    def direct(self) -> bool:
        """Whether the built request may be reused: an API key (no per-call token), the
        httpx client, no SDK-side retries."""
        if self._direct is None:
            api = self._client._api_client
            self._direct = bool(
                api.api_key
                and not api.vertexai
                and api._http_options.retry_options is None
                and not api._use_aiohttp()
                and isinstance(api._async_httpx_client, httpx2.AsyncClient)
            )
        return self._direct

    async def chunks(self, path: str, content: bytes) -> AsyncIterator[Any]:
        """The JSON chunks of POSTing `content` to `path` (`models/x:streamGenerateContent
        ?alt=sse`). An HTTP error raises here, before the first chunk is asked for."""
        if not self.direct():
            return await self._sdk_chunks(path, content)
        api = self._client._api_client
        http = api._async_httpx_client
        url, headers, extensions = self._templates.get(path) or self._build(path)
        request = httpx2.Request(
            "POST", url, headers=headers, content=content, extensions=dict(extensions)
        )
        if http.cookies:  # what a server set (a load balancer's cookie) goes back to it
            http.cookies.set_cookie_header(request)
        response = await http.send(request, stream=True)
        try:
            await _errors().APIError.raise_for_async_response(response)
        except BaseException:
            await response.aclose()
            raise
        return _read(response)

    def _build(self, path: str) -> Template:
        api = self._client._api_client
        built = api._build_request("post", path, {}, None)
        request = api._async_httpx_client.build_request(
            method="POST",
            url=api._httpx_url(built.url, is_async=True),
            content=b"",
            headers=built.headers,
            timeout=built.timeout,
        )
        self.templates_built += 1
        headers = request.headers.copy()
        headers.pop("content-length", None)  # set from each body
        template = request.url, headers, dict(request.extensions)
        self._templates[path] = template
        return template

    async def _sdk_chunks(self, path: str, content: bytes) -> AsyncIterator[Any]:
        api = self._client._api_client
        http_request = api._build_request("post", path, {}, None)
        http_request.data = content
        response = await api._async_request(http_request=http_request, stream=True)
        return _sdk_segments(response)


def _errors() -> Any:
    from google.genai import errors

    return errors


async def _sdk_segments(response: Any) -> AsyncIterator[Any]:
    """The SDK reader's JSON chunks; an error chunk raises the SDK's APIError, as the
    SDK's own stream does."""
    async for chunk in response:
        await _raise_if_error(chunk, response)
        yield chunk


async def _read(response: httpx2.Response) -> AsyncIterator[Any]:
    """The stream's JSON chunks as the SDK's reader gives them: each `data:` event, and
    lines outside SSE (the API's unprefixed JSON, a proxy's page) read as one JSON text
    at the end; what does not parse raises the SDK's UnknownApiResponseError."""
    body = response.aiter_bytes()
    others: list[bytes] = []
    events = sse_events(body, others)
    try:
        async for _name, data in events:
            chunk = _load(data)
            await _raise_if_error(chunk, response)
            yield chunk
        if others:
            chunk = _load(b"".join(others))
            await _raise_if_error(chunk, response)
            yield chunk
    finally:
        await events.aclose()
        await body.aclose()
        await response.aclose()


def _load(data: bytes) -> Any:
    try:
        return loads(data)
    except (ValueError, UnicodeDecodeError) as err:
        raw = data.decode(errors="replace")
        raise _errors().UnknownApiResponseError(
            f"Failed to parse response as JSON. Raw response: {raw}"
        ) from err


async def _raise_if_error(chunk: Any, response: Any) -> None:
    if is_json_object(chunk) and is_json_object(error := chunk.get("error")):
        code = error.get("code")
        await _errors().APIError.raise_error_async(code, chunk, response)
