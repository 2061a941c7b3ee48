"""Images through `loom run` and the real SDKs against the fake LLM server: `@shot.png`
and a pasted path become image parts, file_read of an image reaches a model that takes
images, the thread keeps a reference + hash (the bytes live once in the image store),
and what cannot be sent says so plainly."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.config_files import user_config
from tests.support.images import png
from tests.support.loom_cli import Done
from tests.support.wire import tool_results

from loom.core.images import MAX_IMAGE_BYTES, MAX_IMAGES_PER_MESSAGE


def thread_of(done: Done) -> dict:
    thread_id = json.loads(done.stdout)["thread_id"]
    path = next(Path(os.environ["LOOM_HOME"]).rglob(f"{thread_id}.json"))
    return json.loads(path.read_text())


def test_mentioned_and_pasted_images_reach_anthropic_as_image_blocks(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    shot = png(seed=1)
    (project / "shot.png").write_bytes(shot)
    desktop = tmp_path / "Desktop"
    desktop.mkdir()
    pasted = png(seed=2)
    (desktop / "Screen Shot.png").write_bytes(pasted)
    server.add(Turn(text="A red square."))
    escaped = str(desktop / "Screen Shot.png").replace(" ", "\\ ")  # as a terminal pastes it
    prompt = f"what is in @shot.png and {escaped}?"
    done = cli(["run", "-p", prompt, "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    (user,) = server.requests[0].json["messages"]
    images = [b for b in user["content"] if b["type"] == "image"]
    assert [base64.b64decode(b["source"]["data"]) for b in images] == [pasted, shot]
    assert images[0]["source"]["media_type"] == "image/png"
    message = thread_of(done)["conversation"]["messages"][0]
    assert [i["sha256"] for i in message["images"]] == [
        hashlib.sha256(pasted).hexdigest(), hashlib.sha256(shot).hexdigest()]  # fmt: skip
    assert base64.b64encode(shot).decode() not in json.dumps(message)  # a reference only
    stored = list((Path(os.environ["LOOM_HOME"]) / "data" / "images").rglob("*.png"))
    assert sorted(p.read_bytes() for p in stored) == sorted([shot, pasted])
    # resumed in a new process: the images come back from the store, by their hash
    server.add(Turn(text="Still red."))
    thread_id = json.loads(done.stdout)["thread_id"]
    again = cli(["run", "-r", thread_id, "-p", "and now?"], project, server)
    assert again.returncode == 0, again.stderr
    first = server.requests[-1].json["messages"][0]
    assert [base64.b64decode(b["source"]["data"]) for b in first["content"]
            if b["type"] == "image"] == [pasted, shot]  # fmt: skip


def test_openai_gets_input_image_parts(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "shot.png").write_bytes(png())
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "see @shot.png", "--model", "openai:gpt-5"], project, server)
    assert done.returncode == 0, done.stderr
    user = server.requests[0].json["input"][-1]  # the Responses API
    assert user["content"][0] == {"type": "input_text", "text": "see @shot.png"}
    assert user["content"][1]["image_url"].startswith("data:image/png;base64,iVBOR")


def test_chat_completions_gets_image_url_parts(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "shot.png").write_bytes(png())
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "see @shot.png", "--model", "openai-compatible:gpt-5"],
               project, server, **_compatible_env(server))  # fmt: skip
    assert done.returncode == 0, done.stderr
    user = server.requests[0].json["messages"][-1]
    assert user["content"][0] == {"type": "text", "text": "see @shot.png"}
    assert user["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")


def _compatible_env(server: FakeLlmServer) -> dict[str, str]:
    """Chat Completions at the fake (openai-compatible speaks it)."""
    return {"OPENAI_COMPATIBLE_BASE_URL": server.openai_base_url, "OPENAI_COMPATIBLE_API_KEY": "k"}


def test_a_model_without_images_is_told_plainly_nothing_sent(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "shot.png").write_bytes(png())
    env = {"OPENAI_COMPATIBLE_BASE_URL": server.openai_base_url, "OPENAI_COMPATIBLE_API_KEY": "k"}
    done = cli(["run", "-p", "see @shot.png", "--model", "openai-compatible:qwen2.5-coder"],
               project, server, **env)  # fmt: skip
    assert done.returncode == 1
    assert "openai-compatible:qwen2.5-coder does not take images" in done.stderr
    assert server.requests == []


def test_a_local_vision_model_told_in_config_gets_the_image(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    shot = png(seed=3)
    (project / "shot.png").write_bytes(shot)
    env = {"OPENAI_COMPATIBLE_BASE_URL": server.openai_base_url, "OPENAI_COMPATIBLE_API_KEY": "k"}
    args = ["run", "-p", "see @shot.png", "--model", "openai-compatible:llava"]
    refused = cli(args, project, server, **env)
    assert refused.returncode == 1 and "does not take images" in refused.stderr
    assert '[models."openai-compatible:llava"] images = true' in refused.stderr  # the way out
    user_config('[models."openai-compatible:llava"]\nimages = true\n')
    server.add(Turn(text="A small picture."))
    done = cli(args, project, server, **env)
    assert done.returncode == 0, done.stderr
    parts = server.requests[0].json["messages"][-1]["content"]
    (image,) = [p for p in parts if p["type"] == "image_url"]
    assert image["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(shot).decode()
    # the setting is checked: a value that is not true/false, or a name with no model
    for bad, said in [
        ('[models."openai-compatible:llava"]\nimages = "yes"\n', "images"),
        ('[models.llava]\nimages = true\n', "names no model"),
    ]:
        user_config(bad)
        wrong = cli(args, project, server, **env)
        assert wrong.returncode != 0 and said in wrong.stderr, wrong.stderr


def test_size_and_count_limits(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "huge.png").write_bytes(png() + bytes(MAX_IMAGE_BYTES))
    done = cli(["run", "-p", "see @huge.png"], project, server)
    assert done.returncode == 1 and f"images up to {MAX_IMAGE_BYTES:,} bytes" in done.stderr
    names = []
    for index in range(MAX_IMAGES_PER_MESSAGE + 1):
        (project / f"s{index}.png").write_bytes(png(seed=index))
        names.append(f"@s{index}.png")
    done = cli(["run", "-p", "see " + " ".join(names)], project, server)
    assert done.returncode == 1 and f"at most {MAX_IMAGES_PER_MESSAGE} can be sent" in done.stderr
    (project / "fake.png").write_text("not an image")
    done = cli(["run", "-p", "see @fake.png"], project, server)
    assert done.returncode == 1 and "not a PNG, JPEG, GIF or WebP image" in done.stderr
    assert server.requests == []


def test_file_read_of_an_image_is_shown_to_models_that_take_it(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    image = png(seed=9)
    (project / "diagram.png").write_bytes(image)
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "diagram.png"})]))
    server.add(Turn(text="It is a diagram."))
    done = cli(["run", "-p", "look at the diagram", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    result = next(b for m in server.requests[1].json["messages"] if m["role"] == "user"
                  for b in m["content"] if b["type"] == "tool_result")  # fmt: skip
    text, block = result["content"]
    assert text["text"].startswith("diagram.png is an image (image/png")
    assert base64.b64decode(block["source"]["data"]) == image
    tool = thread_of(done)["conversation"]["messages"][2]
    assert tool["images"][0]["sha256"] == hashlib.sha256(image).hexdigest()


def test_file_read_of_an_image_reaches_chat_completions_after_the_answers_results(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    """Chat Completions takes images only in user messages, and no user message may
    stand between two results of one answer: the image follows the last result."""
    image = png(seed=4)
    (project / "diagram.png").write_bytes(image)
    calls = [FakeToolCall("file_read", {"path": "diagram.png"}, id="c1"),
             FakeToolCall("file_read", {"path": "notes.txt"}, id="c2")]  # fmt: skip
    server.add(Turn(tool_calls=calls))
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "look", "--model", "openai-compatible:gpt-5"], project, server,
               **_compatible_env(server))  # fmt: skip
    assert done.returncode == 0, done.stderr
    sent = server.requests[-1].json["messages"]
    roles = [(m["role"], m.get("tool_call_id")) for m in sent if m["role"] != "system"]
    assert roles == [("user", None), ("assistant", None), ("tool", "c1"), ("tool", "c2"),
                     ("user", None)]  # fmt: skip
    first, _second = tool_results(server.requests[-1])
    assert first.startswith("diagram.png is an image") and "cannot be shown" not in first
    note, part = sent[-1]["content"]
    assert "tool call c1" in note["text"]
    assert part["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(image).decode()


def test_file_read_of_an_image_reaches_gemini_in_the_result_turn(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    image = png(seed=5)
    (project / "diagram.png").write_bytes(image)
    server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": "diagram.png"})]))
    server.add(Turn(text="ok"))
    env = {"GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": server.google_base_url}
    done = cli(["run", "-p", "look", "--model", "google:gemini-2.5-flash"], project, server, **env)
    assert done.returncode == 0, done.stderr
    last = server.requests[-1].json["contents"][-1]
    assert last["role"] == "user"
    response, inline = last["parts"]
    assert response["functionResponse"]["response"]["result"].startswith("diagram.png is an")
    assert base64.b64decode(inline["inlineData"]["data"]) == image
