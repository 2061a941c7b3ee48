"""Jinja2 templates (package data under templates/) and the fragments the stream sends."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

TEMPLATES = Path(__file__).parent / "templates"


@lru_cache(maxsize=1)
def env() -> Environment:
    environment = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["duration"] = format_duration
    environment.filters["money"] = format_money
    environment.filters["tokens"] = format_tokens
    environment.filters["when"] = format_when
    return environment


def page(name: str, **context: Any) -> str:
    return env().get_template(name).render(**context)


def fragment(macro: str, *args: Any, **kwargs: Any) -> Markup:
    """One macro of `_parts.html`, rendered alone (what the stream and the API send)."""
    module = env().get_template("_parts.html").module
    return Markup(getattr(module, macro)(*args, **kwargs))


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


def format_money(value: float | None) -> str:
    """`$0.42`, `$0.0042`; None (a model with no known price) is "unknown", never $0."""
    if value is None:
        return "unknown"
    if value and value < 0.01:
        return f"${value:.4f}"
    return f"${value:.2f}"


def format_tokens(value: float | None) -> str:
    value = int(value or 0)
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


def format_when(iso: str | None) -> str:
    """2026-11-22T09:20:44.871Z -> 2026-11-22 09:20 (UTC, as stored)."""
    if not iso:
        return ""
    return iso[:16].replace("T", " ")
