"""The sandbox for commands the agent runs (the shell tool, the git tool).

    policy = policy_from_config(config, paths)     # what is writable, network on/off
    sandbox = Sandbox(policy).for_session()        # finds and checks the backend once;
                                                   # the session's own /tmp, until close()
    argv, fds = sandbox.wrap(["bash", "-c", cmd], cwd)  # spawn with pass_fds=fds
    argv, fds, finish = sandbox.launch(["bash", "-c", cmd], cwd)  # as wrap, plus the
    notes = finish()  # limits' cgroup and, once it is over, the sweep (see sweep.py)

Linux: bubblewrap (see `bwrap.py` for why). macOS: sandbox-exec with a generated
Seatbelt profile (`seatbelt.py`). Elsewhere, or where the backend cannot start, no
sandbox: `Sandbox.notice()` says so and the session asks before every shell command.
Language servers and other processes Loom starts for itself are not sandboxed.
"""

from loom.sandbox.backend import Backend, Detection, Sandbox, detect, detect_soon
from loom.sandbox.policy import MODES, Mode, SandboxPolicy, build_policy, policy_from_config
from loom.sandbox.refusals import explain_refusal

__all__ = [
    "MODES",
    "Backend",
    "Detection",
    "Mode",
    "Sandbox",
    "SandboxPolicy",
    "build_policy",
    "detect",
    "detect_soon",
    "explain_refusal",
    "policy_from_config",
]
