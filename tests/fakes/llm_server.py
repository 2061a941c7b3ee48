"""A wire-level fake LLM server on loopback, for testing the real SDKs and `loom run`.

It speaks three formats, picked by request path:

- Anthropic Messages: `POST /v1/messages` (SSE when the body has `"stream": true`)
- OpenAI Chat Completions: `POST /v1/chat/completions` (SSE when `"stream": true`,
  with tool-call argument deltas and a usage chunk when `stream_options.include_usage`)
- OpenAI Responses: `POST /v1/responses` (its event sequence and item order: reasoning,
  the message, the function calls; `tests.fakes.llm_reasoning`)
- Gemini: `POST /v1beta/models/{model}:generateContent` and
  `:streamGenerateContent?alt=sse` (any `/v1*/` version prefix)

Every answer comes from a queue of scripted turns, in order, whatever the format. A turn
(see `tests.fakes.llm_wire.Turn`) is a reply (text and/or tool calls whose arguments
are streamed in several fragments), an HTTP error in the provider's own error shape
(with optional `retry-after`), a garbage body, and may wait `delay` seconds first
(or `stall` seconds after its first streamed chunk), and may think (`thinking`: streamed
when the request turns reasoning on; the rules the real APIs enforce about reasoning
sent back are enforced too, see `tests.fakes.llm_reasoning`). When
the queue is empty the server answers 400 "script exhausted", unless a `default` turn
was given. A conversation can have its own queue, picked by the text of its first user
message (a sub-agent's brief, say): `server.for_first_message("find the auth code",
Turn(...), ...)` answers every request whose first user message contains that text
from that queue, in order; other requests take the main queue. Every request is
recorded (method, path, query, headers, JSON body, arrival time), in order, including
the ones answered with errors.

In-process (pytest):

    from tests.fakes.llm_server import FakeLlmServer, Turn, FakeToolCall

    with FakeLlmServer([Turn(text="Reading it."),
                        Turn(tool_calls=[FakeToolCall("file_read", {"path": "a.py"})]),
                        Turn(status=429, retry_after=0.01),
                        Turn(garbage="<html>oops")]) as server:
        server.base_url            # "http://127.0.0.1:PORT" (random free port)
        server.anthropic_base_url  # = base_url (the SDK appends /v1/messages)
        server.openai_base_url     # base_url + "/v1"
        server.google_base_url     # = base_url (the SDK appends /v1beta/models/...)
        server.add(Turn(text="more"))  # append turns at any time
        server.requests            # list[RecordedRequest]: .path, .json, .headers, .at

Subprocess (end-to-end tests of `loom run`):

    python -m tests.fakes.llm_server --port 0 --script turns.json [--record requests.jsonl]

prints `LISTENING http://127.0.0.1:PORT` on stdout once it accepts connections, then
serves until killed (SIGTERM/SIGINT). The script file is JSON: a list of turns, or
`{"turns": [...], "default": {...}}`; a turn is an object with the `Turn` fields, e.g.
`{"text": "hi"}`, `{"tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]}`,
`{"error": {"status": 429, "message": "slow down", "retry_after": 1}}`,
`{"garbage": "not json"}`, `{"delay": 0.5, "text": "late"}`, `{"text": ["a", "b"],
"chunk_delay": 0.2}` (a pause between streamed chunks), or
`{"turns": [...], "by_first_message": {"find the auth code": [turns...]}}`. `--record` appends one
JSON line per request as it arrives (see `RecordedRequest.to_dict`). Control endpoints,
for tests that prefer HTTP: `GET /_fake/requests` (the recording), `POST /_fake/turns`
(append a list of turns), `GET /_fake/health`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes import llm_reasoning as reasoning
from tests.fakes.llm_wire import (
    FakeToolCall,
    Rendered,
    Turn,
    render_anthropic,
    render_error,
    render_garbage,
    render_google,
    render_openai,
)
from tests.fakes.prompt_cache import CacheRuleError, PromptCaches, PromptUsage

__all__ = ["FakeLlmServer", "FakeToolCall", "RecordedRequest", "Turn", "load_script"]

# How often the serving loop looks for stop(): stop() waits up to this long, once per test.
_POLL = 0.005

_GEMINI_PATH = re.compile(r"^/v1[a-z0-9]*/models/(?P<model>[^:/]+):(?P<method>\w+)$")


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    json: Any
    at: float  # time.time() when the request line arrived
    format: str  # "anthropic", "openai", "responses", "google" or "control"/"unknown"
    stream: bool = False
    raw: bytes = field(default=b"", repr=False)  # the body's bytes as they arrived
    # what the answer's usage said: the prompt's tokens (cached ones among them) and the
    # output tokens; None for a refused or failed request
    billed: tuple[PromptUsage, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["raw"]
        return data


@dataclass
class _State:
    turns: list[Turn]
    default: Turn | None
    record_path: Path | None
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    served: int = 0
    # first-message text -> that conversation's own queue (sub-agents' briefs)
    by_first_message: dict[str, list[Turn]] = field(default_factory=dict)
    caches: PromptCaches = field(default_factory=PromptCaches)  # each provider's rules

    def next_turn(self, first_message: str = "") -> Turn | None:
        with self.lock:
            for key, queue in self.by_first_message.items():
                if key in first_message:
                    if queue:
                        self.served += 1
                        return queue.pop(0)
                    return Turn(
                        status=400,
                        error_message=(f"fake llm server: the script for {key!r} is exhausted"),
                    )
            if self.turns:
                self.served += 1
                return self.turns.pop(0)
            return self.default

    def record(self, request: RecordedRequest) -> None:
        with self.lock:
            self.requests.append(request)
            if self.record_path is not None:
                with self.record_path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(request.to_dict()) + "\n")


def first_user_text(fmt: str, body: Any) -> str:
    """The text of the request's first user message, whatever the wire format."""
    if not isinstance(body, dict):
        return ""
    if fmt == "google":
        for content in body.get("contents") or []:
            if content.get("role", "user") == "user":
                return "".join(str(p.get("text", "")) for p in content.get("parts") or [])
        return ""
    for message in body.get("messages") or body.get("input") or []:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))
    return ""


def _classify(path: str) -> tuple[str, str | None]:
    """(format, gemini model or None) for a request path."""
    if path.endswith("/messages"):
        return "anthropic", None
    if path.endswith("/chat/completions"):
        return "openai", None
    if path.endswith("/responses"):
        return "responses", None
    match = _GEMINI_PATH.match(path)
    if match and match["method"] in ("generateContent", "streamGenerateContent"):
        return "google", match["model"]
    if path.startswith("/_fake/"):
        return "control", None
    return "unknown", None


class _Handler(BaseHTTPRequestHandler):
    server_version = "FakeLLM/1.0"
    state: _State  # set on the subclass made per server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/_fake/requests":
            with self.state.lock:
                data = [r.to_dict() for r in self.state.requests]
            self._send(
                Rendered(200, {"content-type": "application/json"}, [json.dumps(data).encode()])
            )
        elif path == "/_fake/health":
            self._send(Rendered(200, {"content-type": "application/json"}, [b'{"ok": true}']))
        else:
            self._send(Rendered(404, {"content-type": "text/plain"}, [b"not found"]))

    def do_POST(self) -> None:
        arrived = time.time()
        parts = urlsplit(self.path)
        raw = self._read_body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        fmt, gemini_model = _classify(parts.path)
        query = parse_qs(parts.query)
        if fmt == "control" and parts.path == "/_fake/turns":
            with self.state.lock:
                self.state.turns.extend(Turn.from_dict(t) for t in body or [])
            self._send(Rendered(200, {"content-type": "application/json"}, [b'{"ok": true}']))
            return
        stream = (
            gemini_model is not None and "stream" in parts.path.rsplit(":", 1)[-1].lower()
        ) or (isinstance(body, dict) and bool(body.get("stream")))
        recorded = RecordedRequest(
            "POST",
            parts.path,
            query,
            {k.lower(): v for k, v in self.headers.items()},
            body,
            arrived,
            fmt,
            stream,
            raw,
        )
        self.state.record(recorded)
        if fmt in ("unknown", "control"):
            self._send(
                Rendered(
                    404,
                    {"content-type": "application/json"},
                    [json.dumps({"error": f"no such path {parts.path}"}).encode()],
                )
            )
            return
        # what the real API refuses, refused the same way (no scripted turn is used up)
        refused = _RULES[fmt](body) if isinstance(body, dict) else None
        if refused is not None:
            self._send(refused)
            return
        try:  # the provider's caching rules too
            cache, commit = self.state.caches.account(fmt, body, gemini_model or "")
        except CacheRuleError as exc:
            self._send(render_error(fmt, Turn(status=400, error_message=str(exc))))
            return
        turn = self.state.next_turn(first_user_text(fmt, body))
        if turn is None:
            exhausted = Turn(
                status=400,
                error_message=(
                    f"fake llm server: script exhausted after {self.state.served} turns"
                ),
            )
            self._send(render_error(fmt, exhausted))
            return
        if turn.delay:
            time.sleep(turn.delay)
        if turn.status < 400 and turn.garbage is None:
            commit()
            recorded.billed = turn.usage(cache)
        self._send(
            self._render(
                turn, fmt, body, stream, gemini_model, cache, self.headers.get("anthropic-beta", "")
            ),
            pause=turn.chunk_delay if stream else 0.0,
            stall=turn.stall,
        )

    def _render(
        self,
        turn: Turn,
        fmt: str,
        body: Any,
        stream: bool,
        gemini_model: str | None,
        cache: PromptUsage,
        beta: str = "",
    ) -> Rendered:
        if turn.status >= 400:
            return render_error(fmt, turn)
        if turn.garbage is not None:
            return render_garbage(turn, stream)
        body = body if isinstance(body, dict) else {}
        if fmt == "anthropic":
            lead = (
                reasoning.anthropic_thinking_events(turn, body),
                reasoning.anthropic_thinking_blocks(turn, body),
                reasoning.anthropic_thinking_tokens(turn, body),
            )
            between = reasoning.anthropic_between(turn, body, beta)
            return render_anthropic(turn, str(body.get("model", "")), stream, cache, lead, between)
        if fmt == "openai":
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return render_openai(turn, str(body.get("model", "")), stream, cache, include_usage)
        if fmt == "responses":
            return reasoning.render_responses(turn, body, stream, cache)
        thoughts = reasoning.google_thought_parts(turn, body)
        return render_google(turn, gemini_model or "", stream, cache, thoughts)

    def _send(self, rendered: Rendered, pause: float = 0.0, stall: float = 0.0) -> None:
        self.send_response(rendered.status)
        for name, value in rendered.headers.items():
            self.send_header(name, value)
        self.send_header("connection", "close")
        if not rendered.headers.get("content-type", "").startswith("text/event-stream"):
            self.send_header("content-length", str(sum(len(c) for c in rendered.chunks)))
        self.end_headers()
        try:
            for index, chunk in enumerate(rendered.chunks):
                if pause and index:
                    time.sleep(pause)
                self.wfile.write(chunk)
                self.wfile.flush()
                if index == 0 and stall:
                    time.sleep(stall)  # headers and a first event, then nothing
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeouts, cancelled streams): nothing to do
        self.close_connection = True


_RULES = {
    "anthropic": reasoning.anthropic_rules,
    "openai": reasoning.chat_rules,
    "responses": reasoning.responses_rules,
    "google": reasoning.google_rules,
}


class FakeLlmServer:
    """The fake server; a context manager that runs it in a background thread."""

    def __init__(
        self,
        turns: list[Turn] | None = None,
        *,
        default: Turn | None = None,
        port: int = 0,
        record_path: Path | None = None,
        by_first_message: dict[str, list[Turn]] | None = None,
    ) -> None:
        self._state = _State(
            list(turns or []),
            default,
            record_path,
            by_first_message={k: list(v) for k, v in (by_first_message or {}).items()},
        )
        handler = type("Handler", (_Handler,), {"state": self._state})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    anthropic_base_url = base_url
    google_base_url = base_url

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def remaining_turns(self) -> int:
        with self._state.lock:
            return len(self._state.turns)

    def add(self, *turns: Turn) -> None:
        with self._state.lock:
            self._state.turns.extend(turns)

    def for_first_message(self, text: str, *turns: Turn) -> None:
        """Answer the conversation whose first user message contains `text` with `turns`
        (in order), whatever the main queue holds."""
        with self._state.lock:
            self._state.by_first_message.setdefault(text, []).extend(turns)

    def start(self) -> FakeLlmServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": _POLL}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=_POLL)

    def __enter__(self) -> FakeLlmServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def load_script(path: Path) -> tuple[list[Turn], Turn | None, dict[str, list[Turn]]]:
    """Read a script file: a JSON list of turns or {"turns": [...], "default": {...},
    "by_first_message": {"text": [...]}}."""
    found = json.loads(path.read_text(encoding="utf-8"))
    data: dict[str, Any] = {"turns": found} if isinstance(found, list) else found
    turns = [Turn.from_dict(turn) for turn in data.get("turns", [])]
    default = Turn.from_dict(data["default"]) if data.get("default") else None
    by_first = {
        key: [Turn.from_dict(t) for t in queue]
        for key, queue in (data.get("by_first_message") or {}).items()
    }
    return turns, default, by_first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.llm_server",
        description="Scripted fake LLM server on 127.0.0.1.",
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--script", type=Path, help="JSON file of scripted turns")
    parser.add_argument("--record", type=Path, help="append each request as a JSON line")
    args = parser.parse_args(argv)
    turns, default, by_first = load_script(args.script) if args.script else ([], None, {})
    server = FakeLlmServer(
        turns, default=default, port=args.port, record_path=args.record, by_first_message=by_first
    )
    print(f"LISTENING {server.base_url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    raise SystemExit(main())
