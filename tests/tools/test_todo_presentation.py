"""How a todo_write call is shown by every face: its items, never its JSON."""

from __future__ import annotations

import json

from loom.tools.presentation import present
from loom.tools.todo import TodoWrite


def test_a_long_list_is_cut_between_words_and_a_json_string_is_read() -> None:
    todos = [{"content": f"Step {n}: rename the helper everywhere", "status": "pending"}
             for n in range(1, 8)]  # fmt: skip
    shown = present(TodoWrite(), "todo_write", {"todos": json.dumps(todos)})
    assert shown.subject.startswith("0/7 done: [ ] Step 1: rename the helper everywhere · [ ]")
    assert shown.subject.endswith("…") and len(shown.subject) <= 120
    words = set(" ".join(t["content"] for t in todos).split()) | {"0/7", "done:", "·", "[", "]"}
    assert all(word in words for word in shown.subject[:-1].split())  # no word cut in two
    assert "{" not in shown.subject
    assert present(TodoWrite(), "todo_write", {"todos": []}).subject == "cleared"
