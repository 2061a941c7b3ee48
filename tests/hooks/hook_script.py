"""A hook for the tests: logs the JSON it gets on stdin, then behaves as told.

    python hook_script.py LOG MODE [ARG]

MODE: ok | print TEXT | json JSON | block TEXT (exit 2, TEXT on stderr) | fail (exit 1) |
hang (sleeps) | flood (prints 5 MB) | block-once TEXT (exit 2 the first time only).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> int:
    log, mode = Path(sys.argv[1]), sys.argv[2]
    arg = sys.argv[3] if len(sys.argv) > 3 else ""
    data = json.load(sys.stdin)
    earlier = log.read_text().count("\n") if log.exists() else 0
    with log.open("a") as out:
        out.write(json.dumps(data) + "\n")
    if mode in ("print", "json"):
        print(arg)
    elif mode == "block" or (mode == "block-once" and earlier == 0):
        print(arg, file=sys.stderr)
        return 2
    elif mode == "fail":
        print("the linter crashed", file=sys.stderr)
        return 1
    elif mode == "hang":
        time.sleep(60)
    elif mode == "flood":
        sys.stdout.write("x" * 5_000_000)
        sys.stderr.write("y" * 5_000_000)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
