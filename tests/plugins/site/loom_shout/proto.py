"""A `loom.extractors` plugin for the tests: Protocol Buffers messages and services."""

from __future__ import annotations

import re

_DEFINITION = re.compile(rb"^[ \t]*(message|service|enum)\s+([A-Za-z_]\w*)", re.MULTILINE)


class ProtoExtractor:
    language = "proto"
    extensions = (".proto",)

    def extract(self, data: bytes) -> list[tuple[str, int, str]]:
        return [
            (m.group(2).decode(), data.count(b"\n", 0, m.start()) + 1, m.group(1).decode())
            for m in _DEFINITION.finditer(data)
        ]


extractor = ProtoExtractor()
