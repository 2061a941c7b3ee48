"""Who may talk to `loom web`: token, Host, Origin; no secret in any page."""

from __future__ import annotations

import httpx

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.web.conftest import WebServer


def client(web: WebServer, **headers: str) -> httpx.Client:
    return httpx.Client(base_url=web.base, headers=headers, timeout=20)


def authed(web: WebServer, **headers: str) -> httpx.Client:
    jar = {f"loom_token_{web.port}": web.token}
    return httpx.Client(base_url=web.base, headers=headers, cookies=jar, timeout=20)


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
        pages = [browser.get(p).text for p in ("/", "/cost", started["url"], "/code.css",
                                               "/api/threads", "/api/files")]
        for text in pages:
            assert "sk-test-secret-key" not in text
