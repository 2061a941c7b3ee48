"""`loom web` figures, each with a baseline measured in the same run (never asserted).

    .venv/bin/python bench/web_bench.py [--sessions 20] [--observers 4] [--threads 10000]

1. Event latency, session bus -> browser DOM (the page stamps each event when its DOM
   update is done; the server stamps it when the bus delivers it): p50/p95 with
   `--sessions` sessions streaming at once in one `loom web` process, watched by
   `--observers` Chromium tabs; baseline: one session streaming, one tab. Also the
   cores `loom web`, Chromium, the bench itself and the rest of the machine kept busy
   meanwhile: on a small machine the tabs and the server compete for the same cores.
   Each event's time is split in legs: bus -> the server hands its frame to the socket
   (a sitecustomize wraps `loom.web.stream._frame`), -> the page's script sees the
   frame, -> the DOM is updated; with the legs of the slowest 5%, the sidebar
   refreshes the tabs got, and the browser's CPU per event (every Chromium process, and
   the renderers' script / layout / style from CDP's Performance metrics).
   `--repeat N [--before DIR]`: N runs of the many-sessions case, alternating with the
   tree DIR/src (`git archive`), medians of both. `LOOM_BENCH_TRACE=PATH`: a Chromium
   trace of the first tab; `LOOM_BENCH_DUMP=PATH`: every event's stamps as JSON.
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


# The server's side of each event: a sitecustomize wraps `loom.web.stream._frame` (called
# right before a frame is handed to the socket) to note the frame's id and the time.
TRACE_HOOK = """
import os, time
_path = os.environ.get("LOOM_BENCH_FRAMES")
if _path:
    import importlib.abc, sys
    _out = open(_path, "a", buffering=1)  # line by line: SIGTERM may skip atexit

    def _wrap(module):
        frame = module._frame
        def traced(data, seq=None):
            if seq is not None:
                _out.write(f"{seq} {time.time() * 1000:.3f}\\n")
            return frame(data, seq)
        module._frame = traced

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "loom.web.stream":
                return None
            sys.meta_path.remove(self)
            import importlib.util
            spec = importlib.util.find_spec(name)
            sys.meta_path.insert(0, self)
            loader = spec.loader
            run = loader.exec_module
            def exec_module(module):
                run(module)
                _wrap(module)
            loader.exec_module = exec_module
            return spec
    sys.meta_path.insert(0, _Finder())
"""

# The page's side: when each frame reached the page's script (its `message` event), seen
# before app.js's own listener runs; app.js stamps the DOM update itself (loomLatencies).
ARRIVAL_HOOK = """
window.loomArrivals = [];
window.loomSidebar = [0, 0];  // sidebar refreshes received, ms of script they took
const _add = EventSource.prototype.addEventListener;
Object.defineProperty(EventSource.prototype, "onmessage", {
  set(fn) {
    _add.call(this, "message", (e) => {
      const at = performance.timeOrigin + performance.now();
      fn.call(this, e);
      const done = performance.timeOrigin + performance.now();
      const data = JSON.parse(e.data);
      if (!Array.isArray(data) && data.type === "live_sessions") {
        window.loomSidebar[0] += 1;
        window.loomSidebar[1] += done - at;
      }
      for (const p of Array.isArray(data) ? data : [data]) {
        if (p.t) window.loomArrivals.push([Number(e.lastEventId), p.t, at, done]);
      }
    });
  },
});
"""


def latency(
    pw: Any, sessions: int, observers: int, chunks: int, delay: float, src: Path | None = None
) -> tuple[list[float], dict[str, Any]]:
    base = Path(tempfile.mkdtemp(prefix="loom-webbench-"))
    hook = base / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(TRACE_HOOK)
    frames_path = base / "frames.txt"
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "LOOM_BENCH_FRAMES")}
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(hook), *([str(src)] if src is not None else [])]
    )
    os.environ["LOOM_BENCH_FRAMES"] = str(frames_path)
    try:
        with FakeLlmServer(
            default=Turn(text=[f"w{i} " for i in range(chunks)], chunk_delay=delay)
        ) as server:
            web = start_web(make_project(base), server, base / "home")
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            detail: dict[str, Any] = {}
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
                        page.add_init_script(ARRIVAL_HOOK)
                        page.goto(f"{web.base}/s/{sid}?token={web.token}")
                        page.wait_for_function("window.loomLatencies !== undefined")
                        page.evaluate("window.loomLatencies.length = 0")
                        page.evaluate("window.loomArrivals.length = 0")
                        cdp = page.context.new_cdp_session(page)
                        cdp.send("Performance.enable")
                        pages.append((page, cdp))
                    metrics_before = [_metrics(cdp) for _, cdp in pages]
                    trace = os.environ.get("LOOM_BENCH_TRACE")  # a Chromium trace of tab 1
                    if trace:
                        browser.start_tracing(page=pages[0][0], path=trace, screenshots=False)
                    before = cpu_seconds(web.process.pid)
                    for sid in ids:
                        http.post(f"/api/sessions/{sid}/messages", json={"text": "stream"})
                    _wait_idle(http, ids, started=True)
                    after = cpu_seconds(web.process.pid)
                    cpu = cpu_share(before, after)
                    if trace:
                        browser.stop_tracing()
                samples: list[float] = []
                arrivals: list[list[float]] = []
                renderer: dict[str, float] = {}
                sidebar = [0.0, 0.0]
                for (page, cdp), start in zip(pages, metrics_before, strict=True):
                    page.wait_for_timeout(200)
                    samples += page.evaluate("window.loomLatencies")
                    arrivals += page.evaluate("window.loomArrivals")
                    got = page.evaluate("window.loomSidebar")
                    sidebar = [sidebar[0] + got[0], sidebar[1] + got[1]]
                    for key, value in _metrics(cdp).items():
                        renderer[key] = renderer.get(key, 0.0) + value - start.get(key, 0.0)
                detail = {
                    "cpu": cpu,
                    "chromium_s": after.get("chromium", 0) - before.get("chromium", 0),
                    "web_s": after.get("loom web", 0) - before.get("loom web", 0),
                    "renderer": renderer,
                    "arrivals": arrivals,
                    "sidebar": sidebar,
                }
            finally:
                browser.close()
                stop(web)
        detail["frames"] = _read_frames(frames_path)
        if os.environ.get("LOOM_BENCH_DUMP"):  # every event's stamps, for a closer look
            Path(os.environ["LOOM_BENCH_DUMP"]).write_text(json.dumps(detail))
        return samples, detail
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(base, ignore_errors=True)


def _metrics(cdp: Any) -> dict[str, float]:
    """The renderer's own time, seconds: tasks, script, layout, style (CDP Performance)."""
    wanted = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")
    got = cdp.send("Performance.getMetrics")["metrics"]
    return {m["name"]: m["value"] for m in got if m["name"] in wanted}


def _read_frames(path: Path) -> dict[int, float]:
    """Frame id -> when the server handed it to the socket (epoch ms)."""
    frames: dict[int, float] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            seq, at = line.split()
            frames[int(seq)] = float(at)
    return frames


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
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--observers", type=int, default=4)
    parser.add_argument("--chunks", type=int, default=150)
    parser.add_argument("--chunk-delay", type=float, default=0.02)
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--repeat", type=int, default=1, help="latency: runs of the many-sessions case"
    )
    parser.add_argument(
        "--before", default="", help="latency: also run DIR/src, alternating with this tree"
    )
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


def breakdown(detail: dict[str, Any]) -> str:
    """Where an event's time went: bus -> the server hands its frame to the socket ->
    the page's script sees the frame -> the DOM is updated; p50/p95 of each leg, and the
    legs of the slowest 5% of events (which leg makes the tail)."""
    frames = detail.get("frames", {})
    legs = []
    for seq, t, at, done in detail.get("arrivals", []):
        written = frames.get(int(seq))
        if written is not None:
            legs.append((written - t, at - written, done - at, done - t))
    if not legs:
        return "   (no frame trace)"
    total = [leg[3] for leg in legs]
    cut = pct(total, 0.95)
    tail = [leg for leg in legs if leg[3] >= cut]
    refreshes, script_ms = detail.get("sidebar", [0, 0])
    names = ("server (bus -> socket)", "wire + page queue", "page script")
    lines = [f"   legs over {len(legs)} events, p50 / p95 / mean of the slowest 5%:"]
    for i, name in enumerate(names):
        values = [leg[i] for leg in legs]
        tail_mean = statistics.fmean(leg[i] for leg in tail)
        p50, p95 = pct(values, 0.5), pct(values, 0.95)
        lines.append(f"     {name:24} {p50:6.1f} / {p95:6.1f} / {tail_mean:6.1f} ms")
    lines.append(
        f"   sidebar refreshes received by the tabs: {refreshes:.0f}, "
        f"{script_ms:.0f} ms of page script in all"
    )
    return "\n".join(lines)


def renderer_line(detail: dict[str, Any], events: int) -> str:
    """Browser CPU per event: every Chromium process, and the renderers' own split."""
    per = 1000 / max(events, 1)
    r = detail.get("renderer", {})
    return (
        f"   browser CPU per event: {detail.get('chromium_s', 0) * per:.2f} ms all Chromium "
        f"processes; renderer main threads {r.get('TaskDuration', 0) * per:.2f} ms "
        f"(script {r.get('ScriptDuration', 0) * per:.2f}, layout "
        f"{r.get('LayoutDuration', 0) * per:.2f}, "
        f"style {r.get('RecalcStyleDuration', 0) * per:.2f}); "
        f"loom web CPU per event {detail.get('web_s', 0) * per:.2f} ms"
    )


def report_latency(pw: Any, args: Any) -> None:
    if args.repeat > 1 or args.before:
        return report_latency_pairs(pw, args)
    one, _ = latency(pw, 1, 1, args.chunks, args.chunk_delay)
    many, detail = latency(pw, args.sessions, args.observers, args.chunks, args.chunk_delay)
    cpu = detail.get("cpu", {})
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
    print(breakdown(detail))
    print(renderer_line(detail, len(many)))
    print(f"   load average now: {os.getloadavg()[0]:.1f}")


def report_latency_pairs(pw: Any, args: Any) -> None:
    """`--repeat N [--before DIR]`: N runs of the many-sessions case, this tree and
    (alternating with it, so both see the same load) DIR/src; medians."""
    trees: list[tuple[str, Path | None]] = [("after", None)]
    if args.before:
        trees.append(("before", Path(args.before) / "src"))
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
    for i in range(args.repeat):
        for name, src in trees if i % 2 == 0 else trees[::-1]:
            load = os.getloadavg()[0]
            many, detail = latency(
                pw, args.sessions, args.observers, args.chunks, args.chunk_delay, src
            )
            r = detail.get("renderer", {})
            per = 1000 / max(len(many), 1)
            row = {
                "p50": pct(many, 0.5),
                "p95": pct(many, 0.95),
                "chromium": detail.get("chromium_s", 0) * per,
                "task": r.get("TaskDuration", 0) * per,
                "web": detail.get("web_s", 0) * per,
                "load": load,
            }
            runs[name].append(row)
            print(
                f"   {name:6} run {i + 1}: n={len(many)} p50={row['p50']:.1f} "
                f"p95={row['p95']:.1f} ms; CPU per event: Chromium {row['chromium']:.2f}, "
                f"renderer tasks {row['task']:.2f}, loom web {row['web']:.2f} ms; "
                f"load {load:.1f}"
            )
            print(breakdown(detail))
    med = statistics.median
    print(f"1. event latency bus -> DOM, {args.sessions} sessions, {args.observers} tabs, medians:")
    for name, rows in runs.items():
        each = ", ".join(f"{r['p95']:.1f}" for r in rows)
        print(
            f"   {name:6} p50 {med(r['p50'] for r in rows):.1f}, "
            f"p95 {med(r['p95'] for r in rows):.1f} ms (runs: "
            f"{each}); CPU per event: "
            f"Chromium {med(r['chromium'] for r in rows):.2f}, renderer tasks "
            f"{med(r['task'] for r in rows):.2f}, loom web {med(r['web'] for r in rows):.2f} ms; "
            f"load {min(r['load'] for r in rows):.1f}-{max(r['load'] for r in rows):.1f}"
        )


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
