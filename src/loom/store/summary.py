"""What the index needs from a thread file, read with the standard library only.

`extract_record(data, file_id)` checks the structure of a parsed thread file (the
checks that decide quarantine: not an object, wrong types, a newer `schema_version`,
an id that does not match the file name) and returns an `IndexRecord`. It runs on the
`loom list` fast path, so it must not import pydantic.
"""

from __future__ import annotations

from loom.core.schema import SCHEMA_VERSION
from loom.core.shapes import shape_problem

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

MAX_INDEXED_CHARS_PER_MESSAGE = 32_000
"""Longer message text (typically a tool's output) is indexed up to this many characters."""

ROLES = ("user", "assistant", "tool", "system")
AGENT_STATE_KINDS = (
    "WaitingForUserInput",
    "CallingLlm",
    "ProcessingLlmResponse",
    "ExecutingTools",
    "PostToolsHook",
    "Error",
    "ShuttingDown",
)
VISIBILITIES = ("organization", "private", "public")
_OPTIONAL_STR = (str, type(None))
_OPTIONAL_BOOL = (bool, type(None))
# Types of the optional fields, checked so that a file the index accepts also loads.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "workspace_root": _OPTIONAL_STR,
    "cwd": _OPTIONAL_STR,
    "loom_version": _OPTIONAL_STR,
    "git_branch": _OPTIONAL_STR,
    "git_remote_url": _OPTIONAL_STR,
    "git_initial_branch": _OPTIONAL_STR,
    "git_initial_commit_sha": _OPTIONAL_STR,
    "git_current_commit_sha": _OPTIONAL_STR,
    "git_start_dirty": _OPTIONAL_BOOL,
    "git_end_dirty": _OPTIONAL_BOOL,
    "provider": _OPTIONAL_STR,
    "model": _OPTIONAL_STR,
    "is_private": (bool,),
    "is_shared_with_support": (bool,),
    "parent_thread_id": _OPTIONAL_STR,
    "parent_call_id": _OPTIONAL_STR,
    "agent": _OPTIONAL_STR,
    "worktree": (dict, type(None)),
}


TIMESTAMP_FIELDS = ("created_at", "updated_at", "last_activity_at")


class BadThreadFile(ValueError):
    """A thread file that cannot be used; the message is the quarantine reason."""


class IndexRecord:
    """One thread as the index stores it (a plain class: dataclasses cost start-up time)."""

    def __init__(
        self,
        *,
        id: str,
        title: str,
        version: int,
        created_at: str,
        last_activity_at: str,
        message_count: int,
        git_branch: str | None = None,
        git_remote_url: str | None = None,
        workspace_root: str | None = None,
        agent_state_kind: str | None = None,
        is_private: bool = False,
        visibility: str = "organization",
        tags: list[str] | None = None,
        commits: list[str] | None = None,
        message_texts: list[str] | None = None,
        first_message: int = 0,
        parent_thread_id: str | None = None,
    ) -> None:
        self.id = id
        self.title = title
        self.version = version
        self.created_at = created_at
        self.last_activity_at = last_activity_at
        self.message_count = message_count
        self.git_branch = git_branch
        self.git_remote_url = git_remote_url
        self.workspace_root = workspace_root
        self.agent_state_kind = agent_state_kind
        self.is_private = is_private
        self.visibility = visibility
        self.tags = tags or []
        self.commits = commits or []
        self.message_texts = message_texts or []
        """Searchable text of messages[first_message:] (all of them unless incremental)."""
        self.first_message = first_message
        self.parent_thread_id = parent_thread_id  # a sub-agent's thread: its parent's
        self.repairs: list[str] = []
        """What `repair_timestamps` changed to make the file usable (then it must be
        written back: see loom.store.repair)."""
        self.repaired_data: dict[str, Any] | None = None

    def clean_text(self) -> None:
        """Repair lone surrogates in every text the index stores (SQLite needs UTF-8)."""
        from loom.core.text import clean_text

        for name in ("title", "git_branch", "git_remote_url", "workspace_root", "agent_state_kind"):
            value = getattr(self, name)
            if isinstance(value, str):
                setattr(self, name, clean_text(value))
        self.tags = [clean_text(t) for t in self.tags]
        self.commits = [clean_text(c) for c in self.commits]
        self.message_texts = [clean_text(t) for t in self.message_texts]

    @property
    def meta_text(self) -> str:
        """The header row of the search index: everything but the conversation."""
        parts = [
            *self.tags,
            self.git_branch or "",
            self.git_remote_url or "",
            self.workspace_root or "",
            *self.commits,
            self.id,
        ]
        return " ".join(p for p in parts if p)


def parse_thread_bytes(raw: bytes, file_id: str) -> IndexRecord:
    """Parse and check a thread file's bytes; raise BadThreadFile with the reason."""
    if not raw.strip():
        raise BadThreadFile("the file is empty")
    if b"\x00" in raw:
        raise BadThreadFile("the file contains NUL bytes (truncated or padded by a crash)")
    import json

    try:
        data = json.loads(raw)
        repairs = repair_timestamps(data)
        record = extract_record(data, file_id)
    except UnicodeDecodeError as exc:
        raise BadThreadFile(f"the file is not UTF-8 text ({exc.reason})") from None
    except RecursionError:
        raise BadThreadFile("the file nests JSON too deeply to read safely") from None
    except BadThreadFile:
        raise
    except ValueError as exc:
        raise BadThreadFile(f"the file is not valid JSON ({exc})") from None
    if repairs:
        record.repairs = repairs
        record.repaired_data = data
    return record


def is_timestamp(value: Any) -> bool:
    """An ISO 8601 text that `humanize_age` and sorting can use."""
    if not isinstance(value, str) or len(value) > 64:
        return False
    from datetime import UTC

    from loom.core.clock import parse_iso

    try:
        moment = parse_iso(value)
        moment.astimezone(UTC)  # years 1 and 9999 with an offset fail here, not in `loom list`
    except (ValueError, OverflowError, OSError):
        return False
    return True


def repair_timestamps(data: Any) -> list[str]:
    """Replace unusable created_at / updated_at / last_activity_at in `data` (in place)
    with the nearest usable one; returns what was changed (empty when nothing was).

    A thread with no usable timestamp at all gets the Unix epoch, so it sorts last and
    still opens; the original is kept in quarantine by the caller."""
    if not isinstance(data, dict):
        return []
    bad = [k for k in TIMESTAMP_FIELDS if k in data and not is_timestamp(data[k])]
    if not bad:
        return []
    order = ("last_activity_at", "updated_at", "created_at")
    good = [data[k] for k in order if k not in bad and k in data]
    fallback = good[0] if good else "1970-01-01T00:00:00.000Z"
    changes = []
    for key in bad:
        shown = repr(data[key])[:40]
        changes.append(f"{key} {shown} is not a timestamp; set to {fallback}")
        data[key] = fallback
    return changes


def extract_record(data: Any, file_id: str | None) -> IndexRecord:
    if not isinstance(data, dict):
        raise BadThreadFile(f"expected a JSON object, found {type(data).__name__}")
    schema = data.get("schema_version", 1)
    if not _is_int(schema):
        raise BadThreadFile("schema_version must be an integer")
    if schema > SCHEMA_VERSION:
        raise BadThreadFile(
            f"written by a newer Loom (schema_version {schema}; this Loom reads up to "
            f"{SCHEMA_VERSION}); upgrade Loom to read it"
        )
    thread_id = _field(data, "id", str)
    if file_id is not None and thread_id != file_id:
        raise BadThreadFile(f"the id inside ({thread_id}) does not match the file name")
    version = _field(data, "version", int)
    created_at = _field(data, "created_at", str)
    for key, kinds in _FIELD_TYPES.items():
        if key in data and not isinstance(data[key], kinds):
            raise BadThreadFile(f"the field {key} has the wrong type ({type(data[key]).__name__})")
    if data.get("visibility", "organization") not in VISIBILITIES:
        raise BadThreadFile(f"visibility must be one of {', '.join(VISIBILITIES)}")
    last_activity = data.get("last_activity_at") or data.get("updated_at") or created_at
    if not isinstance(last_activity, str):
        raise BadThreadFile("last_activity_at must be a string")
    conversation = _field(data, "conversation", dict, default={})
    messages = _field(conversation, "messages", list, default=[], where="conversation.")
    texts = [message_text_of(m, i) for i, m in enumerate(messages)]
    metadata = _field(data, "metadata", dict, default={})
    agent_state = _field(data, "agent_state", dict, default={})
    if agent_state.get("kind", AGENT_STATE_KINDS[0]) not in AGENT_STATE_KINDS:
        raise BadThreadFile(f"agent_state.kind {agent_state.get('kind')!r} is not a known state")
    tags = _field(metadata, "tags", list, default=[], where="metadata.")
    commits = _field(data, "git_commits", list, default=[])
    if not all(isinstance(t, str) for t in tags + commits):
        raise BadThreadFile("metadata.tags and git_commits must be lists of strings")
    title = _optional(metadata, "title", str, "metadata.") or "(untitled)"
    problem = shape_problem(data)  # a value git or the file system would see as more
    if problem is not None:
        raise BadThreadFile(problem)
    return IndexRecord(
        id=thread_id,
        title=title,
        version=version,
        created_at=created_at,
        last_activity_at=last_activity,
        message_count=len(messages),
        git_branch=_optional(data, "git_branch", str),
        git_remote_url=_optional(data, "git_remote_url", str),
        workspace_root=_optional(data, "workspace_root", str),
        agent_state_kind=_optional(agent_state, "kind", str, "agent_state."),
        is_private=bool(_optional(data, "is_private", bool)),
        visibility=_optional(data, "visibility", str) or "organization",
        tags=tags,
        commits=commits,
        message_texts=texts,
        parent_thread_id=_optional(data, "parent_thread_id", str),
    )


def message_text_of(message: Any, index: int = 0) -> str:
    """The searchable text of a message dict (same as core.messages.message_text)."""
    if not isinstance(message, dict):
        raise BadThreadFile(f"message {index} is not an object")
    role = message.get("role")
    if role not in ROLES:
        raise BadThreadFile(f"message {index} has an unknown role {role!r}")
    content = message.get("content", "")
    if not isinstance(content, str):
        raise BadThreadFile(f"message {index} content must be a string")
    calls = message.get("tool_calls") or []
    if role == "assistant" and calls:
        import json

        if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
            raise BadThreadFile(f"message {index} tool_calls must be a list of objects")
        parts = " ".join(
            f"{c.get('tool_name')} {json.dumps(c.get('arguments_json', {}), ensure_ascii=False)}"
            for c in calls
        )
        content = f"{content} {parts}".strip()
    if role == "assistant" and not all(
        isinstance(c.get("id"), str) and isinstance(c.get("tool_name"), str) for c in calls
    ):
        raise BadThreadFile(f"message {index}: every tool call needs an id and a tool_name")
    if role == "tool" and not (
        isinstance(message.get("tool_call_id"), str) and isinstance(message.get("tool_name"), str)
    ):
        raise BadThreadFile(f"message {index} (tool) needs tool_call_id and tool_name strings")
    return content[:MAX_INDEXED_CHARS_PER_MESSAGE]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _field(data: dict[str, Any], key: str, kind: type, default: Any = None, where: str = "") -> Any:
    if key not in data:
        if default is not None:
            return default
        raise BadThreadFile(f"the field {where}{key} is missing")
    value = data[key]
    if (kind is int and not _is_int(value)) or not isinstance(value, kind):
        raise BadThreadFile(f"the field {where}{key} must be of type {kind.__name__}")
    return value


def _optional(data: dict[str, Any], key: str, kind: type, where: str = "") -> Any:
    value = data.get(key)
    if value is not None and not isinstance(value, kind):
        raise BadThreadFile(f"the field {where}{key} must be of type {kind.__name__} or null")
    return value
