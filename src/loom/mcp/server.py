"""The MCP server itself: Loom's tools, thread tools and thread resources, with the
permission policy enforced on every call."""

from __future__ import annotations

import json
import logging
from typing import Any

from loom.mcp.approval import approval_question
from loom.session import LoomError, ToolAccess

log = logging.getLogger(__name__)

THREAD_URI = "loom://threads/"
ANSWERS = ("allow_once", "allow_always", "deny")

THREAD_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "thread_search": (
        "Search past Loom conversations (threads) by title, git branch, repository, commit "
        "SHA and message text; returns ids, titles and snippets, best first.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "words to find"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            },
            "required": ["query"],
        },
    ),
    "thread_show": (
        "Show one past Loom conversation as text: its messages and tool calls. "
        "Pass an id (or a unique prefix) from thread_search.",
        {
            "type": "object",
            "properties": {"id": {"type": "string", "description": "thread id, e.g. T-0193..."}},
            "required": ["id"],
        },
    ),
}


def build_server(access: ToolAccess) -> Any:
    from mcp.server.lowlevel import Server

    from loom import __version__

    handlers = Handlers(access)
    return Server(
        "loom",
        version=__version__,
        instructions="Loom's project tools and its searchable history of past conversations.",
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_read_resource=handlers.read_resource,
    )


class Handlers:
    def __init__(self, access: ToolAccess) -> None:
        self.access = access

    async def list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        tools = [
            types.Tool(
                name=info.name,
                description=info.description,
                input_schema=info.parameters,
                annotations=types.ToolAnnotations(read_only_hint=info.read_only),
            )
            for info in self.access.tools()
        ]
        for name, (description, schema) in THREAD_TOOLS.items():
            tools.append(
                types.Tool(
                    name=name,
                    description=description,
                    input_schema=schema,
                    annotations=types.ToolAnnotations(read_only_hint=True),
                )
            )
        return types.ListToolsResult(tools=tools)

    async def call_tool(self, ctx: Any, params: Any) -> Any:
        name, args = params.name, dict(params.arguments or {})
        if name in THREAD_TOOLS:
            return self._thread_tool(name, args)
        if not self.access.has(name):
            return _result(f"Unknown tool {name!r}; tools/list shows what Loom offers.", True)
        args, hook_decision, refusal = await self.access.before(name, args)
        if refusal is not None:  # the person's PreToolUse hook, as in a session
            return _result(refusal, True)
        check = self.access.check(name, args, hook_decision)
        if check.decision == "ask":
            refusal = await self._ask(ctx, name, args, check.reason)
            if refusal is not None:
                return _result(refusal, True)
        elif check.decision == "deny":
            return _result(f"Refused: {name}: {check.reason}.", True)
        text, is_error = await self.access.run(name, args)
        return _result(text, is_error)

    async def _ask(self, ctx: Any, name: str, args: dict[str, Any], reason: str) -> str | None:
        """Ask the person through the client (elicitation); the refusal text, or None."""
        grant_hint = (
            f"grant it with `loom mcp serve --allow {name}` or list it under [permissions] "
            "auto_approve in .loom.toml"
        )
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return (
                f"Refused: {name} needs the person's approval ({reason}) and this MCP client "
                f"cannot ask (no elicitation support); {grant_hint}."
            )
        question = approval_question(name, args, reason)
        if question.text is None:  # never a question that shows only part of the call
            return f"Refused: {name} needs the person's approval, but {question.refusal}."
        schema = {
            "type": "object",
            "properties": {
                "decision": {
                    "type": "string",
                    "enum": list(ANSWERS),
                    "description": "Allow once, allow always (saved for this project), or deny",
                }
            },
            "required": ["decision"],
        }
        try:
            answer = await ctx.session.elicit_form(
                question.text, schema, related_request_id=ctx.request_id
            )
        except Exception as exc:  # the client broke off: nobody said yes
            return f"Refused: {name}: asking for approval failed ({exc}); {grant_hint}."
        decision = (answer.content or {}).get("decision") if answer.action == "accept" else None
        if decision not in ANSWERS:
            decision = "deny"
        self.access.record(name, args, decision)
        if decision == "deny":
            return f"Refused: the person denied {name}."
        return None

    def _thread_tool(self, name: str, args: dict[str, Any]) -> Any:
        try:
            if name == "thread_search":
                query = args.get("query")
                if not isinstance(query, str) or not query.strip():
                    return _result('Pass "query": the words to look for.', True)
                limit = args.get("limit", 20)
                limit = limit if isinstance(limit, int) and 0 < limit <= 100 else 20
                hits = self.access.search_threads(query, limit)
                return _result(json.dumps(hits, ensure_ascii=False, indent=1), False)
            ref = args.get("id")
            if not isinstance(ref, str) or not ref.strip():
                return _result('Pass "id": a thread id or unique prefix from thread_search.', True)
            return _result(self.access.show_thread(ref), False)
        except LoomError as exc:
            return _result(f"{exc}. Find thread ids with thread_search.", True)

    async def list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        resources = [
            types.Resource(
                uri=f"{THREAD_URI}{row['id']}",
                name=row["id"],
                title=row["title"],
                description=f"Loom thread, {row['messages']} messages, {row['last_activity_at']}",
                mime_type="text/markdown",
            )
            for row in self.access.list_threads()
        ]
        return types.ListResourcesResult(resources=resources)

    async def read_resource(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        from mcp import MCPError

        uri = str(params.uri)
        if not uri.startswith(THREAD_URI):
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {uri}; use {THREAD_URI}T-...")
        try:
            text = self.access.show_thread(uri[len(THREAD_URI) :])
        except LoomError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )


def _result(text: str, is_error: bool) -> Any:
    import mcp_types as types

    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=is_error
    )
