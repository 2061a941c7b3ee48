"""A package's names that load their module at first use (PEP 562), so importing the
package does not import everything it offers."""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `loom list` must not import typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_attributes(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """The package's module `__getattr__`: `exports` maps a name to the module defining
    it; a name once loaded is kept in `namespace` (the package's globals)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
