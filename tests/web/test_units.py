"""The web face's parts without a browser: the guard, safe rendering, the live hub's
replay, cost sums. Synchronous on purpose: the session's Playwright keeps an event loop
running in this thread, so asyncio tests here would not start."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import pytest

from loom.core.events import NewMessage, SessionStatus, TextDeltaEvent
from loom.core.messages import AssistantMessage, Usage, UserMessage
from loom.web.cards import chat_items, usage_totals
from loom.web.cost import CostCache
from loom.web.live import Hub
from loom.web.render import diff_html, markdown, snippet_html, unified_diff
from loom.web.security import Guard

if TYPE_CHECKING:
    from loom.session import Session


def test_guard_host_origin_token() -> None:
    guard = Guard("127.0.0.1", 4200, token="t0k")
    assert guard.host_ok("127.0.0.1:4200") and guard.host_ok("localhost:4200")
    assert not guard.host_ok("127.0.0.1:4201") and not guard.host_ok("evil.test:4200")
    assert not guard.host_ok(None)
    assert guard.origin_ok("http://localhost:4200")
    assert not guard.origin_ok("http://evil.test:4200") and not guard.origin_ok("null")
    assert not guard.origin_ok("https://127.0.0.1:4200") and not guard.origin_ok(None)
    assert guard.token_ok("t0k") and not guard.token_ok("t0K") and not guard.token_ok(None)
    assert guard.url() == "http://127.0.0.1:4200/?token=t0k"
    other = Guard("192.168.1.5", 80, token="x")
    assert other.allowed_hosts() == {"192.168.1.5:80"}
    import socket

    everywhere = Guard("0.0.0.0", 8080, token="x")  # --host 0.0.0.0: this machine's names
    assert everywhere.host_ok(f"{socket.gethostname()}:8080".lower())
    assert everywhere.host_ok("127.0.0.1:8080") and not everywhere.host_ok("evil.test:8080")


def test_another_host_is_announced_loudly() -> None:
    from loom.web.server import warning_for

    assert warning_for("127.0.0.1") is None and warning_for("::1") is None
    warning = warning_for("0.0.0.0")
    assert warning is not None and "ONLY protection" in warning


def test_a_taken_port_says_what_to_do(tmp_path: Any) -> None:
    import socket
    import subprocess
    import sys

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "loom", "web", "--no-open", "--port", str(port)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        taken.close()
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr


def test_markdown_never_runs_raw_html() -> None:
    html = markdown("hi <script>alert(1)</script> [x](javascript:alert(1)) **b**")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html
    assert "<strong>b</strong>" in html
    code = markdown("```python\nx = 1\n```")
    assert 'class="code hl"' in code and "<span" in code


def test_diff_and_snippet_rendering_escape() -> None:
    diff = unified_diff("a.html", "<b>old</b>\n", "<i>new</i>\n")
    html = diff_html(diff)
    assert '<span class="d-del">-&lt;b&gt;old&lt;/b&gt;</span>' in html
    assert '<span class="d-add">+&lt;i&gt;new&lt;/i&gt;</span>' in html
    assert snippet_html("a **<b>** c") == "a <mark>&lt;b&gt;</mark> c"


def test_usage_totals_split_the_last_turn() -> None:
    messages = [
        UserMessage(content="one"),
        AssistantMessage(content="a", usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.1)),
        UserMessage(content="two"),
        AssistantMessage(content="b", usage=Usage(input_tokens=1, output_tokens=2, cost_usd=0.01)),
    ]
    totals = usage_totals(messages)
    assert totals["tokens"] == 18 and totals["turn_tokens"] == 3
    assert totals["cost"] == pytest.approx(0.11) and totals["turn_cost"] == pytest.approx(0.01)
    assert totals["cache"] == ""  # nothing came from a prompt cache
    assert [item.kind for item in chat_items(messages)] == ["user", "assistant"] * 2


def test_usage_totals_count_the_prompt_cache() -> None:
    cached = Usage(input_tokens=60, cache_read_tokens=930, cache_write_tokens=10, output_tokens=5)
    messages = [UserMessage(content="one"), AssistantMessage(content="a", usage=cached)]
    totals = usage_totals(messages)
    assert totals["tokens"] == 1005 and totals["cache"] == "cache 93%"


def test_an_unknown_price_is_unknown_never_zero() -> None:
    from loom.web.views import format_money

    messages = [
        UserMessage(content="one"),
        AssistantMessage(content="a", usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.1)),
        UserMessage(content="two"),
        AssistantMessage(content="b", usage=Usage(input_tokens=1, output_tokens=2, cost_usd=None)),
    ]
    totals = usage_totals(messages)
    assert totals["cost"] is None and totals["turn_cost"] is None and totals["tokens"] == 18
    assert format_money(None) == "unknown" and format_money(0.0) == "$0.00"
    assert usage_totals(messages[:2])["cost"] == pytest.approx(0.1)


class FakeSession:
    def __init__(self) -> None:
        self.id = "S1"
        self.listeners: list[Any] = []
        self.thread = SimpleNamespace(messages=[], parent_thread_id=None)
        self.project_root = None
        self.pending_permission = None
        self.todos: list[Any] = []  # the agent's todo list (Session.todos)
        self.tools = None  # its ToolRegistry (None: calls shown as the built-ins show them)

    def subscribe(self, callback: Any) -> Any:
        self.listeners.append(callback)
        return lambda: self.listeners.remove(callback)

    def publish(self, event: Any) -> None:
        if getattr(event, "type", "") == "new_message":
            self.thread.messages.append(event.message)
        for listener in self.listeners:
            listener(event)


def as_session(fake: FakeSession) -> Session:
    """The fake where the hub takes a Session: it has the parts the hub uses."""
    return cast("Session", fake)


def test_hub_replays_exactly_what_a_render_missed() -> None:
    hub = Hub()
    session = FakeSession()
    live = hub.add(as_session(session))
    session.publish(SessionStatus(session_id="S1", status="thinking"))
    for word in ("one ", "two "):
        session.publish(TextDeltaEvent(session_id="S1", text=word))
    rendered_at = live.last_seq  # a page render includes everything so far
    assert live.partial == "one two "
    session.publish(TextDeltaEvent(session_id="S1", text="three"))
    reply = AssistantMessage(content="one two three")
    session.publish(NewMessage(session_id="S1", message=reply))
    from loom.web.live import Client

    client = Client()
    backlog, complete = live.attach(client, rendered_at)
    assert complete
    kinds = [json.loads(data)["type"] for _, data in backlog]
    assert kinds == ["delta", "message"]  # nothing the render had, nothing lost
    assert live.partial == ""
    session.publish(TextDeltaEvent(session_id="S1", text="next"))
    seq, data = client.queue.get_nowait()
    assert seq == live.last_seq and json.loads(data)["text"] == "next"
    live.detach(client)


def test_an_sse_frame_is_one_event_whatever_the_text() -> None:
    from loom.web.stream import _frame

    data = json.dumps({"type": "delta", "text": "a\nb\r\nc\u2028d"}, ensure_ascii=False)
    assert _frame(data, 7) == f"id: 7\ndata: {data}\n\n".encode()
    assert _frame(data).split(b"\n") == [b"data: " + data.encode(), b"", b""]


def test_hub_asks_for_a_reload_when_too_much_was_missed() -> None:
    from loom.web import live as live_module
    from loom.web.live import Client

    hub = Hub()
    session = FakeSession()
    live = hub.add(as_session(session))
    live.log = live_module.deque(maxlen=3)
    for i in range(6):
        session.publish(TextDeltaEvent(session_id="S1", text=str(i)))
    _, complete = live.attach(Client(), 1)
    assert not complete


def test_cost_report_per_model_day_and_session() -> None:
    def thread(thread_id: str, model: str, day: str, cost: float | None) -> Any:
        usage = Usage(input_tokens=100, output_tokens=10, cost_usd=cost)
        message = AssistantMessage(
            content="x", usage=usage, model=model, created_at=f"{day}T10:00:00Z"
        )
        return SimpleNamespace(
            id=thread_id,
            messages=[message],
            provider="anthropic",
            model=model,
            created_at=f"{day}T09:00:00Z",
            metadata=SimpleNamespace(title=thread_id),
        )

    threads = {
        "A": thread("A", "claude-sonnet-4-6", "2026-11-20", 0.5),
        "B": thread("B", "claude-haiku-4-5", "2026-11-21", 0.1),
    }
    summaries = [SimpleNamespace(id=k, version=1, last_activity_at="2026") for k in threads]
    loads: list[str] = []

    def load(ref: str) -> Any:
        loads.append(ref)
        return threads[ref]

    cache = CostCache()
    report = cache.report(summaries, load)
    assert report.cost == pytest.approx(0.6) and report.tokens == 220
    assert [r.name for r in report.by_model] == [
        "anthropic:claude-sonnet-4-6",
        "anthropic:claude-haiku-4-5",
    ]
    assert [r.name for r in report.by_day] == ["2026-11-21", "2026-11-20"]
    assert [r.id for r in report.by_session] == ["A", "B"]
    cache.report(summaries, load)
    assert loads == ["A", "B"]  # unchanged versions are not read again

    threads["C"] = thread("C", "my-local-model", "2026-11-21", None)
    summaries.append(SimpleNamespace(id="C", version=1, last_activity_at="2026"))
    report = cache.report(summaries, load)
    assert report.cost is None  # unknown, not $0.60
    by_day = {r.name: r.cost for r in report.by_day}
    assert by_day["2026-11-21"] is None and by_day["2026-11-20"] == pytest.approx(0.5)


def test_retries_errors_and_sync_problems_become_notices() -> None:
    from loom.core.events import LlmRetry, SessionError, SyncError
    from loom.web.payloads import payload_for

    live = Hub().add(as_session(FakeSession()))
    retry = payload_for(
        live, LlmRetry(session_id="S1", attempt=2, delay_seconds=1.5, error="529 overloaded")
    )
    assert retry == {
        "type": "notice",
        "level": "warn",
        "text": "The model call failed (529 overloaded); retry 2 in 1.5 s.",
    }
    sync = payload_for(
        live, SyncError(session_id="S1", thread_id="T-1", message="server refused the token")
    )
    assert sync is not None and sync["level"] == "warn" and "server refused" in sync["text"]
    error = payload_for(live, SessionError(session_id="S1", origin="Llm", message="bad key"))
    assert error is not None and error["level"] == "error" and "bad key" in error["text"]


def test_changes_since_the_start_include_new_files_and_preview_stays_inside(
    tmp_path: Any,
) -> None:
    import subprocess

    from loom.web.project import ProjectPathError, changes, preview

    root = tmp_path / "p"
    root.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=root,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    git("init", "-q")
    (root / "a.py").write_text("x = 1\n")
    git("add", "-A")
    git("commit", "-qm", "start")
    base = git("rev-parse", "HEAD").strip()
    (root / "a.py").write_text("x = 2\n")
    (root / "new.txt").write_text("hello\n")
    (root / "mine.txt").write_text("the person's own, untracked\n")
    from types import SimpleNamespace

    from loom.core.messages import AssistantMessage, ToolCall

    edits = [
        ToolCall(id="c1", tool_name="file_edit", arguments_json={"path": "a.py"}),
        ToolCall(id="c2", tool_name="file_write", arguments_json={"path": "new.txt"}),
    ]
    thread = SimpleNamespace(git_initial_commit_sha=base,
                             messages=[AssistantMessage(content="", tool_calls=edits)])  # fmt: skip
    files, problem = changes(root, thread)
    assert problem is None
    by_path = {f.path: f for f in files}
    assert set(by_path) == {"a.py", "new.txt"}  # not mine.txt: the session never touched it
    assert (by_path["a.py"].added, by_path["a.py"].removed) == (1, 1)
    assert by_path["new.txt"].added == 1 and "+hello" in by_path["new.txt"].html
    no_start = SimpleNamespace(git_initial_commit_sha=None, messages=[])
    assert changes(root, no_start)[1] is not None  # no starting commit: says why

    (tmp_path / "secret.txt").write_text("outside")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    for bad in ("../secret.txt", "link.txt", "/etc/passwd", "missing.py"):
        with pytest.raises(ProjectPathError):
            preview(root, bad)
    assert "x" in preview(root, "a.py")


def test_compaction_and_restores_become_notices() -> None:
    from loom.core.events import ContextCompacted, ConversationRewound, FilesRestored
    from loom.web.payloads import payload_for

    live = Hub().add(as_session(FakeSession()))
    summarised = payload_for(
        live,
        ContextCompacted(
            session_id="S1",
            summarised_messages=12,
            model="m",
            tokens_before=9000,
            tokens_after=2000,
        ),
    )
    assert summarised is not None and "12 older message(s) summarised" in summarised["text"]
    fallback = payload_for(live, ContextCompacted(session_id="S1", fallback="could not"))
    assert fallback is not None and fallback["level"] == "warn"
    undone = payload_for(live, FilesRestored(session_id="S1", action="undo", paths=["a.py"]))
    assert undone == {"type": "notice", "level": "info", "text": "Undo: restored a.py"}
    rewound = payload_for(live, ConversationRewound(session_id="S1", hidden_messages=4))
    assert rewound is not None and "4 message(s) set aside" in rewound["text"]


def test_an_attachment_the_model_cannot_take_is_one_plain_notice(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Not "The turn failed" with a traceback in the log: the person's input, said plainly."""
    import asyncio
    import threading

    from loom.core.images import ImageError

    said = "openai-compatible:qwen does not take images, so the image was not sent"

    class NoImages(FakeSession):
        async def send_message(self, text: str, images: Any = None) -> str:
            raise ImageError(said)

    live = Hub().add(as_session(NoImages()))
    # its own thread: Playwright keeps an event loop running in this one
    worker = threading.Thread(target=lambda: asyncio.run(live._send("see @shot.png")))
    worker.start()
    worker.join()
    notice = json.loads(live.log[-1][1])
    assert (notice["type"], notice["level"], notice["text"]) == ("notice", "error", said)
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
