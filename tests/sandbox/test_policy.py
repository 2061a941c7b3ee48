"""The sandbox policy, the backends' argv and profile text, refusal notes, config."""

from __future__ import annotations

import dataclasses
import errno
import os
import struct
import sys
import tempfile
from pathlib import Path

import pytest

from loom.config import ConfigError, load_config
from loom.paths import LoomPaths
from loom.sandbox import Detection, Sandbox, build_policy, explain_refusal, policy_from_config
from loom.sandbox.bwrap import Bubblewrap, find_bwrap, mount_plan
from loom.sandbox.policy import SandboxPolicy, WritableRoot
from loom.sandbox.seatbelt import Seatbelt, seatbelt_profile
from loom.sandbox.seccomp import unix_socket_filter


def test_policy_writable_roots(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / "out").mkdir()
    data = tmp_path / "home" / "data"  # created: no command may make it first
    policy = build_policy(
        project,
        extra_writable=["out", str(tmp_path / "nope"), "~"],
        loom_dirs=((data, "Loom data"),),
    )
    assert data.is_dir()
    assert [(root.path, root.why) for root in policy.writable] == [
        (project.resolve(), "project root"),  # the shared temp folder is not writable
        ((project / "out").resolve(), "[sandbox] writable"),
        (Path.home().resolve(), "[sandbox] writable"),
    ]
    assert policy.hidden_paths() == [data.resolve()]
    assert policy.missing == (str(tmp_path / "nope"),)
    assert policy.protected_paths() == [(project / ".git").resolve()]
    assert policy.network is False and policy.mode == "on"
    with pytest.raises(ValueError, match="sandbox mode must be one of"):
        build_policy(project, mode="maybe")  # type: ignore[arg-type]


SESSION_TEMP = Path("/var/tmp/loom-tmp-test")


def _policy(network: bool = False) -> SandboxPolicy:
    return SandboxPolicy(
        mode="on",
        network=network,
        project_root=Path("/work/proj"),
        writable=(
            WritableRoot(Path("/work/proj"), "project root"),
            WritableRoot(Path("/work/proj/build/x"), "[sandbox] writable"),
        ),
        temp=SESSION_TEMP,
    )


def test_bubblewrap_argv_confines_and_drops_privileges() -> None:
    backend = Bubblewrap("/usr/bin/bwrap")
    backend.disable_userns = True
    argv, fds = backend.wrap(_policy(), ["bash", "-c", "make"], Path("/work/proj/src"))
    assert argv[:8] == [
        "/usr/bin/bwrap",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        "--disable-userns",
    ]
    assert "--unshare-net" in argv
    # network off: the Unix-socket filter goes in as a descriptor for the child
    assert argv[argv.index("--seccomp") + 1] == str(fds[0])
    assert os.read(fds[0], 4096) == unix_socket_filter()
    os.close(fds[0])
    text = " ".join(argv)
    # read-only root first, then the session's temp folder at /tmp (never the shared
    # one), then writable folders, parents before children
    assert text.index("--ro-bind / /") < text.index(f"--bind {SESSION_TEMP} /tmp")
    assert text.index(f"--bind {SESSION_TEMP} /tmp") < text.index("--bind /work/proj /work/proj")
    assert "--bind /tmp /tmp" not in text
    for variable in ("TMPDIR", "TMP", "TEMP"):
        assert f"--setenv {variable} /tmp " in text
    assert text.index("--bind /work/proj /work/proj") < text.index("--bind /work/proj/build/x")
    at = argv.index("--")
    assert argv[at - 2 : at] == ["--chdir", "/work/proj/src"]
    assert argv[-3:] == ["bash", "-c", "make"]  # after the rlimits (prlimit ... --)
    argv, fds = backend.wrap(_policy(network=True), ["true"], Path("/"))
    assert "--unshare-net" not in argv and "--seccomp" not in argv and fds == ()
    # root whose processes no cgroup caps: the watcher runs the command (process_watch)
    watched = sys.executable in argv and str(_policy().limits.max_processes) in argv
    assert watched == (os.geteuid() == 0)
    capped = dataclasses.replace(_policy(network=True), processes_by_cgroup=True)
    assert sys.executable not in backend.wrap(capped, ["true"], Path("/"))[0]


def test_mount_plan_hides_loom_folders_and_pins_their_parents() -> None:
    policy = SandboxPolicy(
        mode="on",
        network=False,
        project_root=Path("/work/proj"),
        writable=(
            WritableRoot(Path("/work/proj"), "project root"),
            WritableRoot(Path("/work/proj/x"), "[sandbox] writable"),
        ),
        hidden=(
            WritableRoot(Path("/work/proj/x/home/data"), "Loom data"),
            WritableRoot(Path("/tmp/x/home/data"), "Loom data"),
            WritableRoot(Path("/root/.config/loom"), "Loom user config"),
        ),
    )
    assert mount_plan(policy) == [
        ("bind", Path("/work/proj")),
        ("bind", Path("/work/proj/x")),
        ("hide", Path("/root/.config/loom")),
        ("bind", Path("/work/proj/x/home")),  # pinned: a mount point cannot be renamed away
        ("hide", Path("/tmp/x/home/data")),  # (out of view anyway: /tmp is the command's own)
        ("hide", Path("/work/proj/x/home/data")),
    ]
    argv, fds = Bubblewrap("/usr/bin/bwrap").wrap(policy, ["true"], Path("/work/proj"))
    for fd in fds:
        os.close(fd)
    at = argv.index("/tmp/x/home/data")
    assert argv[at - 1 : at + 1] == ["--tmpfs", "/tmp/x/home/data"]
    # made read-only after every mount (a worktree inside a hidden folder gets its
    # mount point made first), each hidden folder once
    tail = argv[argv.index("--remount-ro") :]
    assert tail[:6] == [
        "--remount-ro", "/root/.config/loom", "--remount-ro", "/tmp/x/home/data",
        "--remount-ro", "/work/proj/x/home/data",
    ]  # fmt: skip
    assert argv.index("--tmpfs") < argv.index("/work/proj")  # /tmp: a fresh one, first
    assert argv[argv.index("--tmpfs") + 1] == "/tmp"
    profile = seatbelt_profile(policy)
    assert '(deny file-read* file-write*\n    (subpath (param "HIDDEN_0"))' in profile


def test_seatbelt_profile_text() -> None:
    policy = _policy()
    assert seatbelt_profile(policy) == (
        "(version 1)\n"
        "; Loom sandbox: reads allowed, writes only in the writable folders.\n"
        "(allow default)\n"
        "(deny file-write*)\n"
        "(allow file-write*\n"
        '    (subpath (param "WRITABLE_0"))\n'
        '    (subpath (param "WRITABLE_1"))\n'
        '    (subpath (param "WRITABLE_2"))\n'
        '    (literal "/dev/null")\n'
        '    (literal "/dev/zero")\n'
        '    (literal "/dev/dtracehelper")\n'
        '    (regex #"^/dev/tty")\n'
        '    (regex #"^/dev/fd/")\n'
        ")\n"
        "; network off\n"
        "(deny network*)\n"
    )
    assert "network" not in seatbelt_profile(_policy(network=True))
    argv, fds = Seatbelt().wrap(policy, ["/bin/bash", "-c", "ls"], Path("/work/proj"))
    assert fds == ()
    assert argv[:3] == ["/usr/bin/sandbox-exec", "-p", seatbelt_profile(policy)]
    assert argv[3:9] == [
        "-D",
        "WRITABLE_0=/work/proj",
        "-D",
        "WRITABLE_1=/work/proj/build/x",
        "-D",
        f"WRITABLE_2={SESSION_TEMP}",  # the session's temp folder, named in $TMPDIR
    ]
    temp = str(SESSION_TEMP)
    assert argv[9:] == [
        "--", "/usr/bin/env", f"TMPDIR={temp}", f"TMP={temp}", f"TEMP={temp}",
        "/bin/bash", "-c", "ls",
    ]  # fmt: skip
    no_temp = Seatbelt().wrap(dataclasses.replace(policy, temp=None), ["ls"], Path("/"))[0]
    assert no_temp[-2:] == ["--", "ls"] and f"WRITABLE_2={temp}" not in no_temp


def test_seatbelt_keeps_protected_paths_read_only(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".loom.toml").write_text("")
    policy = build_policy(tmp_path)
    profile = seatbelt_profile(policy)
    assert profile.index("(allow file-write*") < profile.index(
        '(deny file-write*\n    (subpath (param "PROTECTED_0"))\n'
        '    (subpath (param "PROTECTED_1"))\n)'
    )
    argv, _fds = Seatbelt().wrap(policy, ["true"], tmp_path)
    assert f"PROTECTED_1={(tmp_path / '.loom.toml').resolve()}" in argv


def test_refusal_notes() -> None:
    policy = _policy()
    write = explain_refusal(policy, "sh: 1: cannot create /etc/x: Read-only file system", True)
    assert write is not None and "refused a write" in write and "/work/proj" in write
    net = explain_refusal(policy, "curl: (6) Could not resolve host: example.com", True)
    assert net is not None and "network access is off" in net and "network = true" in net
    assert explain_refusal(policy, "Read-only file system", failed=False) is None
    assert explain_refusal(policy, "AssertionError: 1 != 2", failed=True) is None
    assert explain_refusal(_policy(network=True), "Connection refused", True) is None


def test_no_backend_means_no_confinement_and_a_notice(tmp_path: Path) -> None:
    sandbox = Sandbox(build_policy(tmp_path), Detection(None, "bwrap is not installed"))
    assert not sandbox.active and sandbox.unavailable
    assert sandbox.wrap(["ls"], tmp_path) == (["ls"], ())
    assert sandbox.status() == (False, "runs without a sandbox (bwrap is not installed)")
    notice = sandbox.notice()
    assert notice is not None and "bwrap is not installed" in notice and "--no-sandbox" in notice
    off = Sandbox(build_policy(tmp_path, mode="off"))
    assert not off.active and not off.unavailable and off.wrap(["ls"], tmp_path) == (["ls"], ())


@pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")
def test_detection_finds_a_working_bubblewrap(tmp_path: Path) -> None:
    sandbox = Sandbox(build_policy(tmp_path))
    assert sandbox.active, sandbox.problem
    sandboxed, text = sandbox.status()
    assert sandboxed and text.startswith("runs sandboxed (bubblewrap)") and "network off" in text
    argv, fds = sandbox.wrap(["ls"], tmp_path)
    assert argv[0].endswith("bwrap") and len(fds) == 1
    os.close(fds[0])


def test_the_unix_socket_filter_program() -> None:
    program = unix_socket_filter("x86_64")
    assert program is not None and len(program) % 8 == 0
    instructions = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    assert instructions[0] == (0x20, 0, 0, 4)  # load the architecture
    assert instructions[1] == (0x15, 1, 0, 0xC000003E)  # x86_64 skips the next: refuse all
    assert any(code == 0x15 and k == 41 for code, _t, _f, k in instructions)  # socket()
    assert any(code == 0x15 and k == 425 for code, _t, _f, k in instructions)  # io_uring
    assert instructions[-1] == (0x06, 0, 0, 0x00050000 | errno.EACCES)
    assert instructions[-2] == (0x06, 0, 0, 0x7FFF0000)
    aarch64 = unix_socket_filter("aarch64")
    assert aarch64 is not None and struct.pack("=I", 198) in aarch64
    assert unix_socket_filter("sparc64") is None


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_section_and_a_project_cannot_loosen_it(tmp_path: Path) -> None:
    paths = LoomPaths(tmp_path / "d", tmp_path / "s", tmp_path / "c", tmp_path / "cfg")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    config = load_config(project, paths=paths, environ={})
    assert (config.sandbox.mode, config.sandbox.network, config.sandbox.writable) == (
        "on",
        False,
        [],
    )
    _write(
        project / ".loom.toml",
        '[sandbox]\nmode = "off"\nnetwork = true\nwritable = ["/etc"]\n',
    )
    config = load_config(project, paths=paths, environ={})
    assert (config.sandbox.mode, config.sandbox.network, config.sandbox.writable) == (
        "on",
        False,
        [],
    )
    assert len([w for w in config.warnings if "cannot loosen its own sandbox" in w]) == 3
    assert any(".loom.toml:2:" in w and "sandbox.mode" in w for w in config.warnings)
    _write(paths.user_config_file, '[sandbox]\nnetwork = true\nwritable = ["/srv"]\n')
    config = load_config(project, {"sandbox.mode": "off"}, paths=paths, environ={})
    assert (config.sandbox.mode, config.sandbox.network, config.sandbox.writable) == (
        "off",
        True,
        ["/srv"],
    )
    policy = policy_from_config(config, paths)
    assert policy.mode == "off" and policy.network is True
    assert paths.data.is_dir() and paths.state.is_dir() and paths.cache.is_dir()
    _write(project / ".loom.toml", '[sandbox]\nmode = "maybe"\n')  # a typo is an error
    with pytest.raises(ConfigError, match="should be 'on', 'ask' or 'off'"):
        load_config(project, paths=paths, environ={})
    (project / ".loom.toml").unlink()
    _write(paths.user_config_file, '[sandbox]\nmode = "sometimes"\n')
    with pytest.raises(ConfigError, match=r"sandbox\.mode"):
        load_config(project, paths=paths, environ={})


def test_a_tmpdir_of_home_or_root_does_not_spread_session_folders_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom.sandbox.session_temp import system_temp

    for wide in ("/", str(Path.home())):
        monkeypatch.setenv("TMPDIR", wide)
        monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
        assert system_temp() == Path("/tmp").resolve()
        roots = build_policy(tmp_path).writable_paths()
        assert Path(wide).resolve() not in roots and Path("/tmp").resolve() not in roots


def test_a_project_root_of_home_or_root_is_never_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for wide in (home, tmp_path, Path("/")):  # home, a folder holding it, the root
        policy = build_policy(wide)
        assert wide.resolve() not in policy.writable_paths()
        assert "project root" not in [root.why for root in policy.writable]
    assert (home / "proj").resolve() in build_policy(home / "proj").writable_paths()


def test_limits_come_from_config_and_a_project_can_only_lower_them(tmp_path: Path) -> None:
    paths = LoomPaths(tmp_path / "d", tmp_path / "s", tmp_path / "c", tmp_path / "cfg")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    config = load_config(project, paths=paths, environ={})
    limits = policy_from_config(config, paths).limits
    assert (limits.max_processes, limits.max_memory_mb, limits.max_file_mb) == (512, 8192, 1024)
    _write(project / ".loom.toml", "[sandbox]\nmax_processes = 100000\nmax_file_mb = 10\n")
    config = load_config(project, paths=paths, environ={})
    limits = policy_from_config(config, paths).limits
    assert (limits.max_processes, limits.max_file_mb) == (512, 10)
    assert any("sandbox.max_processes" in w for w in config.warnings)
    argv, fds = Bubblewrap("/usr/bin/bwrap").wrap(
        policy_from_config(config, paths), ["true"], project
    )
    for fd in fds:
        os.close(fd)
    tail = argv[argv.index("--") + 1 :]
    if tail[0].endswith("prlimit"):  # util-linux is there: rlimits inside the sandbox
        assert tail[1:5] == [
            "--nproc=512",
            f"--fsize={10 * 1024 * 1024}",
            f"--data={8192 * 1024 * 1024}",
            "--",
        ]
