"""`loom web` figures, each with a baseline measured in the same run (never asserted).

    .venv/bin/python bench/web_bench.py [--sessions 20] [--observers 4] [--threads 10000]

1. Event latency, session bus -> browser DOM (the page stamps each event when its DOM
   update is done; the server stamps it when the bus delivers it): p50/p95 with
   `--sessions` sessions streaming at once in one `loom web` process, watched by
   `--observers` Chromium tabs; baseline: one session streaming, one tab. Also the
   cores `loom web`, Chromium, the bench itself and the rest of the machine kept busy
   meanwhile: on a small machine the tabs and the server compete for the same cores.
2. First page weight (HTML + CSS + JS, uncompressed) and time to first paint after
   `loom web` starts (process start -> URL printed -> first contentful paint);
   baseline: `python -m loom --version`.
3. History sidebar on `--threads` threads: first page and a search, server time (the
   Server-Timing header), medians; baseline: the same Workspace calls without HTTP
   or HTML (ws.threads.list / .search in this process).

Runs against the fake LLM server (tests/fakes) and Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

import httpx  # noqa: E402
from tests.fakes.llm_server import FakeLlmServer, Turn  # noqa: E402
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, start_web  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def make_project(base: Path) -> Path:
    project = base / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "main.py").write_text("print('hi')\n")
    return project


def client(web: Any) -> httpx.Client:
    return httpx.Client(
        base_url=web.base,
        cookies={f"loom_token_{web.port}": web.token},
        headers={"origin": web.base},
        timeout=60,
    )


def stop(web: Any) -> None:
    web.process.terminate()
    try:
        web.process.wait(20)
    except subprocess.TimeoutExpired:
        web.process.kill()


# -- 1. latency ---------------------------------------------------------------------------


def latency(
    pw: Any, sessions: int, observers: int, chunks: int, delay: float
) -> tuple[list[float], dict[str, float]]:
    base = Path(tempfile.mkdtemp(prefix="loom-webbench-"))
    try:
        with FakeLlmServer(
            default=Turn(text=[f"w{i} " for i in range(chunks)], chunk_delay=delay)
        ) as server:
            web = start_web(make_project(base), server, base / "home")
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                with client(web) as http:
                    ids = [
                        http.post("/api/sessions", json={"text": "warm up"}).json()["id"]
                        for _ in range(sessions)
                    ]
                    _wait_idle(http, ids)
                    pages = []
                    for sid in ids[:observers]:  # one profile each: own connection pool
                        page = browser.new_context().new_page()
                        page.goto(f"{web.base}/s/{sid}?token={web.token}")
                        page.wait_for_function("window.loomLatencies !== undefined")
                        page.evaluate("window.loomLatencies.length = 0")
                        pages.append(page)
                    before = cpu_seconds(web.process.pid)
                    for sid in ids:
                        http.post(f"/api/sessions/{sid}/messages", json={"text": "stream"})
                    _wait_idle(http, ids, started=True)
                    cpu = cpu_share(before, cpu_seconds(web.process.pid))
                samples: list[float] = []
                for page in pages:
                    page.wait_for_timeout(200)
                    samples += page.evaluate("window.loomLatencies")
            finally:
                browser.close()
                stop(web)
        return samples, cpu
    finally:
        shutil.rmtree(base, ignore_errors=True)


def cpu_seconds(web_pid: int) -> dict[str, float]:
    """CPU seconds used so far by `loom web`, by Chromium (every Chromium process on the
    machine), by this bench (the fake LLM server, Playwright's driver) and by the whole
    machine (Linux /proc; else empty)."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
        used = {"machine": sum(int(f) for i, f in enumerate(fields[:8]) if i not in (3, 4)) / tick}
    except (OSError, ValueError):
        return {}
    used.update({"loom web": 0.0, "chromium": 0.0, "bench": 0.0, "wall": time.monotonic()})
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        seconds = (int(stat[11]) + int(stat[12])) / tick
        if int(entry.name) == web_pid:
            used["loom web"] += seconds
        elif b"chrom" in command:
            used["chromium"] += seconds
        elif int(entry.name) == os.getpid() or b"playwright" in command:
            used["bench"] += seconds
    return used


def cpu_share(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """Cores in use on average between two `cpu_seconds` readings, per part."""
    if not before or not after:
        return {}
    wall = max(after["wall"] - before["wall"], 1e-9)
    share = {k: (after[k] - before[k]) / wall for k in after if k != "wall"}
    share["rest of the machine"] = share.pop("machine") - sum(share.values())
    return share


def _wait_idle(http: httpx.Client, ids: list[str], started: bool = False) -> None:
    """Until every session's turn is over (its page says Ready and nothing streams)."""
    time.sleep(0.5 if started else 0.2)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        html = http.get("/").text
        if html.count("badge-ready") >= len(ids):
            return
        time.sleep(0.25)
    raise SystemExit("sessions did not finish streaming in 5 minutes")


# -- 2. first page --------------------------------------------------------------------------


def first_page(pw: Any, runs: int) -> dict[str, Any]:
    """Process start -> URL printed, then navigation -> first contentful paint (the
    browser is already running: its own start-up is not ours)."""
    ready, paint, total = [], [], []
    weight = 0
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        for _ in range(runs):
            base = Path(tempfile.mkdtemp(prefix="loom-webbench-"))
            try:
                with FakeLlmServer() as server:
                    page = browser.new_context().new_page()
                    started = time.perf_counter()
                    web = start_web(make_project(base), server, base / "home")
                    ready_at = time.perf_counter()
                    try:
                        page.goto(web.url, wait_until="load")
                        fcp = (
                            page.evaluate(
                                "performance.getEntriesByName('first-contentful-paint')[0]"
                                "?.startTime ?? performance.getEntriesByType('navigation')[0]"
                                ".domContentLoadedEventEnd"
                            )
                            / 1000
                        )
                        ready.append(ready_at - started)
                        paint.append(fcp)
                        total.append(ready_at - started + fcp)
                        with client(web) as http:
                            html = http.get("/")
                            assets = [
                                http.get(p).content
                                for p in ("/static/style.css", "/code.css", "/static/app.js")
                            ]
                        weight = len(html.content) + sum(len(a) for a in assets)
                    finally:
                        page.context.close()
                        stop(web)
            finally:
                shutil.rmtree(base, ignore_errors=True)
    finally:
        browser.close()
    version = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "loom", "--version"], check=True, capture_output=True)
        version.append(time.perf_counter() - t)
    return {"bytes": weight, "ready": ready, "paint": paint, "total": total, "version": version}


# -- 3. history on many threads --------------------------------------------------------------


def history(threads: int, runs: int) -> dict[str, Any]:
    from bench.gen_threads_corpus import generate

    base = Path(tempfile.mkdtemp(prefix="loom-webbench-"))
    try:
        home = base / "home"
        generate(home, threads, 10)
        meta = json.loads((home / "corpus.json").read_text())
        env = {**os.environ, "LOOM_HOME": str(home)}
        subprocess.run(
            [sys.executable, "-m", "loom", "list", "-n", "1"],
            env=env,
            check=True,
            capture_output=True,
        )  # build the index once
        project = make_project(base)
        with FakeLlmServer() as server:
            web = start_web(project, server, home)
            try:
                with client(web) as http:
                    page = _server_ms(http, "/api/threads", {}, runs)
                    search = _server_ms(http, "/api/threads", {"q": meta["rare_word"]}, runs)
                    common = _server_ms(http, "/api/threads", {"q": meta["mid_word"]}, runs)
                    deep = _server_ms(http, "/api/threads", {"offset": "5000"}, runs)
            finally:
                stop(web)
        os.environ["LOOM_HOME"] = str(home)
        from loom.session import Workspace

        ws = Workspace.open(cwd=project)
        base_list = _timed(lambda: ws.threads.list(limit=51), runs)
        base_search = _timed(lambda: ws.threads.search(meta["rare_word"], limit=51), runs)
        return {
            "page": page,
            "search": search,
            "common": common,
            "deep": deep,
            "base_list": base_list,
            "base_search": base_search,
            "word": meta["rare_word"],
        }
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _server_ms(http: httpx.Client, path: str, params: dict[str, str], runs: int) -> list[float]:
    out = []
    for _ in range(runs + 1):
        response = http.get(path, params=params)
        response.raise_for_status()
        out.append(float(response.headers["server-timing"].split("dur=")[1]))
    return out[1:]  # the first one warms caches


def _timed(fn: Any, runs: int) -> list[float]:
    fn()
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--observers", type=int, default=4)
    parser.add_argument("--chunks", type=int, default=150)
    parser.add_argument("--chunk-delay", type=float, default=0.02)
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--only",
        default="latency,first,history",
        help="comma-separated parts to run: latency, first, history",
    )
    args = parser.parse_args()
    parts = set(args.only.split(","))
    os.environ.setdefault("LOOM_ALLOW_MODEL_REQUESTS", "0")
    from playwright.sync_api import sync_playwright

    print(
        f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
        "(other work on this machine shows in every figure below)"
    )
    with sync_playwright() as pw:
        if "latency" in parts:
            report_latency(pw, args)
        if "first" in parts:
            report_first_page(pw, args)
    if "history" in parts:
        report_history(args)


def report_latency(pw: Any, args: Any) -> None:
    one, _ = latency(pw, 1, 1, args.chunks, args.chunk_delay)
    many, cpu = latency(pw, args.sessions, args.observers, args.chunks, args.chunk_delay)
    print(f"1. event latency bus -> DOM, {args.chunks} deltas per turn:")
    print(
        f"   1 session, 1 tab:     n={len(one)} p50={pct(one, 0.5):.1f} ms "
        f"p95={pct(one, 0.95):.1f} ms"
    )
    print(
        f"   {args.sessions} sessions, {args.observers} tabs: n={len(many)} "
        f"p50={pct(many, 0.5):.1f} ms p95={pct(many, 0.95):.1f} ms "
        f"(p95 ratio {pct(many, 0.95) / max(pct(one, 0.95), 1e-9):.1f}x)"
    )
    if cpu:  # a saturated machine shows in every figure above: say who used it
        parts = ", ".join(f"{name} {cores:.2f}" for name, cores in cpu.items())
        print(f"   cores in use while they streamed: {parts} (of {os.cpu_count()})")
    print(f"   load average now: {os.getloadavg()[0]:.1f}")


def report_first_page(pw: Any, args: Any) -> None:
    med = statistics.median
    first = first_page(pw, args.runs)
    print(
        f"2. first page: {first['bytes'] / 1024:.1f} KB (HTML+CSS+JS, uncompressed); "
        f"median over {args.runs} launches: URL printed {med(first['ready']):.2f} s, "
        f"navigation to first paint {med(first['paint']):.2f} s, "
        f"total {med(first['total']):.2f} s "
        f"(baseline `loom --version` {med(first['version']):.2f} s)"
    )
    print(f"   load average now: {os.getloadavg()[0]:.1f}")


def report_history(args: Any) -> None:
    med = statistics.median
    hist = history(args.threads, args.runs * 3)
    print(f"3. history, {args.threads} threads, server time (median of {args.runs * 3}):")
    print(
        f"   first page   {med(hist['page']):.1f} ms (baseline ws.threads.list "
        f"{med(hist['base_list']):.1f} ms)"
    )
    print(f"   page at 5000 {med(hist['deep']):.1f} ms")
    print(
        f"   search rare  {med(hist['search']):.1f} ms (baseline ws.threads.search "
        f"{med(hist['base_search']):.1f} ms)  word={hist['word']!r}"
    )
    print(f"   search mid   {med(hist['common']):.1f} ms")


if __name__ == "__main__":
    main()
