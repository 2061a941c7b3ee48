"""Text to safe HTML on the server: Markdown (markdown-it-py, raw HTML escaped), code
highlighted by Pygments (CSS classes, styles in `code_css()`), and unified diffs."""

from __future__ import annotations

import difflib
from functools import lru_cache
from html import escape

from markupsafe import Markup

MAX_HIGHLIGHT_CHARS = 200_000  # past this a file is shown plain: Pygments is ~1 MB/s


@lru_cache(maxsize=1)
def _markdown():  # type: ignore[no-untyped-def]
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight_fence})
    md.enable("table").enable("strikethrough")
    return md


def markdown(text: str) -> Markup:
    """Markdown to HTML. Raw HTML in the text is shown as text, never run."""
    return Markup(_markdown().render(text or ""))


def _highlight_fence(code: str, lang: str, _attrs: str) -> str:
    return highlight(code, language=lang or None)


def highlight(code: str, *, language: str | None = None, filename: str | None = None) -> str:
    """`<pre class="code">` with Pygments token classes (plain text if unknown)."""
    from pygments import highlight as pyg_highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
    from pygments.util import ClassNotFound

    if len(code) > MAX_HIGHLIGHT_CHARS:
        return f'<pre class="code"><code>{escape(code)}</code></pre>'
    lexer = None
    try:
        if language:
            lexer = get_lexer_by_name(language)
        elif filename:
            lexer = get_lexer_for_filename(filename, code)
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return f'<pre class="code"><code>{escape(code)}</code></pre>'
    formatter = HtmlFormatter(nowrap=True)
    return f'<pre class="code hl"><code>{pyg_highlight(code, lexer, formatter)}</code></pre>'


@lru_cache(maxsize=1)
def code_css() -> str:
    """Token colours for both themes; the dark set applies under prefers-color-scheme."""
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style="friendly").get_style_defs(".hl")
    dark = HtmlFormatter(style="monokai").get_style_defs(".hl")
    # backgrounds come from our own stylesheet, so both themes keep the page's surface
    strip = "\n".join(line for line in dark.splitlines() if "background" not in line)
    light = "\n".join(line for line in light.splitlines() if "background" not in line)
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{strip}\n}}\n"


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=3,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diff_html(diff: str) -> Markup:
    """A unified diff as coloured lines (added, removed, hunk headers)."""
    rows = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---", "diff ", "index ", "new file", "deleted file")):
            kind = "meta"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        rows.append(f'<span class="d-{kind}">{escape(line) or " "}</span>')
    return Markup(f'<pre class="diff">{"".join(rows)}</pre>')  # the spans are blocks


def snippet_html(snippet: str) -> Markup:
    """A search snippet whose matches the index marked **like this**, as <mark>."""
    parts = escape(snippet).split("**")
    out = [f"<mark>{p}</mark>" if i % 2 else p for i, p in enumerate(parts)]
    return Markup("".join(out))
