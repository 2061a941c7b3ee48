"""Generate a synthetic thread corpus: N thread files of M messages each.

    .venv/bin/python bench/gen_threads_corpus.py --home /tmp/loom-bench --threads 10000

Files follow the thread format exactly (design.md) and are written straight into
`<home>/data/threads/` (no index: the first `loom list` builds it). Text is drawn from a
Zipf-like vocabulary so some words are common and others rare, like real conversations;
every thread has a branch, a remote, a few commit SHAs and tags. Deterministic (seeded).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid
from pathlib import Path

import orjson


def _words(text: str) -> list[str]:
    return text.split()


COMMON = _words(
    "the a to of and in is it for that this with on be as we file function test error "
    "code add fix read update return value call module class import run check data user "
    "login handler parser cache config request response token session database query "
    "thread index search list branch commit merge retry timeout server client api"
)
SYLLABLES = _words("ka lo mi ne ru ta vo xe zi pa qu do fe gi hu ja be ce")
BRANCH_TOPICS = _words("auth parser cache search sync billing export login retry ui docs")
OWNERS = _words("ana bo chen dee eli fay")


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    words = set(COMMON)
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words, key=lambda w: (w not in COMMON, rng.random()))


def sentence(rng: random.Random, vocab: list[str], weights: list[float], n: int) -> str:
    return " ".join(rng.choices(vocab, cum_weights=weights, k=n))


def uuid7(ms: int, rng: random.Random) -> str:
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rng.getrandbits(12) << 64
    value |= 0b10 << 62 | rng.getrandbits(62)
    return str(uuid.UUID(int=value))


def iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def make_thread(i: int, messages: int, rng: random.Random, vocab, weights, now_ms: int) -> dict:
    created = now_ms - rng.randint(0, 180 * 86400 * 1000)
    last = min(created + rng.randint(60_000, 3 * 3600_000), now_ms)
    topic = rng.choice(BRANCH_TOPICS)
    owner = rng.choice(OWNERS)
    shas = [f"{rng.getrandbits(160):040x}" for _ in range(rng.randint(1, 4))]
    convo = []
    for m in range(messages):
        text = sentence(rng, vocab, weights, rng.randint(10, 40))
        if m % 3 == 0:
            convo.append({"role": "user", "content": text})
        elif m % 3 == 1:
            call = {
                "id": f"call_{i}_{m}",
                "tool_name": "file_read",
                "arguments_json": {"path": f"src/{topic}/{rng.choice(vocab)}.py"},
            }
            convo.append({"role": "assistant", "content": text, "tool_calls": [call]})
        else:
            convo.append(
                {
                    "role": "tool",
                    "tool_call_id": f"call_{i}_{m - 1}",
                    "tool_name": "file_read",
                    "content": text,
                }
            )
    title = sentence(rng, vocab, weights, rng.randint(3, 8)).capitalize()
    convo[0]["content"] = title + ". " + convo[0]["content"]
    return {
        "schema_version": 1,
        "id": f"T-{uuid7(created, rng)}",
        "version": messages,
        "created_at": iso(created),
        "updated_at": iso(last),
        "last_activity_at": iso(last),
        "workspace_root": f"/home/{owner}/proj-{topic}",
        "cwd": f"/home/{owner}/proj-{topic}",
        "loom_version": "0.1.0",
        "git_branch": f"feature/{topic}-{i % 97}",
        "git_remote_url": f"github.com/{owner}/proj-{topic}",
        "git_initial_branch": "main",
        "git_initial_commit_sha": shas[0],
        "git_current_commit_sha": shas[-1],
        "git_commits": shas,
        "git_start_dirty": False,
        "git_end_dirty": rng.random() < 0.3,
        "provider": "anthropic",
        "model": "claude-sonnet-4-6",
        "conversation": {"messages": convo},
        "agent_state": {
            "kind": "WaitingForUserInput",
            "retries": 0,
            "last_error": None,
            "pending_tool_calls": [],
        },
        "metadata": {"title": title, "tags": [topic], "pinned": False},
        "is_private": False,
        "visibility": "organization",
        "is_shared_with_support": False,
    }


def generate(home: Path, threads: int, messages: int, seed: int = 7) -> Path:
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights, total = [], 0.0
    for rank in range(1, len(vocab) + 1):  # Zipf: the k-th word has weight 1/k
        total += 1.0 / rank
        weights.append(total)
    out = home / "data" / "threads"
    out.mkdir(parents=True, exist_ok=True)
    now_ms = int(time.time() * 1000)
    for i in range(threads):
        data = make_thread(i, messages, rng, vocab, weights, now_ms)
        (out / f"{data['id']}.json").write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    meta = {
        "threads": threads,
        "messages": messages,
        "seed": seed,
        "rare_word": vocab[3000],
        "mid_word": vocab[300],
    }
    (home / "corpus.json").write_text(json.dumps(meta))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path("/tmp/loom-bench"))
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=50)
    args = parser.parse_args()
    started = time.perf_counter()
    out = generate(args.home, args.threads, args.messages)
    print(
        f"wrote {args.threads} threads x {args.messages} messages to {out} "
        f"in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
