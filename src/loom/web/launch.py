"""Open the browser on `loom web` without putting the token on its command line.

`webbrowser.open(url)` starts the browser with the URL as an argument, and a process's
arguments are readable by every local user (`/proc/PID/cmdline`, `ps`): anyone on the
machine could take the token. The browser is given a page in a private folder instead
(0700 folder, 0600 file) that sends it on to the URL, as Jupyter does. The folder is in
the system temp folder, which sandboxed commands can read (a command the person lets
use the network could then drive Loom with the token), so the server removes the page
as soon as a browser arrives with the token, and after a minute at the latest.
"""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import tempfile
import webbrowser
from pathlib import Path

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8">
<meta http-equiv="refresh" content="0;url={url}">
<title>Opening Loom</title></head>
<body><p>Opening Loom: <a href="{url}">continue</a>.</p></body></html>
"""


class BrowserLaunch:
    """The private page the browser is pointed at; `close()` removes it."""

    def __init__(self, url: str) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="loom-web-"))  # mode 0700
        self.page = self.folder / "open.html"
        fd = os.open(self.page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(_PAGE.format(url=html.escape(url, quote=True)))

    def open(self) -> bool:
        """Start the browser on the page (its command line names only the file)."""
        return webbrowser.open(self.page.as_uri())

    def close(self) -> None:
        with contextlib.suppress(OSError):
            shutil.rmtree(self.folder)
