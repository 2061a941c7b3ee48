"""A trust store that is corrupt or cannot be written, as the person meets it in a face:
said once (never lost between the REPL's question and its session), never a traceback;
and the REPL's trust question, answered with one key."""

from __future__ import annotations

from pathlib import Path

import pexpect
from tests.fakes.llm_server import FakeLlmServer
from tests.support.loom_cli import loom

from loom.paths import LoomPaths


def test_the_repl_says_a_corrupt_trust_store_once(server: FakeLlmServer, project: Path) -> None:
    from tests.support.chat_pty import PROMPT, spawn

    (project / ".loom.toml").write_text('[permissions]\nauto_approve = ["shell"]\n')
    paths = LoomPaths.from_env()
    paths.trust_file.parent.mkdir(parents=True, exist_ok=True)
    paths.trust_file.write_text("{ not json")
    child = spawn([], project, server)
    child.expect(r"Trust this project\? \[y/N\]")
    asked = child.before
    child.sendline("")  # no
    child.expect(PROMPT)
    assert child.before is not None
    seen = " ".join((asked + child.before).split())  # the pty wraps long lines
    child.sendeof()
    child.expect(pexpect.EOF)
    # the question's own config read moved the file aside: the session found none, so
    # this line is the only time the person hears of it
    assert seen.count("was corrupt") == 1, seen
    assert "every project is untrusted until you trust it again" in seen
    assert list(paths.quarantine_dir.glob("trust.json.*.corrupt"))


def test_a_trust_store_that_cannot_be_written_is_one_line_not_a_traceback(
    server: FakeLlmServer, project: Path
) -> None:
    (project / ".loom.toml").write_text('[shell]\npass_env = ["GITHUB_TOKEN"]\n')
    assert loom(["trust", "--yes"], project, server).returncode == 0
    lock = LoomPaths.from_env().trust_file.with_name("trust.lock")
    lock.unlink()
    lock.mkdir()  # no decision can be written now, even by root

    revoked = loom(["trust", "--revoke"], project, server)
    assert revoked.returncode == 1 and "Traceback" not in revoked.stderr, revoked.stderr
    assert "cannot forget the decision" in revoked.stderr and "nothing changed" in revoked.stderr

    added = loom(["mcp", "add", "p", "--project", "--", "srv"], project, server)
    assert added.returncode == 0 and "Traceback" not in added.stderr, added.stderr
    assert "cannot keep the project trusted" in added.stderr and "loom trust" in added.stderr


def test_the_repls_trust_question_takes_one_key(server: FakeLlmServer, project: Path) -> None:
    from tests.support.chat_pty import PROMPT, spawn

    (project / ".loom.toml").write_text('[permissions]\nauto_approve = ["shell"]\n')
    child = spawn([], project, server)
    child.expect(r"Trust this project\? \[y/N\]")
    child.send("y")  # no Enter, as at a permission question
    child.expect("Trusted ")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    again = spawn([], project, server)  # answered: not asked again
    index = again.expect([r"Trust this project\?", PROMPT])
    assert index == 1
    again.sendeof()
    again.expect(pexpect.EOF)
