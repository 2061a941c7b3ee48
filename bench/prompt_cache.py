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
the same fakes in this one run.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, RecordedRequest, Turn  # noqa: E402

from loom.llm.catalog import model_info  # noqa: E402

MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-5",
    "openai": "openai:gpt-5",
    "google": "google:gemini-2.5-flash",
}
READS = 40
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
    tree: Path, name: str, project: Path, home: Path, window: int | None
) -> tuple[list[RecordedRequest], float | None]:
    with FakeLlmServer(survey(project)) as server:
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


def measure(tree: Path, name: str, project: Path, home: Path, window: int | None = None) -> Session:
    requests, reported = run_session(tree, name, project, home, window)
    provider, model_id = MODELS[name].split(":", 1)
    info = model_info(provider, model_id)
    read_price = info.cache_read_price_per_mtok or info.input_price_per_mtok
    write_price = info.cache_write_price_per_mtok or info.input_price_per_mtok
    billed_input = uncached_input = output = 0.0
    total = read = 0
    for index, request in enumerate(requests):
        assert request.billed is not None, f"{name}: request {index} failed"
        prompt, out = request.billed
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
        calls=len(requests),
        share=read / total if total else 0.0,
        billed_input=billed_input,
        uncached_input=uncached_input,
        billed=billed_input + output,
        reported=reported,
        cuts=cuts(requests),
        mean_input=total / max(1, len(requests) - 1),
        mean_new=(total - read) / max(1, len(requests) - 1),
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
    reported = "unknown" if session.reported is None else f"${session.reported:.3f}"
    gap = (
        f"{(session.reported - session.billed) / session.billed * 100:+.1f}%"
        if session.reported is not None and session.billed
        else "n/a"
    )
    print(
        f"  {label:<7} calls {session.calls:3d}  cached {session.share * 100:5.1f}%  "
        f"input ${session.billed_input:6.3f} vs ${session.uncached_input:6.3f} uncached "
        f"({saving:4.1f}x)  cuts {session.cuts}  reported {reported} vs billed "
        f"${session.billed:.3f} ({gap})  per call {session.mean_input:,.0f} tokens, "
        f"{session.mean_new:,.0f} not from cache"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", type=Path, help="a tree with src/ (default: main's)")
    parser.add_argument("--after", type=Path, default=ROOT, help="default: this tree")
    parser.add_argument("--providers", default=",".join(MODELS))
    parser.add_argument(
        "--window", type=int, default=60_000, help="max_context_tokens of the overflow session"
    )
    parser.add_argument("--no-overflow", action="store_true")
    parser.add_argument("--no-survey", action="store_true", help="the overflowing session only")
    parser.add_argument("--map-tokens", type=int, default=1024, help="[repo] map_tokens")
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
            for label, tree in trees.items():
                if not args.no_survey:
                    show(label, measure(tree, name, project, work / f"home-{label}-{name}"))
            if args.no_overflow:
                continue
            print(f"  overflowing: max_context_tokens = {args.window}")
            for label, tree in trees.items():
                home = work / f"home-{label}-{name}-over"
                show(label, measure(tree, name, project, home, args.window))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
