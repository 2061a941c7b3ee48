"""The cyclic garbage collector paused while `loom run` starts.

Start-up imports ~1,200 modules (Loom's and the LLM SDK's) and builds their classes,
config and tool set: objects that live as long as the process. The collector would walk
them again and again while they pile up (~200 young, ~20 middle and one full collection
before the first model request, ~0.08 s of CPU). `pause()` turns collection off for the
start-up; `resume()`, once the session is assembled, moves everything built so far to
the permanent generation (`gc.freeze`: later collections skip it) and turns it back on.

Only the console script pauses (`loom.__main__.main()` without arguments): a process
that calls `main([...])` itself (the tests) keeps its collector as it is.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Collection back on, start-up's objects frozen; nothing when pause() did not
    turn it off."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def is_paused() -> bool:
    return _paused
