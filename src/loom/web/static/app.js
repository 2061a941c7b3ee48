// Loom web: the browser side. Server-rendered HTML plus one EventSource per tab.
// Fragments (messages, tool cards, the permission modal) arrive rendered; this module
// places them, streams text, and turns clicks and keys into small JSON requests.

const body = document.body;
const view = body.dataset.view;
const sessionId = body.dataset.session || "";
const $ = (selector, root = document) => root.querySelector(selector);
const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

// Event latency (bus publish -> DOM updated), kept for bench/web_bench.py.
window.loomLatencies = [];
window.loomEvents = 0;

async function api(path, payload, method = "POST") {
  const options = { method, headers: {} };
  if (payload !== undefined) {
    options.headers["content-type"] = "application/json";
    options.body = JSON.stringify(payload);
  }
  const response = await fetch(path, options);
  let data = {};
  try { data = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) {
    const message = data.error || `${response.status} ${response.statusText}`;
    toast(message, "error");
    throw new Error(message);
  }
  return data;
}

function toast(text, kind = "info", action = null) {
  const node = document.createElement("div");
  node.className = `toast toast-${kind}`;
  node.setAttribute("role", kind === "error" ? "alert" : "status");
  const span = document.createElement("span");
  span.textContent = text;
  node.append(span);
  if (action) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = action.label;
    button.addEventListener("click", () => { node.remove(); action.run(); });
    node.append(button);
  }
  $("#toasts").append(node);
  setTimeout(() => node.remove(), action ? 15000 : 7000);
}

function fromHTML(html) {
  const template = document.createElement("template");
  template.innerHTML = html.trim();
  return template.content;
}

// -- chat -------------------------------------------------------------------------------

const messages = $("#messages");
let stickToBottom = true;
if (messages) {
  messages.addEventListener("scroll", () => {
    stickToBottom = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 80;
  });
}
let scrollQueued = false;
function scrollDown() {
  // once per frame: reading scrollHeight forces a layout, too costly for every delta
  if (!messages || !stickToBottom || scrollQueued) return;
  scrollQueued = true;
  requestAnimationFrame(() => {
    scrollQueued = false;
    messages.scrollTop = messages.scrollHeight;
  });
}

// Streamed text goes into the last of a run of block "chunks"; a chunk that has grown
// past CHUNK_CHARS is closed after a newline (pre-wrap: "a\n" then "b" in the next block
// looks exactly like "a\nb"). So a delta copies, lays out and paints one chunk, not the
// whole answer: a long answer costs O(n) in all, not O(n^2).
const CHUNK_CHARS = 1024;
let streamText = null; // the Text node deltas are appended to, while it is in the page

function newChunk(body) {
  const chunk = document.createElement("div");
  chunk.append(document.createTextNode(""));
  body.append(chunk);
  return chunk.firstChild;
}

function streamTarget() {
  if (streamText?.isConnected) return streamText;
  let body = $(".streaming .stream", messages);
  if (!body) {
    const article = document.createElement("article");
    article.className = "msg msg-assistant streaming";
    body = document.createElement("div");
    body.className = "msg-body stream";
    article.append(body);
    messages.append(article);
  }
  const last = body.lastElementChild; // a page rendered mid-stream holds one chunk
  streamText = last?.lastChild?.nodeType === Node.TEXT_NODE ? last.lastChild : newChunk(body);
  return streamText;
}

function appendStreamed(text) {
  let node = streamTarget();
  if (node.length >= CHUNK_CHARS) {
    const cut = text.lastIndexOf("\n") + 1;
    if (cut > 0) {
      node.appendData(text.slice(0, cut));
      node = streamText = newChunk(node.parentNode.parentNode);
      text = text.slice(cut);
    }
  }
  if (text) node.appendData(text);
}

let busyShown = null;
function setBusy(busy) {
  if (busy === busyShown) return; // once per change, not once per streamed delta
  const cancel = $("#cancel");
  if (cancel) cancel.hidden = !busy;
  busyShown = busy;
}

function setBadge(label, kind) {
  const badge = $("#badge");
  if (!badge) return;
  badge.textContent = label;
  badge.className = `badge badge-${kind}`;
}

function setUsage(usage) {
  const node = $("#usage");
  if (!node || !usage) return;
  const fmtTokens = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${Math.round(n / 1e3)}k`
    : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : `${n}`);
  // null: a model with no known price answered; unknown, never $0
  const fmtCost = (c) =>
    c === null || c === undefined ? "cost unknown"
      : c && c < 0.01 ? `$${c.toFixed(4)}` : `$${c.toFixed(2)}`;
  node.innerHTML = "";
  const cache = usage.cache ? ` · ${usage.cache}` : "";  // the prompt cache's share
  node.append(`${fmtTokens(usage.tokens)} tokens · ${fmtCost(usage.cost)}${cache} `);
  const last = document.createElement("span");
  last.className = "muted";
  last.textContent = `(last turn ${fmtTokens(usage.turn_tokens)} · ${fmtCost(usage.turn_cost)})`;
  node.append(last);
}

function replaceCard(callId, html) {
  const card = $(`.tool[data-call="${CSS.escape(callId)}"]`, messages);
  if (card) card.replaceWith(fromHTML(html));
}

function cardStatus(callId, status, label, duration) {
  const card = $(`.tool[data-call="${CSS.escape(callId)}"]`, messages);
  if (!card) return;
  card.className = `tool tool-${status}`;
  $("[data-status]", card).textContent = label;
  if (duration != null) $("[data-duration]", card).textContent = formatDuration(duration);
}

function formatDuration(s) {
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.floor(s % 60)} s`;
}

function notice(level, text) {
  const node = document.createElement("div");
  node.className = `notice notice-${level}`;
  node.textContent = text;
  messages.append(node);
}

// The model's reasoning as it streams: a folded block above the answer (opened on click).
function thinkingTarget() {
  let article = $(".streaming", messages);
  if (!article) { streamTarget(); article = $(".streaming", messages); }
  let text = $(".thinking-text", article);
  if (!text) {
    const block = document.createElement("details");
    block.className = "thinking";
    const summary = document.createElement("summary");
    summary.textContent = "Thinking…";
    text = document.createElement("div");
    text.className = "thinking-text";
    block.append(summary, text);
    article.prepend(block);
  }
  return text;
}

const handlers = {
  delta(p) { appendStreamed(p.text); setBusy(true); },
  thinking(p) { thinkingTarget().append(document.createTextNode(p.text)); setBusy(true); },
  message(p) {
    if (p.role === "assistant") $(".streaming", messages)?.remove();
    $(".empty", messages)?.remove();
    messages.append(fromHTML(p.html));
    if (p.usage) setUsage(p.usage);
    if (p.role === "user") setBusy(true);
  },
  tool_result(p) { replaceCard(p.call_id, p.html); },
  tool_running(p) { cardStatus(p.call_id, "running", "Running"); },
  tool_progress(p) {
    const card = $(`.tool[data-call="${CSS.escape(p.call_id)}"] [data-duration]`, messages);
    if (card && p.message) card.textContent = p.message;
  },
  tool_done(p) {
    cardStatus(p.call_id, p.is_error ? "error" : "done", p.is_error ? "Failed" : "Done", p.duration);
    panel.toolDone(p.tool);
  },
  status(p) {
    setBadge(p.badge, p.badge_kind);
    setBusy(p.status !== "idle");
    if (p.status === "idle") {
      $(".streaming", messages)?.remove();
      for (const card of $$(".tool-running", messages)) cardStatus(card.dataset.call, "interrupted", "Interrupted");
    }
  },
  permission(p) {
    $("#modal-root").replaceChildren(fromHTML(p.html));
    setBadge("Waiting for permission", "ask");
    $("#modal-root [data-answer]")?.focus();
  },
  permission_answered() { $("#modal-root").replaceChildren(); },
  mode(p) { markMode(p.mode); },
  permission_mode(p) {
    const select = $("#permission-mode");
    if (select) select.value = p.permission_mode;
  },
  notice(p) { notice(p.level, p.text); },
  mcp_asks(p) { $("#mcp-asks").innerHTML = p.html; },
  trust_answered() { $("#trust-ask")?.replaceChildren(); },
  plan(p) {
    $("#plan").innerHTML = p.html;
    const answers = $$(".msg-assistant", messages);
    if (p.answer_html && answers.length) answers[answers.length - 1].replaceWith(fromHTML(p.answer_html));
  },
  shells(p) { $("#shells").innerHTML = p.html; stampShells(); },
  turn_done(p) {
    $(".streaming", messages)?.remove();
    setUsage(p.usage);
    setBusy(false);
    $("#modal-root").replaceChildren();
    panel.toolDone("turn");
    panel.stale.context = true;
    // the thread's row moves to the top of the history, once the save has landed
    if (!query) setTimeout(refreshThreads, 600);
  },
  live_sessions(p) { $("#live-sessions").innerHTML = p.html; },
  subagent(p) {
    // the task call's card links to its sub-agent (live while it runs, its thread after)
    const head = $(`.tool[data-call="${CSS.escape(p.call_id)}"] .tool-head`, messages);
    if (!head) return;
    let link = $("[data-child]", head);
    if (!link) {
      link = document.createElement("a");
      link.className = "tool-link";
      link.dataset.child = "";
      head.append(link);
    }
    link.href = `/s/${p.child_session_id}`;
    link.textContent = `${p.agent || "general"} sub-agent: ${p.status}`;
  },
  ended() { if (view === "live") location.reload(); },
  reset() { location.reload(); },
  noop() {},
};

function handle(payload) {
  const handler = handlers[payload.type];
  if (!handler || (!messages && payload.type !== "live_sessions")) return;
  handler(payload);
  if (payload.t) {
    window.loomEvents += 1;
    const latency = performance.timeOrigin + performance.now() - payload.t;
    if (window.loomLatencies.length < 100000) window.loomLatencies.push(latency);
  }
}

function connect() {
  const params = new URLSearchParams();
  if (sessionId && view === "live") {
    params.set("session", sessionId);
    params.set("after", body.dataset.seq || "0");
  }
  const source = new EventSource(`/events?${params}`);
  source.onmessage = (event) => {
    const data = JSON.parse(event.data);
    for (const payload of Array.isArray(data) ? data : [data]) handle(payload);
    scrollDown();
  };
  return source;
}

// -- composer ------------------------------------------------------------------------------

function markMode(mode) {
  for (const button of $$("[data-mode]")) {
    const on = button.dataset.mode === mode;
    button.classList.toggle("on", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
  }
}

function currentMode() {
  return $("[data-mode].on")?.dataset.mode || "normal";
}

// Images dropped on the message box (or picked with "Image…"), sent with the next message.
const pendingImages = [];

function addImageFiles(files) {
  for (const file of files) {
    if (!/^image\/(png|jpeg|gif|webp)$/.test(file.type)) {
      toast(`${file.name} is not a PNG, JPEG, GIF or WebP image`, "error");
      continue;
    }
    const reader = new FileReader();
    reader.onload = () => {
      pendingImages.push({ name: file.name, data: String(reader.result).split(",", 2)[1] });
      renderAttachments();
    };
    reader.readAsDataURL(file);
  }
}

function renderAttachments() {
  const box = $("#attachments");
  if (!box) return;
  box.replaceChildren(...pendingImages.map((image, index) => {
    const chip = document.createElement("span");
    chip.className = "attachment";
    chip.textContent = image.name;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = "×";
    remove.setAttribute("aria-label", `Remove ${image.name}`);
    remove.addEventListener("click", () => { pendingImages.splice(index, 1); renderAttachments(); });
    chip.append(remove);
    return chip;
  }));
}

async function send(text) {
  const images = pendingImages.slice();
  if (view === "new") {
    const model = $("#model")?.value.trim() || null;
    const permission_mode = $("#permission-mode")?.value || "default";
    const started = await api("/api/sessions", { text, model, mode: currentMode(), permission_mode, images });
    pendingImages.length = 0;
    location.assign(started.url);
    return;
  }
  await api(`/api/sessions/${sessionId}/messages`, { text, images });
  pendingImages.length = 0;
  renderAttachments();
  setBusy(true);
}

async function cancelTurn() {
  if (view !== "live") return;
  const result = await api(`/api/sessions/${sessionId}/cancel`, {});
  if (result.interrupted) toast("Cancelled the running turn.");
}

function setupComposer() {
  const form = $("#composer");
  const prompt = $("#prompt");
  if (!form) return;
  const attach = $("#attach");
  $("#attach-button")?.addEventListener("click", () => attach?.click());
  attach?.addEventListener("change", () => { addImageFiles(attach.files); attach.value = ""; });
  form.addEventListener("dragover", (event) => {
    if (event.dataTransfer?.types.includes("Files")) event.preventDefault();
  });
  form.addEventListener("drop", (event) => {
    if (!event.dataTransfer?.files.length) return;
    event.preventDefault();
    addImageFiles(event.dataTransfer.files);
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = prompt.value;
    if (!text.trim()) return;
    prompt.value = "";
    try { await send(text); } catch { prompt.value = text; }
  });
  prompt.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  prompt.focus();
  $("#cancel")?.addEventListener("click", cancelTurn);
  for (const button of $$("[data-mode]")) {
    button.addEventListener("click", async () => {
      const mode = button.dataset.mode;
      markMode(mode);
      if (view === "live") await api(`/api/sessions/${sessionId}/mode`, { mode });
    });
  }
  const permissionMode = $("#permission-mode");
  permissionMode?.addEventListener("change", async () => {
    if (view === "live") {
      await api(`/api/sessions/${sessionId}/permission_mode`, { permission_mode: permissionMode.value });
    }
  });
  const model = $("#model");
  model?.addEventListener("change", async () => {
    if (view !== "live" || !model.value.trim()) return;
    try { await api(`/api/sessions/${sessionId}/model`, { model: model.value.trim() }); }
    catch { model.value = model.defaultValue; }
  });
}

document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || $("dialog[open]")) return;
  const deny = $("#modal-root [data-answer=deny]");
  if (deny) {
    deny.click(); // as in the terminal: Esc denies the call, the turn goes on
    return;
  }
  cancelTurn().catch(() => {});
});

// permission answers (the modal arrives rendered; answer with its buttons)
document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-answer]");
  if (!button) return;
  for (const b of $$("#modal-root [data-answer]")) b.disabled = true;
  try {
    await api(`/api/sessions/${sessionId}/permission`, { action: button.dataset.answer });
    $("#modal-root").replaceChildren();
  } catch {
    $("#modal-root").replaceChildren();
  }
});

// the project's trust question (a banner on every page until it is answered)
document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-trust]");
  if (!button) return;
  for (const b of $$("#trust-ask [data-trust]")) b.disabled = true;
  try {
    const done = await api("/api/trust", { answer: button.dataset.trust });
    $("#trust-ask").replaceChildren();
    toast(done.message);
  } catch {
    for (const b of $$("#trust-ask [data-trust]")) b.disabled = false;
  }
});

// -- thread actions --------------------------------------------------------------------------

function ask(title, value) {
  return new Promise((resolve) => {
    const dialog = document.createElement("dialog");
    dialog.innerHTML = `<form method="dialog"><label><strong></strong>
      <input class="input" name="value" required maxlength="300"></label>
      <div class="row"><button class="btn" value="cancel" formnovalidate>Cancel</button>
      <button class="btn btn-primary" value="ok">Save</button></div></form>`;
    $("strong", dialog).textContent = title;
    $("input", dialog).value = value;
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "ok" ? $("input", dialog).value.trim() : null);
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

function setupThreadActions() {
  const threadId = sessionId;
  $("#rename")?.addEventListener("click", async () => {
    const title = await ask("Rename thread", $("#title").textContent.trim());
    if (!title) return;
    const done = await api(`/api/threads/${threadId}/rename`, { title });
    $("#title").textContent = done.title;
    document.title = `${done.title} · Loom`;
    refreshThreads();
  });
  $("#resume")?.addEventListener("click", async () => {
    const done = await api(`/api/threads/${threadId}/resume`, {});
    location.assign(done.url);
  });
  for (const action of ["undo", "redo"]) {
    $(`#${action}`)?.addEventListener("click", async () => {
      const path = `/api/sessions/${threadId}/${action}`;
      let done = await api(path, { force: false });
      if (done.hand_edited) {
        const files = done.hand_edited.join("\n");
        if (!confirm(`These files changed by hand since the agent's turn:\n${files}\n\nOverwrite them?`)) {
          toast("Nothing changed: your edits are kept.");
          return;
        }
        done = await api(path, { force: true });
      }
      const verb = action === "undo" ? "Restored" : "Reapplied";
      toast(done.paths.length ? `${verb} ${done.paths.length} file(s): ${done.paths.slice(0, 5).join(", ")}` : "No file needed changing.");
      panel.toolDone();
    });
  }
  $("#mcp-asks")?.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-mcp-approve]");
    if (!button) return;
    button.disabled = true;
    const name = button.dataset.mcpApprove;
    try {
      await api(`/api/sessions/${threadId}/mcp/${encodeURIComponent(name)}/approve`, {});
    } catch {
      button.disabled = false;
    }
  });
  $("#stop")?.addEventListener("click", async () => {
    const done = await api(`/api/sessions/${threadId}/stop`, {});
    location.assign(done.url);
  });
  $("#delete")?.addEventListener("click", async () => {
    if (!confirm("Delete this thread? It can be restored for 30 days.")) return;
    const done = await api(`/api/threads/${threadId}/delete`, {});
    history.replaceState(null, "", "/");
    $(".chat").replaceChildren(fromHTML('<div class="messages"><div class="empty"><h2>Thread deleted</h2><p>It is in the trash for 30 days.</p></div></div>'));
    refreshThreads();
    toast("Thread deleted.", "info", {
      label: "Restore",
      run: async () => { const back = await api(`/api/threads/${done.id}/restore`, {}); location.assign(back.url); },
    });
  });
}

// -- sidebar: history with search and infinite scroll ----------------------------------------------

const list = $("#thread-list");
const more = $("#thread-more");
let query = "";
let next = list?.dataset.next === "" || list?.dataset.next === "None" ? null : Number(list?.dataset.next);
let loading = false;

async function loadThreads(reset) {
  if (loading || (!reset && next == null)) return;
  loading = true;
  const offset = reset ? 0 : next;
  const every = $("#all-projects")?.checked ? "1" : "0";  // search always covers every project
  const params = new URLSearchParams({ q: query, offset: String(offset), current: sessionId, all: every });
  try {
    const page = await api(`/api/threads?${params}`, undefined, "GET");
    if (reset) list.innerHTML = "";
    list.append(fromHTML(page.html));
    next = page.next;
    more.textContent = next == null ? (list.children.length ? "" : (query ? "No thread matches." : "No threads yet.")) : "Loading…";
  } finally {
    loading = false;
  }
}

function refreshThreads() { loadThreads(true).catch(() => {}); }

function setupSidebar() {
  if (!list) return;
  let timer;
  $("#thread-search").addEventListener("input", (event) => {
    clearTimeout(timer);
    timer = setTimeout(() => { query = event.target.value.trim(); refreshThreads(); }, 180);
  });
  $("#all-projects")?.addEventListener("change", refreshThreads);
  const observer = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) loadThreads(false).catch(() => {});
  }, { root: $(".sidebar"), rootMargin: "200px" });
  observer.observe(more);
}

// -- side panel: files, changes, terminal ------------------------------------------------------------

const panel = {
  current: "files",
  stale: { files: true, changes: true, terminal: true, graph: true, context: true },
  select(name) {
    this.current = name;
    for (const tab of $$(".tabs [data-tab]")) tab.setAttribute("aria-selected", tab.dataset.tab === name ? "true" : "false");
    for (const body of $$(".tab-body")) body.hidden = body.id !== `tab-${name}`;
    if (this.stale[name]) this.load(name);
  },
  async load(name) {
    this.stale[name] = false;
    const ref = sessionId;
    try {
      if (name === "files") {
        const tree = await api("/api/files", undefined, "GET");
        $("#file-tree").classList.remove("muted");
        $("#file-tree").innerHTML = tree.count ? tree.html : '<p class="muted">No files.</p>';
      } else if (name === "changes") {
        if (!ref) { $("#tab-changes").innerHTML = '<p class="muted">Changes appear here once a session runs.</p>'; return; }
        $("#tab-changes").innerHTML = (await api(`/api/threads/${ref}/changes`, undefined, "GET")).html;
      } else if (name === "terminal") {
        if (!ref) { $("#tab-terminal").innerHTML = '<p class="muted">Shell commands appear here.</p>'; return; }
        $("#tab-terminal").innerHTML = (await api(`/api/threads/${ref}/terminal`, undefined, "GET")).html;
      } else if (name === "graph") {
        $("#tab-graph").innerHTML = (await api("/api/graph", undefined, "GET")).html;
      } else if (name === "context") {
        if (!ref || view !== "live") { $("#tab-context").innerHTML = '<p class="muted">Where the context window goes, once a session runs.</p>'; this.stale.context = true; return; }
        $("#tab-context").innerHTML = (await api(`/api/sessions/${ref}/context`, undefined, "GET")).html;
      }
    } catch { this.stale[name] = true; }
  },
  toolDone() {
    this.stale.changes = this.stale.terminal = this.stale.graph = true;
    if (this.current !== "files") this.load(this.current);
  },
};

// -- background commands: running times tick on the page; Kill ends one ---------------------

function stampShells() {
  const now = Date.now();
  for (const row of $$("#shells tr[data-shell]")) row.dataset.since = String(now - Number(row.dataset.seconds) * 1000);
}

function setupShells() {
  const box = $("#shells");
  if (!box) return;
  stampShells();
  setInterval(() => {
    for (const row of $$("#shells tr[data-state='running']")) {
      $(".shell-time", row).textContent = `${Math.floor((Date.now() - Number(row.dataset.since)) / 1000)} s`;
    }
  }, 1000);
  box.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-kill]");
    if (!button) return;
    button.disabled = true;
    await api(`/api/sessions/${sessionId}/shells/${encodeURIComponent(button.dataset.kill)}/kill`, {});
  });
}

function setupPanel() {
  if (!$(".panel")) return;
  for (const tab of $$(".tabs [data-tab]")) tab.addEventListener("click", () => panel.select(tab.dataset.tab));
  $("#file-tree").addEventListener("click", async (event) => {
    const link = event.target.closest("a.file");
    if (!link) return;
    event.preventDefault();
    $$("#file-tree a.current").forEach((a) => a.classList.remove("current"));
    link.classList.add("current");
    const params = new URLSearchParams({ path: link.dataset.path });
    $("#file-preview").innerHTML = (await api(`/api/files/preview?${params}`, undefined, "GET")).html;
  });
  $("#tab-graph").addEventListener("click", (event) => {
    const link = event.target.closest("[data-node]");
    if (!link) return;
    event.preventDefault();
    for (const box of $$("#tab-graph .node-details")) box.hidden = box.id !== `node-${link.dataset.node}`;
    $$("#tab-graph .node.current").forEach((n) => n.classList.remove("current"));
    const shown = $(`#tab-graph .node[data-node="${link.dataset.node}"]`);
    if (shown) shown.classList.add("current");
  });
  panel.select("files");
}

setupComposer();
setupThreadActions();
setupSidebar();
setupPanel();
setupShells();
connect();
scrollDown();
