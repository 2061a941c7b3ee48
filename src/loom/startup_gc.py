"""The cyclic garbage collector paused while a face that runs sessions starts.

Start-up imports ~1,200 modules (Loom's and the LLM SDK's) and builds their classes,
config and tool set: objects that live as long as the process. The collector would walk
them again and again while they pile up (~200 young, ~20 middle and one full collection
before `loom run`'s first model request, ~0.08 s of CPU; more for the REPL, `loom web`
and `loom acp`, which import more). `pause()` turns collection off for the start-up;
`resume()` moves everything built so far to the permanent generation (`gc.freeze`:
later collections skip it) and turns collection back on. The Workspace resumes when its
first session is assembled; a face that starts no session within GRACE_S (a web page
nobody opened) resumes then, so a long-lived process never runs without a collector.

Only the console script pauses (`loom.__main__.main()` without arguments): a process
that calls `main([...])` itself (the tests) keeps its collector as it is.
"""

from __future__ import annotations

import gc
import threading

GRACE_S = 10.0

_lock = threading.Lock()
_paused = False


def pause(grace_s: float = GRACE_S) -> None:
    global _paused
    with _lock:
        if _paused or not gc.isenabled():
            return
        gc.disable()
        _paused = True
    timer = threading.Timer(grace_s, resume)
    timer.daemon = True
    timer.start()


def resume() -> None:
    """Collection back on, start-up's objects frozen; nothing when pause() did not
    turn it off (or it is already back on)."""
    global _paused
    with _lock:
        if not _paused:
            return
        _paused = False
        gc.freeze()
        gc.enable()


def is_paused() -> bool:
    return _paused
