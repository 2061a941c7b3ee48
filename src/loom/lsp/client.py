"""An LSP client over a language server's stdin/stdout.

Requests time out (LspTimeout) instead of hanging; a server that exits fails every
pending request with LspServerDied, carrying the tail of its stderr for the message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

from loom._timeouts import within
from loom.lsp.jsonrpc import ProtocolError, encode, read_message
from loom.lsp.launch import LaunchError, ServerLaunch

DEFAULT_TIMEOUT = 30.0
STDERR_TAIL = 2000


class LspError(Exception):
    """A language-server problem worth telling the user or the model about."""


class LspTimeout(LspError):
    pass


class LspServerDied(LspError):
    pass


def file_uri(path: Path) -> str:
    return path.resolve().as_uri()


def uri_to_path(uri: str) -> Path:
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(uri).path))


class LspClient:
    def __init__(
        self,
        command: list[str],
        root: Path,
        language: str,
        request_timeout: float = DEFAULT_TIMEOUT,
        launch: ServerLaunch | None = None,
    ) -> None:
        self.command = command
        self.root = root.resolve()
        # how it starts (sandbox, environment, interpreter); default: untrusted, unconfined
        self.launch = launch or ServerLaunch.for_project(self.root)
        self.language = language
        self.request_timeout = request_timeout
        self.process: asyncio.subprocess.Process | None = None
        self.capabilities: dict[str, Any] = {}
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._diagnostics: dict[str, list[dict[str, Any]]] = {}
        self._diag_events: dict[str, asyncio.Event] = {}
        self._versions: dict[str, int] = {}
        self._texts: dict[str, str] = {}
        self._stderr_tail = b""
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False

    # -- life cycle --------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None and not self._closed

    async def start(self) -> None:
        try:
            argv = self.launch.resolve(self.command)
        except LaunchError as exc:
            raise LspError(str(exc)) from None
        try:
            env = self.launch.environment(argv)
            spawned, fds = self.launch.command(argv)
        except OSError as exc:  # its private folder cannot be made
            raise LspError(
                f"cannot prepare the language server's own folder {self.launch.home} "
                f"({exc.strerror or exc}); check that Loom's cache folder is writable"
            ) from None
        try:
            self.process = await asyncio.create_subprocess_exec(
                *spawned,
                cwd=self.root,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                pass_fds=fds,
                limit=2**24,
                start_new_session=True,
            )  # its own process group: we can stop its children
        except OSError as exc:
            raise LspError(f"could not start {argv[0]}: {exc.strerror or exc}") from None
        finally:
            for fd in fds:
                os.close(fd)
        self._tasks = [
            asyncio.create_task(self._read_loop()),
            asyncio.create_task(self._drain_stderr()),
        ]
        result = await self.request(
            "initialize",
            {
                # in the sandbox's own PID namespace Loom's pid names nothing (a server
                # that watches it would stop); it dies with Loom there anyway
                "processId": None if self.launch.sandboxed else os.getpid(),
                "rootUri": file_uri(self.root),
                "rootPath": str(self.root),
                "workspaceFolders": [{"uri": file_uri(self.root), "name": self.root.name}],
                "capabilities": {
                    "textDocument": {
                        "synchronization": {"didSave": False, "dynamicRegistration": False},
                        "publishDiagnostics": {"relatedInformation": False, "versionSupport": True},
                        "definition": {"linkSupport": False},
                        "references": {},
                        "hover": {"contentFormat": ["markdown", "plaintext"]},
                    },
                    "workspace": {"configuration": True, "workspaceFolders": True},
                    "general": {"positionEncodings": ["utf-16"]},
                },
                "clientInfo": {"name": "loom"},
            },
        )
        self.capabilities = (result or {}).get("capabilities", {})
        self.notify("initialized", {})

    async def shutdown(self, timeout: float = 5.0) -> None:
        if self.process is None or self._closed:
            return
        with contextlib.suppress(LspError, ConnectionError, OSError):
            if self.process.returncode is None:
                await self.request("shutdown", None, timeout=timeout)
                self.notify("exit", None)
        self._closed = True
        await self._reap(timeout)

    async def kill(self) -> None:
        self._closed = True
        await self._reap(0)

    def kill_group(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)

    async def _reap(self, timeout: float) -> None:
        if self.process is None:  # never started
            return
        try:
            await within(self.process.wait(), timeout)
        except TimeoutError:
            self.kill_group()
            with contextlib.suppress(TimeoutError):
                await within(self.process.wait(), 5)
        self.kill_group()  # helpers it started (e.g. node under a wrapper script)
        for task in self._tasks:
            task.cancel()
        self._fail_pending(LspServerDied(f"{self.language} language server stopped"))

    # -- messages ----------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        if self.process is None or self.process.stdin is None or not self.alive:
            raise LspServerDied(self._died_message())
        try:
            self.process.stdin.write(encode(message))
        except (ConnectionError, RuntimeError) as exc:
            raise LspServerDied(self._died_message()) from exc

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            assert self.process is not None and self.process.stdin is not None
            with contextlib.suppress(ConnectionError):
                await self.process.stdin.drain()
            return await within(future, timeout or self.request_timeout)
        except TimeoutError:
            with contextlib.suppress(LspError):
                self.notify("$/cancelRequest", {"id": request_id})
            raise LspTimeout(
                f"the {self.language} language server did not answer {method} "
                f"within {timeout or self.request_timeout:.0f} s"
            ) from None
        finally:
            self._pending.pop(request_id, None)

    async def _read_loop(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        try:
            while True:
                message = await read_message(self.process.stdout)
                if message is None:
                    break
                self._dispatch(message)
        except (ProtocolError, asyncio.IncompleteReadError, ConnectionError) as exc:
            # A server that garbles its output cannot be trusted with anything after it.
            self.kill_group()
            with contextlib.suppress(TimeoutError):
                await within(self.process.wait(), 5)
            self._fail_pending(
                LspServerDied(
                    f"the {self.language} language server ({self.command[0]}) sent a malformed "
                    f"message ({exc}); Loom stopped it"
                )
            )
            return
        with contextlib.suppress(Exception):
            await self.process.wait()
        # The process has exited, but its last stderr (why it died) may still be unread.
        drain = self._tasks[1] if len(self._tasks) > 1 else None
        if drain is not None:
            with contextlib.suppress(Exception, TimeoutError):
                await within(asyncio.shield(drain), 1)
        self._fail_pending(LspServerDied(self._died_message()))

    async def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while chunk := await self.process.stderr.read(4096):
            self._stderr_tail = (self._stderr_tail + chunk)[-STDERR_TAIL:]

    def _died_message(self) -> str:
        code = self.process.returncode if self.process else None
        tail = self._stderr_tail.decode("utf-8", "replace").strip()[-500:]
        text = f"the {self.language} language server ({self.command[0]}) exited"
        text += f" with code {code}" if code is not None else ""
        return text + (f": {tail}" if tail else "")

    def _fail_pending(self, error: Exception) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        for event in self._diag_events.values():
            event.set()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message and ("result" in message or "error" in message):
            future = self._pending.get(message["id"])
            if future is not None and not future.done():
                if "error" in message and message["error"] is not None:
                    error = message["error"]
                    future.set_exception(
                        LspError(
                            f"{self.language} server error {error.get('code')}: "
                            f"{error.get('message')}"
                        )
                    )
                else:
                    future.set_result(message.get("result"))
            return
        method = message.get("method")
        if "id" in message:  # a request from the server to us
            self._answer_server_request(message["id"], method, message.get("params"))
        elif method == "textDocument/publishDiagnostics":
            params = message.get("params") or {}
            uri = params.get("uri", "")
            self._diagnostics[uri] = params.get("diagnostics") or []
            self._diag_events.setdefault(uri, asyncio.Event()).set()

    def _answer_server_request(self, request_id: Any, method: str | None, params: Any) -> None:
        if method == "workspace/configuration":
            items = (params or {}).get("items", []) if isinstance(params, dict) else []
            result: Any = [
                self.launch.configuration(item.get("section") if isinstance(item, dict) else None)
                for item in items
            ]
        elif method in (
            "window/workDoneProgress/create",
            "client/registerCapability",
            "client/unregisterCapability",
            "window/showMessageRequest",
        ):
            result = None
        elif method == "workspace/workspaceFolders":
            result = [{"uri": file_uri(self.root), "name": self.root.name}]
        else:
            with contextlib.suppress(LspError):
                self._send(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "error": {"code": -32601, "message": f"{method} not supported"},
                    }
                )
            return
        with contextlib.suppress(LspError):
            self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    # -- documents ---------------------------------------------------------------------
    def sync_document(self, path: Path, text: str) -> str:
        """didOpen the first time, didChange (full text) when the text changed. -> uri"""
        uri = file_uri(path)
        if uri not in self._versions:
            self._versions[uri] = 1
            self.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": self.language,
                        "version": 1,
                        "text": text,
                    }
                },
            )
        elif self._texts.get(uri) != text:
            self._versions[uri] += 1
            self.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": self._versions[uri]},
                    "contentChanges": [{"text": text}],
                },
            )
        else:
            return uri
        self._texts[uri] = text
        self._diag_events.setdefault(uri, asyncio.Event()).clear()
        return uri

    def close_document(self, path: Path) -> None:
        uri = file_uri(path)
        if self._versions.pop(uri, None) is not None:
            self._texts.pop(uri, None)
            self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    async def diagnostics(
        self, path: Path, text: str, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """The server's diagnostics for the file as it is now."""
        uri = self.sync_document(path, text)
        event = self._diag_events.setdefault(uri, asyncio.Event())
        if uri not in self._diagnostics or not event.is_set():
            try:
                await within(event.wait(), timeout or self.request_timeout)
            except TimeoutError:
                raise LspTimeout(
                    f"the {self.language} language server sent no diagnostics "
                    f"for {path.name} within "
                    f"{timeout or self.request_timeout:.0f} s"
                ) from None
        if not self.alive and uri not in self._diagnostics:
            raise LspServerDied(self._died_message())
        return list(self._diagnostics.get(uri, []))

    async def position_request(
        self,
        method: str,
        path: Path,
        text: str,
        line: int,
        character: int,
        extra: dict[str, Any] | None = None,
    ) -> Any:
        uri = self.sync_document(path, text)
        params = {
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": character},
            **(extra or {}),
        }
        return await self.request(method, params)
