"""The page `loom web` opens the browser on holds the launch token, in the system temp
folder that sandboxed commands can read (issue 20: nothing of Loom's that a command
could use to reach past the sandbox lies where it can read it longer than needed). It
is removed as soon as the browser arrives with the token."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import httpx

from tests.fakes.llm_server import FakeLlmServer
from tests.support.web import start_web, stop_web, wait_for


def test_the_launch_page_is_removed_once_the_browser_has_the_token(
    server: FakeLlmServer, project: Path, loom_home: Path, tmp_path: Path
) -> None:
    opened = tmp_path / "opened.txt"
    fake = tmp_path / "browser.py"  # a browser that notes the page and does not load it
    fake.write_text(f"import sys\nopen({str(opened)!r}, 'w').write(sys.argv[1])\n")
    web = start_web(project, server, loom_home, browser=f"{sys.executable} {fake} %s")
    try:
        wait_for(opened.exists)
        page = Path(opened.read_text().removeprefix("file://"))
        text = page.read_text()
        assert web.token in text  # the page is there, with the token, until used
        url = re.search(r'url=([^"]+)"', text).group(1).replace("&amp;", "&")  # type: ignore[union-attr]
        arrived = httpx.get(url, follow_redirects=False)
        assert arrived.status_code in (302, 303, 307), arrived.text
        wait_for(lambda: not page.parent.exists())
    finally:
        stop_web(web)
