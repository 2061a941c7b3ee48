"""How a list names the project each thread belongs to (`loom list`, `loom search`, the
web's history): stdlib only, `loom list` answers before pydantic loads."""

from __future__ import annotations


def project_labels(roots: list[str | None]) -> dict[str | None, str]:
    """A short name per project root for a list: its folder name, or the whole path
    (home as ~) where two shown roots share a folder name; "-" for none recorded."""
    import os

    names: dict[str, set[str]] = {}
    for root in roots:
        if root:
            names.setdefault(os.path.basename(root.rstrip("/")) or root, set()).add(root)
    home = os.path.expanduser("~").rstrip("/")
    labels: dict[str | None, str] = {None: "-", "": "-"}
    for name, same in names.items():
        for root in same:
            if len(same) == 1:
                labels[root] = name
            elif home and (root == home or root.startswith(home + "/")):
                labels[root] = "~" + root[len(home) :]
            else:
                labels[root] = root
    return labels
