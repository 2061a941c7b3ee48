"""The harness's costs (issue 22), each beside a baseline measured in the same run:

1. tokens of the fixed system prompt (family text + environment block) and of the tool
   specs a session sends, per model family (tests/prompts/test_fixed_budget.py keeps
   the sum under 3,000); baseline: the five-line prompt it replaced;
2. the environment block's latency (one `git status`) on Django's tree (the sdist that
   bench/repomap_django.py makes a git repo) and on Loom's; baseline: `git rev-parse HEAD`,
   the cheapest git call, and the status Loom already ran at session start;
3. web_fetch of a 2 MB HTML page from a loopback server: time and memory; baselines: a
   plain httpx GET of the same page, and the HTML-to-Markdown conversion alone.

    .venv/bin/python bench/harness_bench.py [--repeat 5] [--no-django]
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import os
import statistics
import sys
import threading
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from loom.llm.tokens import estimate_tokens  # noqa: E402
from loom.prompts import FAMILIES, base_prompt, build_system_prompt, detect_environment  # noqa: E402

OLD_PROMPT = """\
You are Loom, a coding assistant working in the project at /home/ana/proj.
Use the tools to read, search, edit and run code; do not guess file contents. Make the
smallest change that does the job, keep the project's style, and say briefly what you
changed and why. When a tool returns an error, read it and correct the call. Ask the
user when a request is ambiguous or a step is risky."""


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def tool_spec_tokens() -> tuple[int, int, str]:
    """(built-in tools' specs, a whole session's tool set) in tokens, as the context
    window counts them, and the largest specs of the session's set. The session's set is
    what `Workspace.confined_tools` gives every session: with the sandbox, the shell's
    description says its limits and it takes `network`."""
    from loom.config import load_config
    from loom.llm.tokens import estimate_tool_specs_tokens
    from loom.session import Workspace
    from loom.tools.defaults import builtin_registry

    builtin = estimate_tool_specs_tokens(builtin_registry(ROOT).specs())
    _, _, registry = Workspace(load_config(ROOT)).confined_tools(ROOT, "bench")
    full = estimate_tool_specs_tokens(registry.specs())
    each = sorted(((estimate_tool_specs_tokens([s]), s.name) for s in registry.specs()),
                  reverse=True)  # fmt: skip
    return builtin, full, ", ".join(f"{name} {n}" for n, name in each[:6])


def prompt_tokens() -> None:
    env = detect_environment(ROOT, sandbox="run sandboxed (bubblewrap)", network="off")
    env_tokens = estimate_tokens(env.render())
    builtin, full, largest = tool_spec_tokens()
    print("1. system prompt and tool specs (estimated tokens)")
    print(f"   baseline: the old five-line prompt        {estimate_tokens(OLD_PROMPT):>6}")
    print(f"   environment block (this repo)             {env_tokens:>6}")
    print(f"   tool specs: built-in tools                {builtin:>6}")
    print(f"   tool specs: a whole session's tool set    {full:>6}")
    print(f"   largest: {largest}")
    for family in FAMILIES:
        fixed = estimate_tokens(build_system_prompt(family, env))
        base = estimate_tokens(base_prompt(family))
        print(f"   {family:<10} prompt {base:>5} + env = fixed {fixed:>5}; "
              f"with the session's tools {fixed + full:>6}")  # fmt: skip


def environment_latency(repeat: int, django: bool) -> None:
    from loom.gitmeta import detect_repo_status, run_git

    trees = [("loom", ROOT)]
    if django:
        from repomap_django import ensure_django

        trees.insert(0, ("django", ensure_django()))
    print("2. environment block latency (median ms)")
    for name, tree in trees:
        files = sum(1 for _ in tree.rglob("*") if ".git" not in _.parts)
        detect_environment(tree)  # warm the OS caches first, as a real session is
        rev = median_ms(lambda t=tree: run_git(t, "rev-parse", "HEAD"), repeat)
        status = median_ms(lambda t=tree: detect_repo_status(t), repeat)
        env = median_ms(lambda t=tree: detect_environment(t), repeat)
        print(f"   {name} ({files:,} files): baseline git rev-parse {rev:6.1f}; "
              f"session-start status (already paid) {status:6.1f}; "
              f"environment block {env:6.1f}")  # fmt: skip


def _page(size: int) -> bytes:
    section = (
        "<h2>Section {i}</h2><p>Some <b>text</b> with <a href='/p/{i}'>a link</a> and "
        "<code>inline()</code> code, repeated to look like documentation.</p>"
        "<pre><code class='language-python'>def f{i}(x):\n    return x * {i}\n</code></pre>"
        "<ul><li>one</li><li>two</li></ul><script>track({i})</script>"
    )
    parts = ["<html><head><title>Big</title><style>p{margin:0}</style></head><body>"]
    total, i = 0, 0
    while total < size:
        chunk = section.format(i=i)
        parts.append(chunk)
        total += len(chunk)
        i += 1
    parts.append("</body></html>")
    return "".join(parts).encode()


def web_fetch_cost(repeat: int) -> None:
    import httpx

    from loom.tools.base import ToolContext
    from loom.tools.web_fetch import WebFetch, html_to_markdown

    body = _page(2_000_000)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/big"
    tool = WebFetch(ROOT, allow_hosts=["127.0.0.1"])
    ctx = ToolContext(project_root=ROOT)

    async def fetch() -> str:
        return (await tool.run({"url": url, "max_length": 100_000}, ctx)).content

    def plain_get() -> None:
        httpx.get(url, timeout=30).raise_for_status()

    text = asyncio.run(fetch())  # warm up (imports)
    plain = median_ms(plain_get, repeat)
    convert = median_ms(lambda: html_to_markdown(body.decode()), repeat)
    fetched = median_ms(lambda: asyncio.run(fetch()), repeat)
    tracemalloc.start()
    asyncio.run(fetch())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    httpd.shutdown()
    print(f"3. web_fetch of a {len(body) / 1e6:.1f} MB HTML page (median ms of {repeat})")
    print(f"   baseline: plain httpx GET {plain:7.1f}; HTML->Markdown alone {convert:7.1f}")
    print(f"   web_fetch (guard, fetch, convert, cut to 100k chars) {fetched:7.1f}; "
          f"peak Python heap {peak / 1e6:.1f} MB (the Rust converter's own not seen); "
          f"result {len(text):,} chars")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-django", action="store_true")
    options = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}, "
          f"{os.cpu_count()} cores")  # fmt: skip
    prompt_tokens()
    environment_latency(options.repeat, not options.no_django)
    web_fetch_cost(options.repeat)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
