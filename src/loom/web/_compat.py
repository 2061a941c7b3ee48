"""The one place the web face learns where the Workspace comes from.

The Workspace (issue 8) is the session API's front door. Until it lands in
`loom.session`, `_interim` offers the few names the page uses with the same signatures;
when it lands, this import picks the real one and `_interim` can be deleted.
"""

from __future__ import annotations

try:  # the real front door
    from loom.session import LoomError, SessionSpec, Workspace  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - until issue 8 lands
    from loom.web._interim import LoomError, SessionSpec, Workspace

__all__ = ["LoomError", "SessionSpec", "Workspace"]
