"""SDK exceptions -> LlmError with a message a person can act on.

Works by duck typing (status_code / code, response headers, class names) so it serves
the anthropic, openai and google-genai SDKs alike without importing any of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from loom.core.jsonish import is_json_object
from loom.llm import loop_share
from loom.llm.base import LlmError
from loom.llm.guard import ModelRequestBlocked, find_cause, open_responses
from loom.llm.retry import parse_retry_after, status_is_transient

_TIMEOUT_NAMES = {
    "APITimeoutError",
    "TimeoutException",
    "ReadTimeout",
    "ConnectTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "TimeoutError",
}
_CONNECTION_NAMES = {
    "APIConnectionError",
    "ConnectError",
    "ReadError",
    "RemoteProtocolError",
    "NetworkError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ServerDisconnectedError",
    "ClientConnectorError",
}
_UNREADABLE_NAMES = {
    "JSONDecodeError",
    "APIResponseValidationError",
    "ValidationError",
    "UnknownApiResponseError",
    "UnicodeDecodeError",
}


def _names(error: BaseException) -> set[str]:
    names: set[str] = set()
    current: BaseException | None = error
    while current is not None and len(names) < 50:
        names.update(cls.__name__ for cls in type(current).__mro__)
        current = current.__cause__ or current.__context__
    return names


# Error types that arrive inside a 200 stream (Anthropic `event: error`, OpenAI error
# chunks), mapped to the HTTP status they stand for.
_ERROR_TYPE_STATUS = {
    "overloaded_error": 529,
    "rate_limit_error": 429,
    "api_error": 500,
    "server_error": 500,
    "timeout_error": 504,
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "RESOURCE_EXHAUSTED": 429,
    "UNAVAILABLE": 503,
    "INTERNAL": 500,
}


def _status_of(error: BaseException) -> int | None:
    for attribute in ("status_code", "code"):
        value = getattr(error, attribute, None)
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, int) and 100 <= value <= 599 and value != 200:
            return value
    body: object = getattr(error, "body", None)
    inner = body.get("error", body) if is_json_object(body) else None
    if is_json_object(inner):
        for key in ("type", "status", "code"):
            status = _ERROR_TYPE_STATUS.get(str(inner.get(key)))
            if status is not None:
                return status
        code = inner.get("code")
        if isinstance(code, int) and 400 <= code <= 599:
            return code
    return None


def _mid_stream_error(error: BaseException) -> bool:
    """An SDK error raised for an error event inside a 200 response."""
    return getattr(error, "status_code", 200) == 200 and isinstance(
        getattr(error, "body", None), dict
    )


def _server_message(error: BaseException) -> str:
    """The provider's own error message, if the body had one."""
    message = getattr(error, "message", None)
    body: object = getattr(error, "body", None) or getattr(error, "details", None)
    if is_json_object(body):
        inner = body.get("error", body)
        if is_json_object(inner) and inner.get("message"):
            return str(inner["message"])
    if isinstance(message, str) and message:
        return message
    return str(error)


def _retry_after(error: BaseException) -> float | None:
    headers = getattr(getattr(error, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        milliseconds = headers.get("retry-after-ms")
        if milliseconds is not None:
            return float(milliseconds) / 1000.0
    except (TypeError, ValueError):
        pass
    return parse_retry_after(headers.get("retry-after"))


_HINTS = {
    401: "check the API key ({key_hint})",
    403: "the key lacks access to this model or endpoint",
    404: "check the model id and the base URL",
    413: "the request is too large; the conversation needs pruning",
    429: "rate limited",
    529: "the provider is overloaded",
}


def _other_api_hint(said: str, provider: str) -> str:
    """What to set when a model is served only by the other OpenAI API (a codex model
    sent to Chat Completions: "This model is only supported in v1/responses ...")."""
    lowered = said.lower()
    for marker, api in (("only supported in v1/responses", "responses"),
                        ("only supported in v1/chat/completions", "chat")):  # fmt: skip
        if marker in lowered:
            named = "Responses" if api == "responses" else "Chat Completions"
            return (
                f"; this model needs the {named} API: set"
                f' api = "{api}" under [providers.{provider}] in your config'
            )
    return ""


def map_sdk_error(
    error: BaseException, *, provider: str, endpoint: str = "", key_hint: str = ""
) -> LlmError:
    """Turn whatever an SDK raised into one LlmError (transient or permanent)."""
    blocked = find_cause(error, ModelRequestBlocked)
    if blocked is not None:
        assert isinstance(blocked, LlmError)
        blocked.provider = provider
        return blocked
    if isinstance(error, LlmError):
        return error
    status = _status_of(error)
    if status is not None:
        hint = _HINTS.get(status, "")
        if hint:
            hint = "; " + hint.format(key_hint=key_hint or "the provider's API key variable")
        from_http = status in (getattr(error, "status_code", None), getattr(error, "code", None))
        how = "returned HTTP" if from_http else "reported"
        said = _server_message(error)
        hint = _other_api_hint(said, provider) or hint
        return LlmError(
            f"{provider} {how} {status}: {said}{hint}",
            transient=status_is_transient(status),
            status=status,
            provider=provider,
            retry_after=_retry_after(error),
        )
    names = _names(error)
    where = f" at {endpoint}" if endpoint else ""
    if _mid_stream_error(error):
        return LlmError(
            f"{provider} reported an error mid-stream{where}: {_server_message(error)}",
            transient=True,
            provider=provider,
        )
    if names & _TIMEOUT_NAMES:
        return LlmError(f"{provider} timed out{where}", transient=True, provider=provider)
    hopeless = _unreachable(error)
    if hopeless and names & _CONNECTION_NAMES:
        return LlmError(
            f"Could not connect to {provider}{where}: {hopeless}.", transient=False,
            provider=provider,
        )  # fmt: skip
    if names & _CONNECTION_NAMES:
        cause = error.__cause__ or error.__context__
        detail = f" ({cause})" if cause is not None and str(cause) else ""
        return LlmError(
            f"Could not connect to {provider}{where}{detail}; check the network and the base URL.",
            transient=True,
            provider=provider,
        )
    if names & _UNREADABLE_NAMES or isinstance(error, json.JSONDecodeError | ValueError):
        return LlmError(
            f"{provider} sent a response Loom could not read{where}: {_short(error)}. "
            "Is the base URL an API endpoint for this provider?",
            transient=False,
            provider=provider,
        )
    return LlmError(
        f"{provider} request failed{where}: {type(error).__name__}: {_short(error)}",
        transient=False,
        provider=provider,
    )


def unreadable(provider: str, what: Any, endpoint: str = "", *, transient: bool = True) -> LlmError:
    """A response that parsed but makes no sense.

    Transient when the stream started and stopped early (a dropped connection);
    permanent when nothing in it was the provider's format (wrong base URL, a proxy page).
    """
    where = f" at {endpoint}" if endpoint else ""
    hint = "" if transient else " Is the base URL an API endpoint for this provider?"
    return LlmError(
        f"{provider} sent an incomplete or malformed response{where}: {what}.{hint}",
        transient=transient,
        provider=provider,
    )


def _unreachable(error: BaseException) -> str:
    """What makes the endpoint unreachable for good ("" when trying again may help): the
    connection refused (nothing listens there) or a host name that does not exist. A
    temporary name-lookup failure, a reset or a timeout is retried as before."""
    import socket

    current: BaseException | None = error
    for _ in range(50):
        if current is None:
            break
        if isinstance(current, ConnectionRefusedError):
            return "connection refused (is the server running? check the base URL)"
        if isinstance(current, socket.gaierror) and current.errno != socket.EAI_AGAIN:
            return "unknown host (check the base URL)"
        current = current.__cause__ or current.__context__
    return ""


def _short(error: BaseException, limit: int = 300) -> str:
    text = str(error) or type(error).__name__
    return text if len(text) <= limit else text[:limit] + "..."


async def close_quietly(stream: Any) -> None:
    """Close an SDK stream (its HTTP response) now, not whenever the GC gets to it."""
    if stream is None:
        return
    closer = getattr(stream, "aclose", None) or getattr(stream, "close", None)
    if closer is None:
        return
    try:
        outcome = closer()
        if hasattr(outcome, "__await__"):
            await outcome
    except Exception:  # closing a broken stream may fail again; the first error matters
        pass


async def sdk_stream(
    open_stream: Callable[[], Awaitable[Any]],
    consume: Callable[[Any], AsyncIterator[Any]],
    *,
    provider: str,
    endpoint: str,
    key_hint: str,
) -> AsyncIterator[Any]:
    """Open an SDK stream, translate it with `consume`, map every failure to LlmError,
    and close the HTTP response however the iteration ends (error, cancel, early stop).
    Between events it hands the loop back once its slice is spent (`loop_share`)."""
    stream = None
    responses: list[Any] = []
    token = open_responses.set(responses)
    finished = False
    try:
        with loop_share.streaming():
            await loop_share.room()  # the request body and the SDK's request building
            stream = await open_stream()
            clock = loop_share.clock
            since = clock()
            budget = loop_share.slice_s()
            async for event in consume(stream):
                yield event
                if clock() - since >= budget:
                    await asyncio.sleep(0)
                    since = clock()
                    budget = loop_share.slice_s()
        finished = True
    except Exception as error:
        raise map_sdk_error(
            error, provider=provider, endpoint=endpoint, key_hint=key_hint
        ) from error
    finally:
        _reset(token)
        await _close_all(stream, responses, drain=not finished)


def _reset(token: Any) -> None:
    with contextlib.suppress(ValueError):  # finalized from another context (loop shutdown)
        open_responses.reset(token)


async def _close_all(stream: Any, responses: list[Any], *, drain: bool) -> None:
    """Close the HTTP responses first (the server stops generating), then let the SDK's
    generator chain run into the closed stream and end, so no layer is left suspended
    for the garbage collector to close out of order."""
    for response in responses:
        with contextlib.suppress(Exception):
            await response.aclose()
    # Drain only when every response is closed: otherwise this would wait for the rest.
    if drain and responses and stream is not None and hasattr(stream, "__aiter__"):
        with contextlib.suppress(Exception):
            async for _ in stream:
                pass
    await close_quietly(stream)
