"""Merging two copies of one thread (pure: no I/O, no clock).

History is append-only, so two copies of a thread share a common prefix of messages:
- one copy's messages are a prefix of the other's: fast-forward to the longer one;
- both added messages after the common prefix (divergent tails): keep both tails, the
  server's first (it already has them) then ours, and report the divergence so the user
  can be told. No message is ever dropped.

Fields that are not history (agent state, git position, model, sharing) come from the
copy changed last (`updated_at`); list fields that only grow (git_commits, tags) are
unioned in order. The result's version is above both inputs so the server accepts it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from loom.core.thread import Thread

T = TypeVar("T")


class MergeKind(StrEnum):
    IDENTICAL = "identical"  # same history
    TAKE_REMOTE = "take_remote"  # ours was a prefix of theirs: fast-forward
    KEEP_LOCAL = "keep_local"  # theirs was a prefix of ours
    DIVERGED = "diverged"  # both added messages: both tails kept


@dataclass(frozen=True)
class MergeReport:
    kind: MergeKind
    common_prefix: int
    local_only: int  # messages only our copy had
    remote_only: int  # messages only the other copy had

    @property
    def diverged(self) -> bool:
        return self.kind is MergeKind.DIVERGED

    def describe(self, thread_id: str) -> str:
        if self.kind is MergeKind.DIVERGED:
            return (
                f"thread {thread_id} was changed on two machines: kept both, "
                f"{self.remote_only} message(s) from the server then {self.local_only} "
                f"from this machine, after {self.common_prefix} shared message(s)"
            )
        if self.kind is MergeKind.TAKE_REMOTE:
            return f"thread {thread_id}: took {self.remote_only} newer message(s) from the server"
        if self.kind is MergeKind.KEEP_LOCAL:
            return f"thread {thread_id}: this machine's {self.local_only} new message(s) kept"
        return f"thread {thread_id}: copies already agree"


@dataclass(frozen=True)
class MergeResult:
    thread: Thread
    report: MergeReport
    same_as_remote: bool  # True: the server already has exactly this; nothing to push


def message_key(message: Any) -> str:
    """A canonical form of one message, used to compare histories."""
    data = message.model_dump(mode="json") if hasattr(message, "model_dump") else message
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def common_prefix_length(a: list[str], b: list[str]) -> int:
    n = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        n += 1
    return n


def _union(first: list[T], second: list[T]) -> list[T]:
    out = list(first)
    for item in second:
        if item not in out:
            out.append(item)
    return out


def _not_in(messages: list[T], keys: list[str]) -> list[T]:
    """`messages` minus those already in `keys`, counting repeats (multiset difference).

    A copy that was merged before and then extended carries the other tail already;
    it must not be appended a second time.
    """
    remaining = Counter(keys)
    kept: list[T] = []
    for message in messages:
        key = message_key(message)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            kept.append(message)
    return kept


def merge_threads(local: Thread, remote: Thread) -> MergeResult:
    """Merge our copy (`local`) with the server's (`remote`) of the same thread."""
    if local.id != remote.id:
        raise ValueError(f"cannot merge different threads {local.id} and {remote.id}")
    local_msgs, remote_msgs = local.messages, remote.messages
    local_keys = [message_key(m) for m in local_msgs]
    remote_keys = [message_key(m) for m in remote_msgs]
    prefix = common_prefix_length(local_keys, remote_keys)
    local_extra = _not_in(local_msgs[prefix:], remote_keys[prefix:])
    local_only = len(local_extra)
    remote_only = len(remote_keys) - prefix

    if local_only == 0 and remote_only == 0:
        kind = MergeKind.IDENTICAL
    elif local_only == 0:
        kind = MergeKind.TAKE_REMOTE
    elif remote_only == 0:
        kind = MergeKind.KEEP_LOCAL
    else:
        kind = MergeKind.DIVERGED

    # Non-history fields from the copy changed last; ties go to the server's copy.
    newer, older = (local, remote) if local.updated_at > remote.updated_at else (remote, local)
    data = older.model_dump(mode="json")
    data.update(newer.model_dump(mode="json"))
    messages = [m.model_dump(mode="json") for m in remote_msgs] + [
        m.model_dump(mode="json") for m in local_extra
    ]
    data["conversation"] = {**data.get("conversation", {}), "messages": messages}
    data["git_commits"] = _union(remote.git_commits, local.git_commits)
    metadata = dict(data.get("metadata") or {})
    metadata["tags"] = _union(remote.metadata.tags, local.metadata.tags)
    metadata["title"] = newer.metadata.title or older.metadata.title
    data["metadata"] = metadata
    data["decision_graph"] = remote.decision_graph.merge(local.decision_graph).model_dump(
        mode="json"
    )
    data["created_at"] = min(local.created_at, remote.created_at)
    data["last_activity_at"] = max(local.last_activity_at, remote.last_activity_at)
    data["updated_at"] = max(local.updated_at, remote.updated_at)
    remote_data = remote.model_dump(mode="json")
    data["version"] = remote.version
    # Equal to the server's copy: nothing to push. Otherwise go above both versions.
    if Thread.model_validate(data).model_dump(mode="json") != remote_data:
        data["version"] = max(local.version, remote.version) + 1
    merged = Thread.model_validate(data)
    report = MergeReport(kind, prefix, local_only, remote_only)
    return MergeResult(merged, report, merged.version == remote.version)
