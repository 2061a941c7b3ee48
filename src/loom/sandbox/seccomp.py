"""A seccomp filter for bubblewrap's `--seccomp FD`, used while the network is off: no
new Unix-domain sockets (`socket(AF_UNIX, ...)` fails with EACCES) and no io_uring
(whose IORING_OP_SOCKET would get round that).

Why: a private network namespace already cuts TCP, UDP and abstract Unix sockets, but a
Unix socket that is a file (tmux's in /tmp, docker.sock, ssh-agent, D-Bus, PostgreSQL's)
stays reachable through the read-only file system, and connecting to one is not a
write. A command could then type into the person's tmux or start a container as root.
`socketpair` stays allowed (asyncio, pipes between a program's own processes).

The filter is classic BPF over `struct seccomp_data`; each descriptor handed out reads
a sealed memfd, so nothing a command does can change the filter for the next one.
"""

from __future__ import annotations

import errno
import fcntl
import os
import platform
import struct
import threading

# BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h)
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (arg0's low half: LE)

AF_UNIX = 1
# machine: (AUDIT_ARCH_*, __NR_socket, __NR_io_uring_setup, first x32 syscall or 0)
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425, 0x40000000),
    "aarch64": (0xC00000B7, 198, 425, 0),
}


Step = tuple[str, int, int, str | None, str | None]  # label, code, k, if true, if false


def _assemble(steps: list[Step]) -> bytes:
    """Encode `struct sock_filter`s; jump labels become relative offsets."""
    where = {label: index for index, (label, *_rest) in enumerate(steps) if label}
    out = bytearray()
    for index, (_label, code, k, jt, jf) in enumerate(steps):
        true = where[jt] - index - 1 if jt else 0
        false = where[jf] - index - 1 if jf else 0
        out += struct.pack("=HBBI", code, true, false, k)
    return bytes(out)


def unix_socket_filter(machine: str | None = None) -> bytes | None:
    """The filter program for this machine, or None where we have no syscall table."""
    entry = _ARCHES.get(machine or platform.machine())
    if entry is None:
        return None
    arch, nr_socket, nr_io_uring, x32 = entry
    deny = _RET_ERRNO | errno.EACCES
    steps: list[Step] = [
        ("", _LD_W_ABS, _ARCH, None, None),
        # another ABI (32-bit compat) has other numbers: refuse its calls outright
        ("", _JEQ_K, arch, "native", "foreign"),
        ("foreign", _RET_K, _RET_ERRNO | errno.EPERM, None, None),
        ("native", _LD_W_ABS, _NR, None, None),
    ]
    if x32:
        steps.append(("", _JGE_K, x32, "deny", "syscall"))
    steps += [
        ("syscall", _JEQ_K, nr_socket, "domain", "uring"),
        ("uring", _JEQ_K, nr_io_uring, "deny", "allow"),
        ("domain", _LD_W_ABS, _ARG0, None, None),
        ("", _JEQ_K, AF_UNIX, "deny", "allow"),
        ("allow", _RET_K, _RET_ALLOW, None, None),
        ("deny", _RET_K, deny, None, None),
    ]
    return _assemble(steps)


_sealed: list[int] = []
_lock = threading.Lock()


def filter_fd() -> int | None:
    """A fresh read-only descriptor of the filter (the caller closes it once the
    process is spawned), or None where there is no filter for this machine."""
    with _lock:
        if not _sealed:
            program = unix_socket_filter()
            if program is None or not hasattr(os, "memfd_create"):
                return None
            memfd = os.memfd_create("loom-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            os.write(memfd, program)
            seals = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW
            fcntl.fcntl(memfd, fcntl.F_ADD_SEALS, seals | fcntl.F_SEAL_SEAL)
            _sealed.append(memfd)
    # its own open file description: its own offset, whatever else reads the memfd
    return os.open(f"/proc/self/fd/{_sealed[0]}", os.O_RDONLY | os.O_CLOEXEC)
