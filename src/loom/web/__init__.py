"""`loom web`: the local web face of Loom, a live workspace in the browser.

FastAPI + Jinja2 rendered on the server, Server-Sent Events from the session bus,
Markdown and code highlighting on the server, one hand-written ES module (static/app.js).
It imports only `loom.session` (the Workspace), `loom.config` and `loom.core` types.

    from loom.web.server import serve
    await serve(workspace, "127.0.0.1", 4200, open_browser=False)
"""
