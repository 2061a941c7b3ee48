"""A tiny misbehaving language server for tests. Usage: fake_lsp.py MODE

silent        never answers anything
crash-later   answers initialize, then exits (code 3) on the first other request
crash-start   exits at once with a message on stderr
garbage       answers initialize with bytes that are not an LSP message
ok            answers initialize, hover ("fake hover") and shutdown; publishes one
              diagnostic per opened document
"""

from __future__ import annotations

import json
import sys


def read() -> dict | None:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(-1 if length is None else length))


def send(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main(mode: str) -> None:
    if mode == "crash-start":
        sys.stderr.write("fake_lsp: cannot start, missing runtime\n")
        raise SystemExit(2)
    while (message := read()) is not None:
        method, request_id = message.get("method"), message.get("id")
        if mode == "silent":
            continue
        if method == "initialize":
            if mode == "garbage":
                sys.stdout.buffer.write(b"Content-Length: 5\r\n\r\nnope!")
                sys.stdout.buffer.flush()
                continue
            send({"jsonrpc": "2.0", "id": request_id, "result": {"capabilities": {}}})
        elif request_id is not None and mode == "crash-later":
            sys.stderr.write("fake_lsp: segmentation fault (pretend)\n")
            sys.stderr.flush()
            raise SystemExit(3)
        elif method == "textDocument/didOpen":
            uri = message["params"]["textDocument"]["uri"]
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/publishDiagnostics",
                    "params": {
                        "uri": uri,
                        "diagnostics": [
                            {
                                "range": {
                                    "start": {"line": 0, "character": 0},
                                    "end": {"line": 0, "character": 1},
                                },
                                "severity": 2,
                                "message": "fake warning",
                            }
                        ],
                    },
                }
            )
        elif method == "textDocument/hover":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {"contents": {"kind": "plaintext", "value": "fake hover"}},
                }
            )
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": request_id, "result": None})
        elif method == "exit":
            return
        elif request_id is not None:
            send({"jsonrpc": "2.0", "id": request_id, "result": None})


if __name__ == "__main__":
    main(sys.argv[1])
