"""How much of each request the providers' prompt caches serve, before and after a change.

    .venv/bin/python bench/prompt_cache.py [--before TREE] [--providers anthropic,openai,google]

The survey session (issue 38): `loom run` in a copy of `src/` (the repo map on) where the
model reads 40 modules one after another with file_read, then answers: 41 calls. Against
the fake providers of tests/fakes, which apply each provider's documented caching rules
(tests/fakes/prompt_cache.py) and report what they served in their usage fields, it
prints per provider and tree:

- the cached share of the input tokens of calls 2..41;
- the session's input cost as the provider would bill it (cache reads and writes at the
  catalog's prices) against the same tokens uncached, and the cost Loom itself reported
  (`-o json` total_cost_usd) against the bill (input and output);
- the same for a session whose history overflows the window (`[context]
  max_context_tokens`), with how many times its history was cut.

`--before` is a tree to compare (default: `main`'s `src/`, exported with git archive),
`--after` the tree under test (default: this one); both run the same sessions against
the same fakes in this one run. Beside them, the peers modelled (`peer`): the same
conversation (Loom's tool results and answers) sent with Claude Code's 28.7k-token
prefix on Anthropic and Codex's 9.7k on OpenAI, billed by the same fakes; and a general
sub-agent's first call, served from its parent's cache or not (`subagent`).

Measured 2026-12-02 (before: the context block re-sent in full on every call; after:
the block kept in the history where it was sent, a new one only with what changed, the
map when its files moved; Anthropic's 4th breakpoint on it; sub-agents on the parent's
prefix). Cached share of calls 2..41, billed cost of the whole session:

    survey        anthropic             openai                google
    loom before   93.1%  $0.784         93.0%  $0.315         93.1%  $0.074
    loom after    95.4%  $0.713         95.3%  $0.284         95.4%  $0.067
    peer (model)  97.3%  $1.082 Claude  95.9%  $0.312 Codex   -
    bound         95.6%                 95.4%
    overflowing (40k window, history cut 2-3 times)
    loom before   86.3%  $0.701         84.0%  $0.291         84.2%  $0.068
    loom after    88.1%  $0.642         87.8%  $0.244         88.1%  $0.057
    peer (model)  94.7%  $1.011         90.7%  $0.271         -
    sub-agent's first call read from the parent's cache: 0 -> 2,848 / 2,944 / 2,876 tokens

Loom's reported cost is within 0.0% / +0.2% / +1.4% of the bill (the fakes' reasoning
tokens). The share is bounded by the arithmetic, not by the prefix: each call adds a
file of ~1.6k tokens that no client can have cached (the peer's own not-from-cache
tokens a call), which is 4.4% of Loom's ~38k-token calls and 2.7% of Claude Code's
~62k; Loom is within 0.2 points of that bound and bills less than either peer.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fakes.llm_server import (  # noqa: E402
    FakeLlmServer,
    FakeToolCall,
    RecordedRequest,
    Turn,
    first_user_text,
)
from tests.fakes.prompt_cache import PromptCaches, PromptUsage  # noqa: E402

from loom.llm.catalog import model_info  # noqa: E402

MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-5",
    "openai": "openai:gpt-5",
    "google": "google:gemini-2.5-flash",
}
READS = 40
WINDOW = 40_000  # the overflowing session's window: its history is cut 2-3 times
MAP_TOKENS = [1024]  # --map-tokens


@dataclass
class Session:
    calls: int
    share: float  # cached share of the input tokens of calls 2..
    billed_input: float  # dollars, as billed with the cache
    uncached_input: float  # the same tokens at the full input price
    billed: float  # input and output, as billed
    reported: float | None  # what Loom said the session cost
    cuts: int  # requests whose history does not extend the one before
    mean_input: float  # tokens per call (calls 2..)
    mean_new: float  # of which not read from the cache (uncached and written)


def modules(project: Path) -> list[str]:
    found = sorted(p.relative_to(project).as_posix() for p in project.rglob("*.py"))
    return [p for p in found if "__pycache__" not in p][:READS]


def survey(project: Path) -> list[Turn]:
    turns = [Turn(tool_calls=[FakeToolCall("file_read", {"path": p})]) for p in modules(project)]
    return [*turns, Turn(text="These modules make up Loom's core: " + "word " * 40)]


def run_session(
    tree: Path,
    name: str,
    project: Path,
    home: Path,
    window: int | None,
    script: list[Turn] | None = None,
    children: dict[str, list[Turn]] | None = None,
) -> tuple[list[RecordedRequest], float | None]:
    with FakeLlmServer(script or survey(project)) as server:
        for brief, turns in (children or {}).items():
            server.for_first_message(brief, *turns)
        env = {
            **os.environ,
            "PYTHONPATH": str(tree / "src"),
            "LOOM_HOME": str(home),
            "LOOM_ALLOW_MODEL_REQUESTS": "0",
            "LOOM_MAP_TOKENS": str(MAP_TOKENS[0]),
            "ANTHROPIC_API_KEY": "sk-bench",
            "OPENAI_API_KEY": "sk-bench",
            "GEMINI_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "OPENAI_BASE_URL": server.openai_base_url,
            "GOOGLE_GEMINI_BASE_URL": server.google_base_url,
        }
        config = home / "config" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        limits = f"max_context_tokens = {window}\n" if window else ""
        config.write_text(f"[context]\ncompaction = false\n{limits}")
        prompt = "Read the first 40 modules one after another, then say what they do."
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "loom",
                "run",
                "-p",
                prompt,
                "--yes",
                "-o",
                "json",
                "-m",
                MODELS[name],
            ],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"{tree} {name}: loom run failed\n{done.stderr[-3000:]}")
        reported = json.loads(done.stdout).get("total_cost_usd")
        return list(server.requests), reported


def measure(
    tree: Path, name: str, project: Path, home: Path, window: int | None = None
) -> tuple[Session, list[RecordedRequest]]:
    requests, reported = run_session(tree, name, project, home, window)
    bills = []
    for index, request in enumerate(requests):
        assert request.billed is not None, f"{name}: request {index} failed"
        bills.append(request.billed)
    return price(name, bills, reported, cuts(requests)), requests


def price(
    name: str, bills: list[tuple[PromptUsage, int]], reported: float | None, cut: int
) -> Session:
    """A session's figures from what each of its requests was billed."""
    provider, model_id = MODELS[name].split(":", 1)
    info = model_info(provider, model_id)
    read_price = info.cache_read_price_per_mtok or info.input_price_per_mtok
    write_price = info.cache_write_price_per_mtok or info.input_price_per_mtok
    billed_input = uncached_input = output = 0.0
    total = read = 0
    for index, (prompt, out) in enumerate(bills):
        billed_input += (
            prompt.uncached * info.input_price_per_mtok
            + prompt.read * read_price
            + prompt.write * write_price
        ) / 1e6
        uncached_input += prompt.total * info.input_price_per_mtok / 1e6
        output += out * info.output_price_per_mtok / 1e6
        if index:
            total += prompt.total
            read += prompt.read
    return Session(
        calls=len(bills),
        share=read / total if total else 0.0,
        billed_input=billed_input,
        uncached_input=uncached_input,
        billed=billed_input + output,
        reported=reported,
        cuts=cut,
        mean_input=total / max(1, len(bills) - 1),
        mean_new=(total - read) / max(1, len(bills) - 1),
    )


def cuts(requests: list[RecordedRequest]) -> int:
    """Requests whose conversation is not the previous one's plus more (history cut)."""
    found = 0
    for before, after in pairwise(requests):
        old, new = _items(before), _items(after)
        if old[: max(0, len(old) - 3)] != new[: max(0, len(old) - 3)]:
            found += 1
    return found


def _items(request: RecordedRequest) -> list[str]:
    body = request.json
    key = next(k for k in ("messages", "input", "contents") if k in body)
    return [json.dumps(item, sort_keys=True) for item in body[key]]


def export_main(into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "main", "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def show(label: str, session: Session) -> None:
    saving = session.uncached_input / session.billed_input if session.billed_input else 0.0
    reported = "" if session.reported is None else f"reported ${session.reported:.3f}"
    if session.reported is not None and session.billed:
        reported += f" ({(session.reported - session.billed) / session.billed * 100:+.1f}%)"
    print(
        f"  {label:<13} cached {session.share * 100:5.1f}%  billed ${session.billed:6.3f}  "
        f"(input ${session.billed_input:6.3f} vs ${session.uncached_input:6.3f} uncached, "
        f"{saving:4.1f}x)  {reported:<24} calls {session.calls}, cuts {session.cuts}, per call "
        f"{session.mean_input:,.0f} tokens, {session.mean_new:,.0f} not from cache"
    )


# -- the peers, modelled: their fixed prefix, the same conversation, the same fakes ---------

PEERS = {  # provider -> (who, tokens of the first request of the survey: issue 38)
    "anthropic": ("Claude Code", 28_700),
    "openai": ("Codex", 9_700),
}
CONTEXT_START = "<loom-context>"
EPHEMERAL = {"type": "ephemeral"}


def peer(name: str, requests: list[RecordedRequest]) -> Session:
    """The session Loom had (the same conversation: the same tool results and answers) as
    the peer sends it: its fixed prefix, sized so the first request has the tokens the
    issue measured, in place of Loom's tools and system text; none of Loom's context
    blocks; its cache fields (Claude Code: a breakpoint on its system text and on the
    newest message; Codex: `prompt_cache_key`). Billed by the same fake caches."""
    conversations = [_conversation(r.format, r.json) for r in requests]
    fmt, model = requests[0].format, requests[0].json.get("model", "")
    empty = _peer_body(fmt, model, "", conversations[0])
    size = PEERS[name][1] - PromptCaches().account(fmt, empty)[0].total
    text = ("Peer instructions, tools and reminders. " * (size // 10 + 1))[: size * 4]
    caches = PromptCaches()
    bills = []
    for request, conversation in zip(requests, conversations, strict=True):
        usage, commit = caches.account(fmt, _peer_body(fmt, model, text, conversation))
        commit()
        assert request.billed is not None
        bills.append((usage, request.billed[1]))  # the same answers: the same output
    return price(name, bills, None, cuts(requests))


def _conversation(fmt: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's conversation without Loom's context blocks and cache marks."""
    if fmt == "anthropic":
        found = []
        for message in body["messages"]:
            blocks = [
                {k: v for k, v in block.items() if k != "cache_control"}
                for block in message["content"]
                if not str(block.get("text", "")).startswith(CONTEXT_START)
            ]
            if blocks:
                found.append({**message, "content": blocks})
        return found
    key = "input" if fmt == "responses" else "messages"
    return [
        item
        for item in body[key]
        if item.get("role") != "system"
        and not (isinstance(item.get("content"), str) and item["content"].startswith(CONTEXT_START))
    ]


def _peer_body(
    fmt: str, model: str, text: str, conversation: list[dict[str, Any]]
) -> dict[str, Any]:
    if fmt == "anthropic":
        messages = [dict(m) for m in conversation]
        last = messages[-1]["content"]
        messages[-1]["content"] = [*last[:-1], {**last[-1], "cache_control": EPHEMERAL}]
        system = [{"type": "text", "text": text or ".", "cache_control": EPHEMERAL}]
        return {"model": model, "system": system, "messages": messages}
    if fmt == "responses":
        return {"model": model, "instructions": text, "input": conversation,
                "prompt_cache_key": "peer"}  # fmt: skip
    system = [{"role": "system", "content": text}]
    return {"model": model, "messages": [*system, *conversation], "prompt_cache_key": "peer"}


# -- a sub-agent after its parent's first calls ------------------------------------------

CHILD_BRIEF = "Read the next three modules and say what they hold"


def subagent(tree: Path, name: str, project: Path, home: Path) -> tuple[int, int, Session]:
    """A parent that reads three modules, then runs a general sub-agent that reads three
    more: (the child's first request in tokens, of which read from the cache, the
    child's calls as a session)."""
    files = modules(project)
    reads = [Turn(tool_calls=[FakeToolCall("file_read", {"path": p})]) for p in files[:3]]
    task = FakeToolCall("task", {"description": "read on", "prompt": CHILD_BRIEF})
    script = [*reads, Turn(tool_calls=[task]), Turn(text="Done.")]
    child = [Turn(tool_calls=[FakeToolCall("file_read", {"path": p})]) for p in files[3:6]]
    children = {CHILD_BRIEF: [*child, Turn(text="They hold the core types.")]}
    requests, _ = run_session(tree, name, project, home, None, script, children)
    mine = [r for r in requests if CHILD_BRIEF in first_user_text(r.format, r.json)]
    bills = [r.billed for r in mine if r.billed is not None]
    first = bills[0][0]
    return first.total, first.read, price(name, bills, None, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", type=Path, help="a tree with src/ (default: main's)")
    parser.add_argument("--after", type=Path, default=ROOT, help="default: this tree")
    parser.add_argument("--providers", default=",".join(MODELS))
    parser.add_argument(
        "--window", type=int, default=WINDOW, help="max_context_tokens of the overflow session"
    )
    parser.add_argument("--no-overflow", action="store_true")
    parser.add_argument("--no-survey", action="store_true", help="the overflowing session only")
    parser.add_argument("--map-tokens", type=int, default=1024, help="[repo] map_tokens")
    parser.add_argument("--no-subagent", action="store_true")
    args = parser.parse_args()
    MAP_TOKENS[0] = args.map_tokens
    work = Path(tempfile.mkdtemp(prefix="loom-prompt-cache-"))
    try:
        before = args.before.resolve() if args.before else export_main(work / "before")
        trees = {"before": before, "after": args.after.resolve()}
        project = work / "project"
        # src/ inside the project: `python -m loom` run there must not import its copy
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / "src", project / "src", ignore=ignore)
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        subprocess.run(["git", "add", "-A"], cwd=project, check=True)
        subprocess.run(
            ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "src"],
            cwd=project,
            check=True,
        )
        print(
            f"survey: {READS} file_reads + an answer in a copy of src/ "
            f"(repo map {args.map_tokens} tokens)"
        )
        for name in args.providers.split(","):
            print(f"{name} ({MODELS[name]})")
            sessions = [("survey", None)] * (not args.no_survey)
            sessions += [(f"overflowing (window {args.window:,})", args.window)] * (
                not args.no_overflow
            )
            for title, window in sessions:
                print(f" {title}")
                requests: list[RecordedRequest] = []
                session = None
                for label, tree in trees.items():
                    home = work / f"home-{label}-{name}-{window}"
                    session, requests = measure(tree, name, project, home, window)
                    show(f"loom {label}", session)
                if name in PEERS and session is not None:  # modelled on the last tree's run
                    modelled = peer(name, requests)
                    show(f"{PEERS[name][0]} (model)", modelled)
                    # what any client sends new per call (the file read, the answer) bounds
                    # the share a prefix of Loom's size can reach
                    bound = 1 - modelled.mean_new / session.mean_input
                    print(
                        f"  bound: {modelled.mean_new:,.0f} tokens a call are new for the "
                        f"peer too -> at most {bound * 100:.1f}% cached for Loom's "
                        f"{session.mean_input:,.0f}-token calls"
                    )
            if args.no_subagent:
                continue
            for label, tree in trees.items():
                home = work / f"home-{label}-{name}-child"
                total, read, child = subagent(tree, name, project, home)
                print(
                    f"  sub-agent {label}: first call {total:,} tokens, {read:,} read from "
                    f"the parent's cache; its {child.calls} calls {child.share * 100:.1f}% "
                    f"cached (calls 2..), billed ${child.billed:.4f}"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
