"""`web_fetch`: read a web page as Markdown.

GET with a timeout and a size cap, HTML converted to Markdown (headings, links, lists,
code; scripts and styles dropped) with `html-to-markdown`, returned with the final URL.
Every URL, the first and each redirect's, goes through `_netguard.check_url`: public
addresses only unless `[web_fetch] allow_hosts` lists the host, and the connection is
pinned to the address that was checked. It asks like a network tool; an "allow always"
covers the host (`permission_subject`).

With `prompt`, a page longer than `max_length` keeps the sections whose words match the
prompt best (no model is called), so the model can ask for the part it needs.

A page's text never carries a terminal's control characters: a charset whose decoding
hides them from the bytes (UTF-7: `+ABs-` is ESC) is read as UTF-8, as browsers do, and
whatever controls the decoded text still holds are written as escapes (`\\x1b`).
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any
from urllib.parse import urljoin, urlsplit

from loom.core.text import visible_block
from loom.tools._netguard import HostAllowList, Refused, Resolver, Target, check_url
from loom.tools._netguard import system_resolver as _system_resolver
from loom.tools.base import Risk, ToolContext, ToolError, ToolResult
from loom.tools.builtin import BuiltinTool, schema
from loom.tools.presentation import one_line

DEFAULT_TIMEOUT_S = 20.0
DEFAULT_MAX_BYTES = 5_000_000
DEFAULT_MAX_LENGTH = 20_000
MAX_LENGTH = 100_000
MAX_REDIRECTS = 5
USER_AGENT = "Loom web_fetch (a coding assistant reading a page for its user)"
_TEXT_TYPES = ("text/plain", "text/markdown", "text/x-markdown", "text/csv", "application/json",
               "application/xml", "text/xml", "application/javascript", "text/javascript",
               "text/css", "application/x-yaml", "text/yaml")  # fmt: skip
_HTML_TYPES = ("text/html", "application/xhtml+xml")


class WebFetch(BuiltinTool):
    name = "web_fetch"
    description = (
        "Fetch a public http(s) page as Markdown, with its final URL. Local and private "
        "addresses are refused."
    )
    parameters = schema(
        {
            "url": {"type": "string", "minLength": 1},
            "prompt": {
                "type": "string",
                "description": "What you seek (long pages keep the best parts).",
            },
            "max_length": {
                "type": "integer",
                "minimum": 500,
                "maximum": MAX_LENGTH,
                "default": DEFAULT_MAX_LENGTH,
            },
        },
        required=("url",),
    )
    risk: Risk = "execute"  # it reaches the network: asks like a network tool
    subject_kind = "exact"
    kind = "fetch"

    def title(self, args: dict[str, Any]) -> str:
        url = args.get("url")
        return f"Fetch {one_line(url)}" if isinstance(url, str) and url else self.name

    def __init__(
        self,
        project_root: Any = None,
        *,
        allow_hosts: list[str] | tuple[str, ...] = (),
        timeout: float = DEFAULT_TIMEOUT_S,
        max_bytes: int = DEFAULT_MAX_BYTES,
        resolver: Resolver | None = None,
    ) -> None:
        super().__init__(project_root)
        self.allow = HostAllowList(allow_hosts)
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.resolver = resolver or _system_resolver

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        """The host (with a port other than the scheme's): a grant covers that host."""
        url = args.get("url") if isinstance(args, dict) else None
        if not isinstance(url, str):
            return None
        parts = urlsplit(url.strip())
        try:
            host, port = (parts.hostname or "").lower(), parts.port
        except ValueError:
            return url.strip()
        default = {"http": 80, "https": 443}.get(parts.scheme.lower())
        return host if port in (None, default) else f"{host}:{port}"

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.timeout):
                page = await self._fetch(args["url"])
        except TimeoutError:
            raise ToolError(
                f"{args['url']} did not answer within {self.timeout:g} s; try again later or "
                "another page"
            ) from None
        except Refused as exc:
            raise ToolError(f"web_fetch refused {args['url']}: {exc}") from None
        text = await asyncio.to_thread(page.as_text)
        shown, note = shorten(text, args["max_length"], args.get("prompt") or "")
        header = [f"URL: {page.url}"]
        if page.url != args["url"]:
            header.append(f"(redirected from {args['url']})")
        header.append(
            f"Status: {page.status}; {page.content_type or 'no content type'}; "
            f"{page.size:,} bytes{' (cut at the size cap)' if page.capped else ''}"
        )
        body = "\n".join(header) + "\n\n" + (shown or "(the page has no text)")
        if note:
            body += f"\n\n{note}"
        meta = {"url": page.url, "status": page.status, "bytes": page.size,
                "seconds": round(time.monotonic() - started, 3)}  # fmt: skip
        return ToolResult(body, is_error=page.status >= 400, metadata=meta)

    async def _fetch(self, url: str) -> Page:
        import httpx

        # trust_env=False: a proxy from the environment would connect on our behalf to
        # addresses this tool never checked
        async with httpx.AsyncClient(trust_env=False, follow_redirects=False) as client:
            for _hop in range(MAX_REDIRECTS + 1):
                target = await asyncio.to_thread(check_url, url, self.allow, self.resolver)
                request = _pinned_request(client, target)
                response = await client.send(request, stream=True)
                try:
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        url = urljoin(url, location)
                        continue
                    return await self._read(response, url)
                finally:
                    await response.aclose()
        raise ToolError(f"web_fetch stopped after {MAX_REDIRECTS} redirects (last: {url})")

    async def _read(self, response: Any, url: str) -> Page:
        content_type = response.headers.get("content-type", "")
        kind = content_type.split(";", 1)[0].strip().lower()
        if kind and not (kind in _HTML_TYPES or kind in _TEXT_TYPES or kind.startswith("text/")
                         or kind.endswith(("+json", "+xml"))):  # fmt: skip
            raise ToolError(f"{url} is {kind}, not a page of text; web_fetch reads HTML and text")
        chunks: list[bytes] = []
        size = 0
        capped = False
        async for chunk in response.aiter_raw():
            chunks.append(chunk)
            size += len(chunk)
            if size >= self.max_bytes:
                capped = True
                break
        data = b"".join(chunks)[: self.max_bytes]
        data = _decoded(data, response.headers.get("content-encoding", ""), self.max_bytes)
        encoding = response.charset_encoding or "utf-8"
        return Page(url, response.status_code, content_type, data, encoding, capped)


class Page:
    def __init__(
        self, url: str, status: int, content_type: str, data: bytes, encoding: str,
        capped: bool,
    ) -> None:  # fmt: skip
        self.url = url
        self.status = status
        self.content_type = content_type
        self.data = data
        self.size = len(data)
        self.encoding = encoding
        self.capped = capped

    def as_text(self) -> str:
        try:
            text = self.data.decode(web_encoding(self.encoding), errors="replace")
        except LookupError:  # an encoding name Python does not know
            text = self.data.decode("utf-8", errors="replace")
        kind = self.content_type.split(";", 1)[0].strip().lower()
        looks_html = kind in _HTML_TYPES or (not kind and "<html" in text[:2048].lower())
        text = html_to_markdown(text, self.url) if looks_html else text.strip()
        return visible_block(text, controls_only=True)


def web_encoding(label: str) -> str:
    """The codec to decode a page declared `label` with: one of the web's own encodings
    (the WHATWG Encoding standard's: UTF-8, UTF-16, the single-byte and the CJK ones);
    anything else (UTF-7, `unicode_escape`, HZ: escapes that spell any character, ESC
    too, out of harmless bytes) falls back to UTF-8, as browsers do."""
    import codecs

    try:
        name = codecs.lookup(label).name
    except LookupError:
        return "utf-8"
    return name if name in _WEB_ENCODINGS or name.startswith(_WEB_FAMILIES) else "utf-8"


_WEB_ENCODINGS = {"utf-8", "utf-16", "utf-16-be", "utf-16-le", "ascii", "big5", "gbk",
                  "gb18030", "gb2312", "euc_jp", "euc_kr", "shift_jis", "iso2022_jp",
                  "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "tis-620", "cp866",
                  "cp874"}  # fmt: skip
_WEB_FAMILIES = ("iso8859-", "cp125")  # ISO-8859-x, windows-125x


def html_to_markdown(html: str, base_url: str = "") -> str:
    """Markdown of an HTML page: scripts, styles, images and metadata dropped."""
    import html_to_markdown as h2m

    # links made absolute against the page's URL, so the model can fetch them next
    options = h2m.ConversionOptions(extract_metadata=False, skip_images=True, base_url=base_url)
    result = h2m.convert(html, options)
    text = (result.content if hasattr(result, "content") else str(result)) or ""
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def shorten(text: str, limit: int, prompt: str = "") -> tuple[str, str]:
    """(text cut to `limit` characters, a note for the model; "" when nothing was cut).
    With a prompt, the sections that share the most words with it are kept, in order."""
    if len(text) <= limit:
        return text, ""
    total = len(text)
    words = {w for w in re.findall(r"\w{3,}", prompt.lower())}
    if words:
        sections = re.split(r"\n(?=#{1,6} )", text)
        scored = sorted(
            range(len(sections)),
            key=lambda i: -sum(sections[i].lower().count(w) for w in words),
        )
        keep: set[int] = set()
        used = 0
        for index in scored:
            if used + len(sections[index]) > limit:
                continue
            keep.add(index)
            used += len(sections[index]) + 2
        if keep:
            chosen = "\n\n".join(sections[i] for i in sorted(keep))
            return chosen, (
                f"[web_fetch: showing {len(keep)} of {len(sections)} sections that best match "
                f"the prompt ({len(chosen):,} of {total:,} characters)]"
            )
    return text[:limit].rstrip(), (
        f"[web_fetch: cut at {limit:,} of {total:,} characters. Call again with a `prompt` "
        f"saying what you need, or a larger max_length (up to {MAX_LENGTH:,})]"
    )


def _pinned_request(client: Any, target: Target) -> Any:
    """A GET to the checked address with the original Host (and TLS name)."""
    import httpx

    pinned = httpx.URL(target.url).copy_with(host=target.address)
    headers = {"Host": target.host_header, "User-Agent": USER_AGENT,
               "Accept": "text/html,text/plain;q=0.9,*/*;q=0.5",
               "Accept-Encoding": "gzip, deflate"}  # fmt: skip
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    return client.build_request("GET", pinned, headers=headers, extensions=extensions)


def _decoded(data: bytes, encoding: str, limit: int) -> bytes:
    """Undo gzip/deflate (raw bytes were read, to cap the size before inflating)."""
    import zlib

    encoding = encoding.strip().lower()
    if encoding not in ("gzip", "deflate", "x-gzip"):
        return data
    wbits = 16 + zlib.MAX_WBITS if "gzip" in encoding else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    try:
        out = inflater.decompress(data, limit)  # a zip bomb stops at the size cap
    except zlib.error:
        raise ToolError("the page's compressed body is damaged") from None
    return out
