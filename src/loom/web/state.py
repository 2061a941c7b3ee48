"""What the web app holds while it runs: the Workspace, the live-session hub, caches."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loom.core.errors import NotFound
from loom.core.project_names import project_labels
from loom.web.cost import CostCache
from loom.web.live import Hub, LiveSession
from loom.web.render import snippet_html
from loom.web.security import Guard
from loom.web.views import fragment

if TYPE_CHECKING:
    from loom.session import Workspace

PAGE_SIZE = 50


class PageNotFound(NotFound):
    """A page or API call names a session or thread this web face does not have (404)."""


@dataclass
class WebState:
    ws: Workspace
    guard: Guard
    hub: Hub = field(default_factory=Hub)
    costs: CostCache = field(default_factory=CostCache)
    version: str = "0"
    _models: list[str] | None = None

    def __post_init__(self) -> None:
        self.hub.render_sidebar = lambda: fragment("live_sessions", self.live_list(), None)

    def models(self) -> list[str]:
        """Model names for the selector (from the catalog; any other may be typed)."""
        if self._models is None:
            self._models = self.ws.known_models()
        return self._models

    def live_list(self) -> list[LiveSession]:
        """Every running session of the Workspace (the page's own and any other), each
        sub-agent right under the session that started it; finished sub-agents leave."""
        active = self.ws.list_active()
        running = {a.id for a in active}
        for stale in [s for s in self.hub.sessions.values()
                      if s.parent_id and s.id not in running]:  # fmt: skip
            self.hub.remove(stale.id)
        for entry in active:
            if entry.id not in self.hub.sessions:
                session = self.ws.find_session(entry.id)
                if session is not None:
                    self.hub.add(session)
        return family_order(list(self.hub.sessions.values()))

    def live(self, session_id: str) -> LiveSession | None:
        live = self.hub.sessions.get(session_id)
        if live is None:
            session = self.ws.find_session(session_id)
            if session is not None:
                live = self.hub.add(session)
        return live

    def require_live(self, session_id: str) -> LiveSession:
        live = self.live(session_id)
        if live is None:
            raise PageNotFound(f"no live session {session_id}; resume the thread to carry on")
        return live

    def thread_rows(
        self, query: str = "", offset: int = 0, limit: int = PAGE_SIZE, all_projects: bool = False
    ) -> tuple[list[dict[str, Any]], int | None]:
        """Sidebar rows (search hits with highlighted snippets, from every project; or
        newest first, this project's unless `all_projects`) and the offset of the next
        page (None at the end)."""
        query = query.strip()
        if query:
            hits = self.ws.threads.search(query, limit=offset + limit + 1)
            page = hits[offset : offset + limit]
            rows = self._name_projects(
                [self._mark(_row(h.summary, snippet_html(h.snippet))) for h in page]
            )
            more = len(hits) > offset + limit
        else:  # a page of top-level threads, each with its sub-agents' threads under it
            project = None if all_projects else str(self.ws.project_root)
            family = self.ws.threads.families(limit=limit + 1, offset=offset, project=project)
            tops = [i for i, (_summary, depth) in enumerate(family) if depth == 0]
            more = len(tops) > limit
            page = family[: tops[limit]] if more else family
            rows = [self._mark(_row(summary, depth=depth)) for summary, depth in page]
        return self._name_projects(rows), (offset + limit if more else None)

    def _mark(self, row: dict[str, Any]) -> dict[str, Any]:
        """A thread of another project is listed with that project's name: it resumes
        only there, under its own settings and trust (this page runs this project's)."""
        root = row.pop("root")
        if not self.ws.runs_here(root):
            row["elsewhere"] = root
        return row

    def _name_projects(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each other project's name: its folder, or its path where two (this one among
        them) share a name."""
        here = str(self.ws.project_root)
        names = project_labels([here, *(row.get("elsewhere") for row in rows)])
        for row in rows:
            if row.get("elsewhere"):
                row["elsewhere_name"] = names.get(row["elsewhere"]) or row["elsewhere"]
        return rows


def family_order(sessions: list[LiveSession]) -> list[LiveSession]:
    """Top-level sessions in their order, each followed by its sub-agents (and theirs)."""
    children: dict[str | None, list[LiveSession]] = {}
    ids = {s.id for s in sessions}
    for live in sessions:
        parent = live.parent_id if live.parent_id in ids else None
        children.setdefault(parent, []).append(live)
    ordered: list[LiveSession] = []

    def visit(parent: str | None) -> None:
        for live in children.get(parent, []):
            ordered.append(live)
            visit(live.id)

    visit(None)
    return ordered


def _row(summary: Any, snippet: Any = None, depth: int = 0) -> dict[str, Any]:
    return {
        "id": summary.id,
        "depth": depth,  # a sub-agent's thread: under its parent, indented
        "parent_id": summary.parent_thread_id,
        "title": summary.title,
        "when": summary.last_activity_at,
        "messages": summary.message_count,
        "branch": summary.git_branch,
        "snippet": snippet,
        "root": summary.workspace_root,  # the project it works in (see WebState._mark)
    }
