"""One network namespace for a session's sandboxed commands (bubblewrap, network off).

Each command under `bwrap --unshare-net` had a network of its own, so a dev server the
agent started in the background was out of reach of the `curl` it ran next. A session
instead gets one namespace, held by a small process: `bwrap --unshare-user --unshare-net`
running `cat` on a pipe from Loom (it ends when Loom closes the pipe or dies; not
`--die-with-parent`, whose signal comes when the *thread* that started it ends). Each
command then enters that process's user and network namespaces with `nsenter` before its
own bwrap, which leaves out `--unshare-net`: the commands share a loopback, and still
reach nothing beyond it (the namespace has no other interface). Where the holder cannot
start (no `nsenter`, bwrap refused), each command gets its own namespace as before.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess

log = logging.getLogger(__name__)
START_TIMEOUT_S = 10.0


class SessionNet:
    """The holder of one session's network namespace, started on construction (OSError
    when it cannot be)."""

    def __init__(self, bwrap: str) -> None:
        nsenter = shutil.which("nsenter")
        if nsenter is None:
            raise OSError("nsenter is not installed")
        self.nsenter = nsenter
        read_info, write_info = os.pipe()
        try:
            holder = [bwrap, "--unshare-user", "--unshare-net", "--ro-bind", "/", "/"]
            holder += ["--info-fd", str(write_info), "--", "cat"]
            self._process = subprocess.Popen(
                holder,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(write_info,),
                start_new_session=True,
            )
        finally:
            os.close(write_info)
        try:
            with os.fdopen(read_info, "rb") as info:
                data = info.read()  # bwrap closes it once the namespace is made
            self.pid = int(json.loads(data)["child-pid"])
        except (ValueError, KeyError, TypeError) as exc:
            self.close()
            raise OSError(f"the network holder did not start ({self._stderr()})") from exc

    def _stderr(self) -> str:
        with contextlib.suppress(Exception):
            _out, err = self._process.communicate(timeout=START_TIMEOUT_S)
            return (err or b"").decode(errors="replace").strip() or "no message"
        return "no message"

    def prefix(self) -> list[str]:
        """What a command's argv starts with to run in this namespace."""
        target = f"--target={self.pid}"
        return [self.nsenter, target, "--user", "--net", "--preserve-credentials", "--"]

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def close(self) -> None:
        """End the holder (the namespace goes with the last command still in it)."""
        process = self._process
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        with contextlib.suppress(OSError):
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=START_TIMEOUT_S)
        if process.stderr is not None:
            process.stderr.close()
