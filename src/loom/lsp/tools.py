"""The agent's language-server tools: lsp_diagnostics, lsp_definition, lsp_references,
lsp_hover. Each syncs the file's current text to the server before asking."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from loom.lsp.client import LspClient, LspError, uri_to_path
from loom.lsp.launch import ServerLaunch
from loom.lsp.supervisor import LspSettings, LspSupervisor, supervisor_for
from loom.tools.base import ToolContext, ToolError, ToolResult, ToolSetup
from loom.tools.builtin import BuiltinTool, open_confined, resolve, schema

SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
_RANK = {name: level for level, name in SEVERITIES.items()}
MAX_RESULTS = 200


def supervisor_from(ctx: ToolContext, own: LspSupervisor | None = None) -> LspSupervisor:
    """ctx.services.lsp_supervisor, else the tool's own (the session's, from `provide`),
    else the shared one of the project on this event loop."""
    supervisor = ctx.services.lsp_supervisor
    if isinstance(supervisor, LspSupervisor):
        return supervisor
    return own or supervisor_for(Path(ctx.project_root))


def _read_text(root: Path, rel: str) -> str:
    try:  # opened beneath the root without following links (issue 16)
        with os.fdopen(open_confined(root, rel), "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except FileNotFoundError:
        raise ToolError(
            f"{rel} does not exist; check the path (relative to the project root)"
        ) from None
    except IsADirectoryError:
        raise ToolError(f"{rel} is a directory; give a file") from None
    except OSError as exc:
        raise ToolError(f"cannot read {rel}: {exc.strerror or exc}") from None


class _LspTool(BuiltinTool):
    risk = "read"
    subject_kind = "path"
    kind = "search"

    def __init__(
        self, project_root: Path | None = None, supervisor: LspSupervisor | None = None
    ) -> None:
        super().__init__(project_root)
        self.supervisor = supervisor

    async def _client(
        self, ctx: ToolContext, args: dict[str, Any]
    ) -> tuple[LspClient, Path, str, str]:
        path, rel = resolve(ctx, args["path"])
        text = _read_text(ctx.project_root, rel)
        try:
            client = await supervisor_from(ctx, self.supervisor).client_for(path)
        except LspError as exc:
            raise ToolError(str(exc)) from None
        return client, path, rel, text

    async def _ask(
        self,
        ctx: ToolContext,
        args: dict[str, Any],
        method: str,
        extra: dict[str, Any] | None = None,
    ) -> tuple[Any, str, int]:
        """Send a position request for args' path/line/symbol -> (result, rel, line0)."""
        client, path, rel, text = await self._client(ctx, args)
        line0, char0 = _position(text, args, self.usage())
        try:
            result = await client.position_request(method, path, text, line0, char0, extra)
        except LspError as exc:
            raise ToolError(str(exc)) from None
        return result, rel, line0

    def _where(self, ctx: ToolContext, uri: str, line0: int, char0: int) -> str:
        path = uri_to_path(uri)
        try:
            shown = path.resolve().relative_to(Path(ctx.project_root).resolve()).as_posix()
        except ValueError:
            shown = str(path)
        source = ""
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                for number, text in enumerate(handle):
                    if number == line0:
                        source = text.strip()[:160]
                        break
        except OSError:
            pass
        return f"{shown}:{line0 + 1}:{char0 + 1}" + (f"  {source}" if source else "")


_POSITION = {
    "path": {"type": "string"},
    "line": {"type": "integer", "minimum": 1},
    "column": {"type": "integer", "minimum": 1},
    "symbol": {"type": "string", "description": "A name on the line, or give column."},
}


def _position(text: str, args: dict[str, Any], usage: str) -> tuple[int, int]:
    lines = text.split("\n")
    line0 = args["line"] - 1
    if line0 >= len(lines):
        raise ToolError(
            f"line {args['line']} is past the end of the file ({len(lines)} lines) (usage: {usage})"
        )
    source = lines[line0]
    if args.get("symbol"):
        index = source.find(args["symbol"])
        if index < 0:
            raise ToolError(
                f"{args['symbol']!r} does not occur on line {args['line']}: "
                f"{source.strip()[:120]!r} (usage: {usage})"
            )
    elif args.get("column"):
        index = min(args["column"] - 1, len(source))
    else:
        raise ToolError(f"give `symbol` (a name on the line) or `column` (usage: {usage})")
    # LSP counts UTF-16 code units.
    return line0, len(source[:index].encode("utf-16-le")) // 2


def _locations(result: Any) -> list[tuple[str, int, int]]:
    if result is None:
        return []
    items = result if isinstance(result, list) else [result]
    found = []
    for item in items:
        uri = item.get("uri") or item.get("targetUri")
        rng = item.get("range") or item.get("targetSelectionRange") or item.get("targetRange")
        if uri and rng:
            found.append((uri, rng["start"]["line"], rng["start"]["character"]))
    return found


class LspDiagnostics(_LspTool):
    name = "lsp_diagnostics"
    description = (
        "A file's compiler and type errors from its language server, at `severity` or worse."
    )
    parameters = schema(
        {
            "path": _POSITION["path"],
            "severity": {"type": "string", "enum": list(_RANK), "default": "warning"},
        },
        required=("path",),
    )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        client, path, rel, text = await self._client(ctx, args)
        try:
            found = await client.diagnostics(path, text)
        except LspError as exc:
            raise ToolError(str(exc)) from None
        limit = _RANK[args["severity"]]
        lines = []
        for d in sorted(
            found, key=lambda d: (d["range"]["start"]["line"], d["range"]["start"]["character"])
        ):
            level = d.get("severity", 1)
            if level > limit:
                continue
            start = d["range"]["start"]
            code = f" [{d['code']}]" if d.get("code") else ""
            lines.append(
                f"{rel}:{start['line'] + 1}:{start['character'] + 1}: "
                f"{SEVERITIES.get(level, 'error')}: {d.get('message', '').strip()}"
                f"{code}"
            )
        counts = {
            name: sum(1 for d in found if d.get("severity", 1) == level)
            for level, name in SEVERITIES.items()
        }
        if not lines:
            return ToolResult(
                f"{rel}: no problems at severity {args['severity']} or above", metadata=counts
            )
        return ToolResult("\n".join(lines[:MAX_RESULTS]), metadata=counts)


class LspDefinition(_LspTool):
    name = "lsp_definition"
    description = "Go to the definition of the symbol at `path`, `line` and `symbol`."
    parameters = schema(_POSITION, required=("path", "line"))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result, rel, line0 = await self._ask(ctx, args, "textDocument/definition")
        found = _locations(result)
        if not found:
            return ToolResult(f"no definition found for the symbol at {rel}:{line0 + 1}")
        return ToolResult(
            "\n".join(self._where(ctx, *loc) for loc in found), metadata={"count": len(found)}
        )


class LspReferences(_LspTool):
    name = "lsp_references"
    description = "Find every use of the symbol at `path`, `line` and `symbol`."
    parameters = schema(
        {**_POSITION, "include_declaration": {"type": "boolean", "default": True}},
        required=("path", "line"),
    )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result, rel, line0 = await self._ask(
            ctx,
            args,
            "textDocument/references",
            {"context": {"includeDeclaration": args["include_declaration"]}},
        )
        found = sorted(set(_locations(result)))
        if not found:
            return ToolResult(f"no references found for the symbol at {rel}:{line0 + 1}")
        lines = [self._where(ctx, *loc) for loc in found[:MAX_RESULTS]]
        if len(found) > MAX_RESULTS:
            lines.append(f"(and {len(found) - MAX_RESULTS} more)")
        return ToolResult("\n".join(lines), metadata={"count": len(found)})


class LspHover(_LspTool):
    name = "lsp_hover"
    description = "Type and docs (hover) of the symbol at `path`, `line` and `symbol`."
    parameters = schema(_POSITION, required=("path", "line"))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result, rel, line0 = await self._ask(ctx, args, "textDocument/hover")
        contents = (result or {}).get("contents")
        parts = contents if isinstance(contents, list) else [contents]
        text_parts = [p if isinstance(p, str) else (p or {}).get("value", "") for p in parts]
        shown = "\n\n".join(t.strip() for t in text_parts if t and t.strip())
        return ToolResult(shown or f"nothing to show for the symbol at {rel}:{line0 + 1}")


def lsp_tools(
    project_root: Path | None = None, supervisor: LspSupervisor | None = None
) -> list[BuiltinTool]:
    return [
        cls(project_root, supervisor)
        for cls in (LspDiagnostics, LspDefinition, LspReferences, LspHover)
    ]


def provide(setup: ToolSetup) -> list[BuiltinTool]:
    """The tool extension hook: the lsp_* tools with a supervisor of their own, set up
    from [lsp]; its language servers start on first use, in the session's sandbox (the
    setup's command launcher) and as the project's trust allows, and stop with the
    session."""
    root = Path(setup.project_root).resolve()
    settings = LspSettings.from_section(setup.config.lsp) if setup.config else LspSettings()
    launch = ServerLaunch.for_project(
        root,
        paths=setup.paths,
        sandbox=setup.command_launcher,
        trust=getattr(setup.config, "trust", None),
    )
    supervisor = LspSupervisor.from_settings(root, settings, launch)
    setup.on_close(supervisor.aclose)
    return lsp_tools(root, supervisor)
