"""Run by the Aider venv's Python: build Aider's repo map for a repo, print its size.

Usage: python _aider_map.py ROOT TOKENS. A minimal IO and a len/4 token counter stand
in for Aider's chat IO and its litellm tokenizer (which would download a BPE file), so
what is timed is Aider's repo-map machinery and its imports.
"""

import subprocess
import sys


class QuietIO:
    def read_text(self, filename, silent=False):
        try:
            with open(filename, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError:
            return None

    def tool_output(self, *args, **kwargs):
        pass

    tool_warning = tool_error = tool_output


class CharModel:
    def token_count(self, text):
        return len(text) / 4


def main() -> None:
    root, tokens = sys.argv[1], int(sys.argv[2])
    from aider.repomap import RepoMap  # pyright: ignore[reportMissingImports]  (in its own venv)

    files = subprocess.run(
        ["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    repo_map = RepoMap(map_tokens=tokens, root=root, main_model=CharModel(), io=QuietIO())
    text = repo_map.get_repo_map([], [f"{root}/{f}" for f in files]) or ""
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
