"""Writers for `loom run --output-format text|json|stream-json`.

Each writer receives the same session events (loom.core.events) and a final RunResult;
only the rendering differs. stream-json follows the shape of Claude Code's stream-json so
tools that read one can read the other.
"""

from __future__ import annotations

from typing import TextIO

from loom.cli.run.output.result import RunResult, RunTally
from loom.cli.run.output.writers import JsonWriter, OutputWriter, StreamJsonWriter, TextWriter

OUTPUT_FORMATS = ("text", "json", "stream-json")


def make_writer(output_format: str, out: TextIO, *, partial_messages: bool = False) -> OutputWriter:
    if output_format == "json":
        return JsonWriter(out)
    if output_format == "stream-json":
        return StreamJsonWriter(out, partial_messages=partial_messages)
    return TextWriter(out)


__all__ = [
    "OUTPUT_FORMATS",
    "JsonWriter",
    "OutputWriter",
    "RunResult",
    "RunTally",
    "StreamJsonWriter",
    "TextWriter",
    "make_writer",
]
