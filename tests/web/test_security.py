"""Who may talk to `loom web`: token, Host, Origin; no secret in any page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.loom_cli import provider_env
from tests.support.web import WebServer, authed


def client(web: WebServer, **headers: str) -> httpx.Client:
    return httpx.Client(base_url=web.base, headers=headers, timeout=20)


def test_without_the_token_everything_is_401(web: WebServer) -> None:
    with client(web) as anonymous:
        for path in ("/", "/cost", "/static/app.js", "/api/threads", "/events"):
            response = anonymous.get(path)
            assert response.status_code == 401, path
            assert "token" in response.text
        assert anonymous.get("/?token=wrong").status_code == 401
        headers = {"cookie": f"loom_token_{web.port}=wrong"}
        assert anonymous.get("/", headers=headers).status_code == 401


def test_the_token_becomes_a_strict_httponly_cookie(web: WebServer) -> None:
    with client(web) as browser:
        response = browser.get(f"/?token={web.token}")
        assert response.status_code == 303 and response.headers["location"] == "/"
        cookie = response.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert web.token not in response.headers["location"]
        page = browser.get("/")  # the cookie now carries it
        assert page.status_code == 200 and "Loom" in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]


def test_a_wrong_host_is_refused(web: WebServer) -> None:
    with authed(web) as browser:
        for host in ("evil.example", f"evil.example:{web.port}", "127.0.0.1:1"):
            response = browser.get("/", headers={"host": host})
            assert response.status_code == 421, host
        assert browser.get("/", headers={"host": f"localhost:{web.port}"}).status_code == 200


def test_cross_origin_posts_are_refused(web: WebServer, server: FakeLlmServer) -> None:
    body = {"text": "rm -rf everything"}
    with authed(web) as browser:
        for origin in ("http://evil.example", f"http://evil.example:{web.port}", "null"):
            response = browser.post("/api/sessions", json=body, headers={"origin": origin})
            assert response.status_code == 403, origin
        assert browser.post("/api/sessions", json=body).status_code == 403  # no Origin
        assert server.requests == []  # nothing reached a model
        server.add(Turn(text="ok"))
        same = browser.post("/api/sessions", json={"text": "hi"}, headers={"origin": web.base})
        assert same.status_code == 200, same.text


def test_bad_bodies_say_what_to_send(web: WebServer) -> None:
    with authed(web, origin=web.base) as browser:
        response = browser.post("/api/sessions", content=b"{not json")
        assert response.status_code == 400 and "send JSON like" in response.json()["error"]
        response = browser.post("/api/sessions", json={"text": ""})
        assert response.status_code == 400 and "text" in response.json()["error"]
        response = browser.post("/api/sessions/nope/permission", json={"action": "yes"})
        assert response.status_code in (400, 404)
        response = browser.post("/api/sessions", json={"text": "x", "model": "nope"})
        assert response.status_code == 400 and "provider" in response.json()["error"].lower()


def test_no_secret_reaches_a_page(web: WebServer, server: FakeLlmServer) -> None:
    server.add(Turn(text="hello"))
    with authed(web, origin=web.base) as browser:
        started = browser.post("/api/sessions", json={"text": "hi"}).json()
        pages = [
            browser.get(p).text
            for p in ("/", "/cost", started["url"], "/code.css", "/api/threads", "/api/files")
        ]
        for text in pages:
            assert "sk-test-secret-key" not in text


def test_the_browser_is_opened_without_the_token_on_its_command_line(
    browser: Any, project: Path, server: FakeLlmServer, loom_home: Path, tmp_path: Path
) -> None:
    # A process's arguments are readable by every local user (/proc/PID/cmdline).
    recorder = tmp_path / "browser.sh"
    argv_file = tmp_path / "argv.txt"
    recorder.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {argv_file}\n')
    recorder.chmod(0o755)
    env = {
        **os.environ,
        **provider_env(server),
        "LOOM_HOME": str(loom_home),
        "BROWSER": f"{recorder} %s",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "loom", "web", "--port", "0"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        printed = next(line for line in process.stdout if "Loom is ready at" in line)
        token = printed.split("token=", 1)[1].strip()
        deadline = time.monotonic() + 30
        while not argv_file.exists() or not argv_file.read_text():
            assert time.monotonic() < deadline, "the browser was not started"
            time.sleep(0.05)
        (argument,) = argv_file.read_text().split()
        assert token not in argument and argument.startswith("file://")
        launch_page = Path(argument.removeprefix("file://"))
        assert launch_page.stat().st_mode & 0o077 == 0  # only this user can read the token
        assert launch_page.parent.stat().st_mode & 0o077 == 0
        context = browser.new_context()
        tab = context.new_page()
        tab.goto(argument)  # what the browser does with it: on to the page, signed in
        tab.wait_for_url(re.compile(r"^http://127\.0\.0\.1:\d+/$"))
        expect(tab.get_by_role("textbox", name="Message")).to_be_visible()
        context.close()
    finally:
        process.terminate()
        process.wait(15)
    assert not launch_page.exists()  # removed when loom web stops
