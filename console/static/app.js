// vcpnode console: one page per tab, every action a call to the daemon's
// /v1/ API (the same handlers as the control socket). No framework.

const $ = (sel) => document.querySelector(sel);

// el builds an element: el("td", {class: "ok"}, "text", child…).
function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v === true) e.setAttribute(k, "");
    else e.setAttribute(k, v);
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    e.append(kid instanceof Node ? kid : String(kid));
  }
  return e;
}

// api calls the daemon. poll marks background refreshes, which do not keep
// the session alive.
async function api(method, path, body, {poll = false} = {}) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (poll) headers["X-Vcpnode-Poll"] = "1";
  const res = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  let data = null;
  try { data = await res.json(); } catch { /* not JSON */ }
  if (res.status === 401) {
    banner("Not logged in, or the session ended. Run `vcpnode console` for a new login link.");
    throw new Error(data?.error || "not logged in");
  }
  if (!res.ok) throw new Error(data?.error || `${res.status} ${res.statusText}`);
  banner("");
  return data;
}

function banner(text) {
  const b = $("#banner");
  b.textContent = text;
  b.hidden = !text;
}

function age(ms) {
  if (ms < 0) ms = 0;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? (s % 60) + "s" : ""}`;
  const h = Math.floor(m / 60);
  return `${h}h${m % 60}m`;
}

// ---- pages and navigation --------------------------------------------------

const pages = {};
let current = null;

function show(name) {
  if (!pages[name] || (name === "activity" && $("#tab-activity").hidden)) name = "status";
  for (const a of document.querySelectorAll("#tabs a")) {
    if (a.dataset.page === name) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  for (const p of Object.keys(pages)) $(`#page-${p}`).hidden = p !== name;
  if (current && pages[current].leave) pages[current].leave();
  current = name;
  pages[name].enter?.();
}

window.addEventListener("hashchange", () => show(location.hash.slice(1)));

// every runs fn now and then every ms while the page is current.
function every(page, ms, fn) {
  let timer = null;
  const tick = async () => {
    try { await fn(); } catch (e) { /* the banner says it */ }
    if (current === page) timer = setTimeout(tick, ms);
  };
  return {
    enter() { clearTimeout(timer); tick(); },
    leave() { clearTimeout(timer); },
  };
}

// ---- Status ------------------------------------------------------------------

pages.status = every("status", 2000, async () => {
  const s = await api("GET", "/v1/status", undefined, {poll: true});
  const now = Date.parse(s.now);
  const c = s.connection;
  const phase = el("span", {class: c.phase === "connected" ? "ok" : c.phase === "backoff" ? "bad" : "warn", id: "status-phase"}, c.phase);
  const rows = [
    ["Connection", phase],
    ["Server", s.hubUrl],
    ["Server id", c.serverId || "—"],
    ["Since", `${age(now - Date.parse(c.since))} ago`],
    ["Node name", s.name],
    ["Uptime", age(now - Date.parse(s.startedAt))],
    ["Reconnects", c.reconnects],
    ["Last error", c.lastError || "—"],
    ["Tools", `${s.tools.exposed} exposed, ${s.tools.hidden} hidden` + (s.tools.unsupported ? `, ${s.tools.unsupported} unsupported` : "") + (s.tools.invalid ? `, ${s.tools.invalid} invalid` : "")],
    ["Pending approvals", s.pendingApprovals],
    ["Version", `${s.version} (pid ${s.pid})`],
  ];
  if (c.retryAt) rows.splice(4, 0, ["Next attempt", `in ${age(Date.parse(c.retryAt) - now)}`]);
  rows.splice(1, 0, ["Mode", el("span", {id: "status-mode"}, s.mode || "distributed")]);
  renderRegistration(s);
  $("#status-list").replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  const body = $("#inflight tbody");
  body.replaceChildren(...s.inFlight.map((f) =>
    el("tr", {}, el("td", {}, f.tool), el("td", {}, f.state.replace("_", " ")), el("td", {}, f.requestId + (f.local ? " (local)" : "")), el("td", {}, age(now - Date.parse(f.started))))));
  $("#inflight").hidden = s.inFlight.length === 0;
  $("#inflight-empty").hidden = s.inFlight.length !== 0;
  setApprovalCount(s.pendingApprovals);
});

// renderRegistration says whether the server has this node's tools, with a
// Register button while [node] register = false holds them back: the same
// POST /v1/register as `vcpnode register`.
function renderRegistration(s) {
  const c = s.connection;
  let text, cls = "muted", held = false;
  if (s.mode === "observer") text = "Observer mode: this node registers no tools.";
  else if (c.toolsHeld) { text = "Tools are waiting for vcpnode register ([node] register = false): the server offers none of them."; cls = "warn"; held = true; }
  else if (c.registered) { text = "Tools are registered with the server."; cls = "ok"; }
  else text = "Tools are registered at the next connection.";
  const box = $("#status-register");
  const key = text;
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.replaceChildren(...[el("span", {class: cls, id: "status-register-text"}, text), " ",
    held ? el("button", {type: "button", id: "register-now", onclick: async (ev) => {
      ev.target.disabled = true;
      try {
        const r = await api("POST", "/v1/register");
        $("#status-register-result").textContent = r.message;
      } catch (e) { $("#status-register-result").textContent = e.message; }
      pages.status.enter();
    }}, "Register now") : null].filter((k) => k !== null));
}

// ---- Tools -------------------------------------------------------------------

let toolsCache = null;

async function loadTools(poll = false) {
  const res = await api("GET", "/v1/tools", undefined, {poll});
  toolsCache = res;
  return res;
}

function paramLine(p) {
  const bits = [p.type || "any"];
  if (p.required) bits.push("required");
  if (p.enum) bits.push("one of " + p.enum.map((v) => JSON.stringify(v)).join(", "));
  if (p.default !== undefined) bits.push("default " + JSON.stringify(p.default));
  return el("li", {}, el("code", {}, p.name), ` (${bits.join(", ")})`, p.description ? ` — ${p.description}` : "");
}

// durText writes milliseconds as Go's time.ParseDuration reads them back:
// "45s", "2m30s", "1h", "1500ms".
function durText(ms) {
  if (ms % 1000) return `${ms}ms`;
  const all = ms / 1000, h = Math.floor(all / 3600), m = Math.floor((all % 3600) / 60), s = all % 60;
  return (h ? `${h}h` : "") + (m ? `${m}m` : "") + (s || (!h && !m) ? `${s}s` : "");
}

function domId(name) { return name.replace(/[^A-Za-z0-9_-]/g, "_"); }

// loadIntoParser puts a ready-to-edit call in the Parser pane and finds
// it there, where it can be edited and run.
function loadIntoParser(call) {
  $("#parse-result").replaceChildren(); // the last call's, not this one's
  $("#parse-all-form").hidden = true;
  $("#parse-text").value = call;
  location.hash = "#parser";
  $("#parse-form").requestSubmit();
}

// loadIntoExecutor opens the Executor with the tool (and command) chosen
// and its form filled from the ready call's example values.
let pendingExec = null;
function loadIntoExecutor(tool, command, call) {
  pendingExec = {tool, command, call};
  if (location.hash === "#executor") pages.executor.enter();
  else location.hash = "#executor";
}

// callValues reads key:「始」value「末」 pairs of a generated call block.
function callValues(call) {
  const out = {};
  for (const m of (call || "").matchAll(/^([^:\n]+):「始」([\s\S]*?)「末」/gm)) out[m[1]] = m[2];
  return out;
}

function fillExecutor(p) {
  $("#exec-tool").value = p.tool;
  // A command with no schema has no form: its call's values go in as JSON.
  const typed = typedCommands(toolsCache?.tools.find((x) => x.name === p.tool));
  $("#exec-raw-toggle").checked = p.command ? !typed.some((c) => c.command === p.command) : !typed.length;
  renderParams();
  if (p.command && !$("#exec-command-field").hidden) {
    $("#exec-command").value = p.command;
    renderParams();
  }
  const values = callValues(p.call);
  if ($("#exec-raw-toggle").checked) {
    delete values.tool_name;
    $("#exec-raw").value = JSON.stringify(values, null, 2);
    return;
  }
  for (const input of document.querySelectorAll("#exec-params [data-param]")) {
    const v = values[input.dataset.param];
    if (v === undefined) continue;
    if (input.dataset.type === "boolean") input.checked = v === "true";
    else if (input.dataset.type === "enum") input.value = JSON.stringify(v);
    else input.value = v;
  }
}

function toolCard(t, overridable) {
  const id = "tool-" + domId(t.name);
  const head = el("h3", {id: id + "-h"}, t.displayName && t.displayName !== t.name ? `${t.displayName} ` : "", el("code", {}, t.name),
    t.skipped ? el("span", {class: "warn"}, t.skipped) : el("span", {class: t.exposed ? "ok" : "muted"}, t.exposed ? "exposed" : "not exposed"));
  const kids = [head];
  if (t.description) kids.push(el("div", {}, t.description.split("\n")[0]));
  kids.push(el("div", {class: "muted"}, t.reason));
  const facts = [];
  // [node] tool_names or [tools.NAME] name: the name the server and its model see.
  if (t.serverName) kids.push(el("div", {id: id + "-server-name"}, "On the server as ", el("code", {}, t.serverName)));
  if (t.source) facts.push(`source ${t.source}`);
  if (!t.skipped) facts.push(`timeout ${age(t.timeoutMs)}` + (t.override?.timeout ? " (set here)" : ""), `approval ${t.approval}` + (t.approvalTimeoutMs ? ` (waits ${age(t.approvalTimeoutMs)})` : ""));
  if (t.maxConcurrent) facts.push(`at most ${t.maxConcurrent} at once`);
  // The sandbox profile its processes run under; built-in tools start none.
  if (t.sandbox) facts.push(`sandbox ${t.sandbox}` + (t.sandbox === "none" ? " (unconfined)" : ""));
  if (t.calls) facts.push(`${t.calls} call${t.calls === 1 ? "" : "s"}, last ${t.lastCall.slice(11, 19)}`);
  kids.push(el("div", {class: "muted", id: id + "-facts"}, facts.join(" · ")));
  // What its last process got beyond the profile from what it ran.
  if (t.sandboxGrants?.length) {
    kids.push(el("div", {class: "muted", id: id + "-grants"}, "also " + t.sandboxGrants.map((g) =>
      `${g.write ? "writes" : "reads"} ${g.path} (${g.from})`).join(" · ")));
  }
  if (overridable && !t.skipped && !t.implicit) {
    const expose = el("input", {type: "checkbox", id: id + "-expose", checked: t.exposed});
    expose.addEventListener("change", () => setOverride(t.name, {expose: expose.checked}));
    const approval = el("select", {id: id + "-approval"}, ...["auto", "ask", "deny"].map((m) => el("option", {value: m, selected: m === t.approval}, m)));
    approval.addEventListener("change", () => setOverride(t.name, {approval: approval.value}));
    // The timeout: the daemon checks it as [tools.NAME] timeout; Default
    // gives the config's value back.
    const timeout = el("input", {type: "text", id: id + "-timeout", value: durText(t.timeoutMs), size: "8", spellcheck: "false", "aria-describedby": id + "-timeout-hint"});
    const setTimeout_ = el("button", {type: "button", class: "secondary", id: id + "-timeout-set", onclick: () => {
      const v = timeout.value.trim();
      if (!v) { $("#tools-error").textContent = `${t.name}: write a timeout like 45s or 2m`; $("#tools-error").hidden = false; return; }
      setOverride(t.name, {timeout: v});
    }}, "Set");
    timeout.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); setTimeout_.click(); } });
    const reset = el("button", {type: "button", class: "secondary", id: id + "-reset"}, "Reset to config");
    reset.addEventListener("click", () => setOverride(t.name, {reset: true}));
    kids.push(el("div", {class: "tool-controls"},
      el("label", {class: "field inline"}, expose, "Exposed to the server"),
      el("label", {class: "field inline", for: id + "-approval"}, "Approval", approval),
      el("span", {class: "field inline"}, el("label", {for: id + "-timeout"}, "Timeout"), timeout, setTimeout_,
        t.override?.timeout ? el("button", {type: "button", class: "secondary", id: id + "-timeout-default",
          title: "Back to the config file's timeout", onclick: () => setOverride(t.name, {timeout: "default"})}, "Default") : null,
        el("span", {class: "muted", id: id + "-timeout-hint"}, "1s to 24 days, like 45s or 2m")),
      t.override ? [el("span", {class: "warn"}, "overridden here"), reset] : null));
  }
  if (t.call) {
    kids.push(el("div", {class: "tool-controls"},
      el("button", {type: "button", class: "secondary", id: id + "-load", onclick: () => loadIntoExecutor(t.name, t.commands?.[0]?.command || "", t.call),
        title: "Open the Executor with this tool chosen and its form filled with example values"}, "Load into executor"),
      el("button", {type: "button", class: "secondary", id: id + "-text", onclick: () => loadIntoParser(t.call),
        title: "Put a call of this tool in the Parser pane, as the model would write it"}, "Load as text")));
  }
  const cmds = (t.commands || []).filter((c) => c.typed || c.command || c.description);
  if (cmds.length) {
    kids.push(el("details", {}, el("summary", {}, `${cmds.length} command${cmds.length > 1 ? "s" : ""}, schema`),
      ...cmds.map((c, i) => el("div", {},
        c.command ? el("h4", {}, el("code", {}, c.command)) : null,
        c.params ? el("ul", {}, c.params.map(paramLine)) : el("pre", {}, c.description || ""),
        // Each command loads on its own, both ways; one without a schema
        // goes into the executor as JSON.
        c.call && cmds.length > 1 ? el("div", {class: "tool-controls"},
          el("button", {type: "button", class: "secondary", id: `${id}-cmd-${i}-load`, onclick: () => loadIntoExecutor(t.name, c.command, c.call)},
            `Load ${c.command} into executor`),
          el("button", {type: "button", class: "secondary", id: `${id}-cmd-${i}-text`, onclick: () => loadIntoParser(c.call)},
            `Load ${c.command} as text`)) : null))));
  }
  return el("li", {class: "card", id, "aria-labelledby": id + "-h"}, kids);
}

async function setOverride(name, change) {
  let msg = "";
  try {
    await api("POST", `/v1/tools/${encodeURIComponent(name)}/override`, change);
  } catch (e) {
    msg = `Could not change ${name}: ${e.message}`;
  }
  await pages.tools.enter();
  $("#tools-error").textContent = msg;
  $("#tools-error").hidden = !msg;
}

// The tool library: search (name, display name, description, commands and
// their descriptions; any case) and order, applied as the owner types.
function toolMatches(t, q) {
  if (!q) return true;
  const hay = [t.name, t.serverName, t.displayName, t.description, t.source, ...(t.commands || []).flatMap((c) => [c.command, c.description])];
  return hay.some((h) => h && h.toLowerCase().includes(q));
}

const toolOrders = {
  name: (a, b) => a.name.localeCompare(b.name),
  source: (a, b) => toolKind(a).localeCompare(toolKind(b)) || (a.source || "").localeCompare(b.source || "") || a.name.localeCompare(b.name),
  commands: (a, b) => (b.commands?.length || 0) - (a.commands?.length || 0) || a.name.localeCompare(b.name),
  calls: (a, b) => (b.calls || 0) - (a.calls || 0) || a.name.localeCompare(b.name),
  recent: (a, b) => (b.lastCall || "").localeCompare(a.lastCall || "") || a.name.localeCompare(b.name),
};

// toolKind groups the library: built-in, MCP, plugin, then folders that run no tool.
function toolKind(t) {
  if (t.skipped) return "4 " + t.skipped;
  if (t.builtin) return "1 builtin";
  if ((t.source || "").startsWith("mcp:")) return "2 mcp";
  return "3 plugin";
}

function renderTools() {
  const res = toolsCache;
  if (!res) return;
  const q = $("#tools-search").value.trim().toLowerCase();
  const shown = res.tools.filter((t) => toolMatches(t, q)).sort(toolOrders[$("#tools-sort").value] || toolOrders.name);
  $("#tools-count").textContent = q ? `${shown.length} of ${res.tools.length} tools` : `${res.tools.length} tools`;
  // A card the owner opened stays open: the list is drawn again when a
  // refresh arrives, which may be right after the click.
  const list = $("#tools-list");
  const open = new Set([...list.querySelectorAll("li.card > details[open]")].map((d) => d.parentElement.id));
  list.replaceChildren(el("ul", {class: "cards"}, shown.map((t) => toolCard(t, !!res.overridesFile))));
  for (const id of open) {
    const d = document.getElementById(id)?.querySelector(":scope > details");
    if (d) d.open = true;
  }
}

pages.tools = {
  async enter() {
    try {
      const res = await loadTools();
      $("#tools-hint").hidden = !res.overridesFile;
      renderTools();
    } catch (e) { banner(e.message); }
  },
};
$("#tools-search").addEventListener("input", renderTools);
$("#tools-sort").addEventListener("change", renderTools);

// ---- Server tools (GET /v1/server/tools) ---------------------------------------

// serverToolCard is one of the server's tools: its commands as the server
// describes them, and a button that opens the Executor on it (vcp_<Name>).
function serverToolCard(t) {
  const id = "server-" + domId(t.name);
  const cmds = t.commands || [];
  const first = cmds[0] || {};
  return el("li", {class: "card", id, "aria-labelledby": id + "-h"},
    el("h3", {id: id + "-h"}, t.displayName && t.displayName !== t.name ? `${t.displayName} ` : "", el("code", {}, t.name),
      el("span", {class: t.offered ? "ok" : "muted", id: id + "-offered"}, t.offered ? "offered to MCP clients" : "not offered to MCP clients")),
    t.description ? el("div", {}, t.description.split("\n")[0]) : null,
    el("div", {class: "muted"}, `runs here as `, el("code", {}, t.local), t.version ? ` · version ${t.version}` : ""),
    el("div", {class: "tool-controls"},
      el("button", {type: "button", class: "secondary", id: id + "-load", onclick: () => loadIntoExecutor(t.local, first.command || "", first.example || ""),
        title: "Open the Executor with this tool chosen and the arguments of its example"}, "Run in executor")),
    cmds.length ? el("details", {}, el("summary", {}, `${cmds.length} command${cmds.length > 1 ? "s" : ""}`),
      ...cmds.map((c, i) => el("div", {},
        c.command ? el("h4", {}, el("code", {}, c.command)) : null,
        c.description ? el("pre", {}, c.description) : null,
        c.example ? el("pre", {}, c.example) : null,
        cmds.length > 1 ? el("div", {class: "tool-controls"},
          el("button", {type: "button", class: "secondary", id: `${id}-cmd-${i}-load`, onclick: () => loadIntoExecutor(t.local, c.command || "", c.example || "")},
            `Run ${c.command || "this command"} in executor`)) : null))) : null);
}

async function refreshServerTools({refresh = false, poll = true} = {}) {
  const res = await api("GET", "/v1/server/tools" + (refresh ? "?refresh=1" : ""), undefined, {poll});
  const state = $("#server-state");
  state.textContent = res.message;
  state.className = res.state === "offered" ? "ok" : res.state === "asking" ? "muted" : "warn";
  $("#server-error").textContent = res.error || "";
  $("#server-error").hidden = !res.error;
  const list = $("#server-list");
  // Keep open details; replace the cards only when the list changed.
  const key = JSON.stringify(res.tools);
  if (list.dataset.key !== key) {
    list.dataset.key = key;
    list.replaceChildren(...res.tools.map(serverToolCard));
  }
}

pages.server = every("server", 5000, () => refreshServerTools());
$("#server-refresh").addEventListener("click", async (ev) => {
  ev.target.disabled = true;
  $("#server-state").textContent = "asking the server for its tools";
  try { await refreshServerTools({refresh: true, poll: false}); } catch (e) { $("#server-error").textContent = e.message; $("#server-error").hidden = false; }
  ev.target.disabled = false;
});

// ---- Executor ----------------------------------------------------------------

const HISTORY_KEY = "vcpnode.runs";
const history = JSON.parse(sessionStorage.getItem(HISTORY_KEY) || "[]");

function typedCommands(t) { return (t?.commands || []).filter((c) => c.typed); }

function renderParams() {
  const t = toolsCache?.tools.find((x) => x.name === $("#exec-tool").value);
  const cmds = typedCommands(t);
  const cmdField = $("#exec-command-field");
  cmdField.hidden = cmds.length < 2;
  if (cmds.length >= 2 && $("#exec-command").dataset.tool !== t.name) {
    $("#exec-command").dataset.tool = t.name;
    $("#exec-command").replaceChildren(...cmds.map((c) => el("option", {value: c.command}, c.command)));
  }
  const cmd = cmds.length >= 2 ? cmds.find((c) => c.command === $("#exec-command").value) : cmds[0];
  const raw = !cmd || $("#exec-raw-toggle").checked;
  $("#exec-raw-field").hidden = !raw;
  $("#exec-raw-toggle").checked = raw;
  $("#exec-raw-toggle").disabled = !cmd;
  const box = $("#exec-params");
  if (raw) { box.replaceChildren(); return; }
  box.replaceChildren(...cmd.params.map((p) => {
    const id = "param-" + p.name.replace(/[^A-Za-z0-9_-]/g, "_");
    let input;
    const dflt = p.default; // enum and default arrive as JSON values

    if (p.enum) {
      input = el("select", {id}, p.required ? null : el("option", {value: ""}, "(none)"),
        p.enum.map((v) => el("option", {value: JSON.stringify(v), selected: dflt !== undefined && JSON.stringify(dflt) === JSON.stringify(v)}, String(v))));
    } else if (p.type === "boolean") {
      input = el("input", {type: "checkbox", id, checked: dflt === true});
    } else if (p.type === "integer" || p.type === "number") {
      input = el("input", {type: "number", id, step: p.type === "integer" ? "1" : "any", value: dflt ?? "", required: p.required});
    } else if (p.type === "array" || p.type === "object") {
      input = el("textarea", {id, rows: "3", spellcheck: "false", placeholder: p.type === "array" ? "[ … ] as JSON" : "{ … } as JSON"});
      if (dflt !== undefined) input.value = JSON.stringify(dflt);
    } else {
      input = el("input", {type: "text", id, value: dflt ?? "", required: p.required});
    }
    input.dataset.param = p.name;
    input.dataset.type = p.enum ? "enum" : (p.type || "string");
    const label = el("label", {for: id}, p.name, p.required ? " *" : "");
    const desc = p.description ? el("span", {class: "muted", id: id + "-d"}, p.description) : null;
    if (desc) input.setAttribute("aria-describedby", id + "-d");
    return p.type === "boolean" && !p.enum
      ? el("div", {class: "field inline"}, input, label, desc)
      : el("div", {class: "field"}, label, input, desc);
  }));
}

// formArgs reads the generated form into the call's arguments.
function formArgs() {
  if ($("#exec-raw-toggle").checked) {
    const v = JSON.parse($("#exec-raw").value || "{}");
    if (typeof v !== "object" || Array.isArray(v) || v === null) throw new Error("the arguments must be a JSON object");
    return v;
  }
  const args = {};
  const cmds = typedCommands(toolsCache.tools.find((x) => x.name === $("#exec-tool").value));
  if (cmds.length >= 2) args.command = $("#exec-command").value;
  for (const input of document.querySelectorAll("#exec-params [data-param]")) {
    const name = input.dataset.param;
    switch (input.dataset.type) {
      case "boolean": args[name] = input.checked; break;
      case "enum": if (input.value !== "") args[name] = JSON.parse(input.value); break;
      case "integer": case "number": if (input.value !== "") args[name] = Number(input.value); break;
      case "array": case "object":
        if (input.value.trim() !== "") {
          try { args[name] = JSON.parse(input.value); } catch { throw new Error(`${name}: not valid JSON`); }
        }
        break;
      default: if (input.value !== "") args[name] = input.value;
    }
  }
  return args;
}

// renderResult shows a tool_result's result: text parts as text, images as
// images, anything else as JSON.
function renderResult(r) {
  const out = el("div", {class: "result"});
  const status = r.ok ? el("span", {class: "ok"}, "ok") : el("span", {class: "bad"}, r.outcome || "error");
  out.append(el("p", {}, el("strong", {}, r.tool), " — ", status, ` in ${r.durationMs} ms`, el("span", {class: "muted"}, ` (${r.requestId})`)));
  if (r.error) out.append(el("pre", {class: "bad"}, r.error));
  const res = r.result;
  const parts = res && Array.isArray(res.content) ? res.content : null;
  if (parts) {
    for (const p of parts) {
      if (p.type === "text") out.append(el("pre", {}, p.text));
      else if (p.type === "image" && p.data) out.append(el("img", {src: `data:${p.mimeType || "image/png"};base64,${p.data}`, alt: "image from " + r.tool}));
      else if (p.type === "image_url" && p.image_url?.url?.startsWith("data:")) out.append(el("img", {src: p.image_url.url, alt: "image from " + r.tool}));
      else out.append(el("pre", {}, JSON.stringify(p, null, 2)));
    }
  } else if (res !== undefined && res !== null) {
    out.append(el("pre", {}, typeof res === "string" ? res : JSON.stringify(res, null, 2)));
  }
  return out;
}

function addHistory(r) {
  history.push({at: new Date().toISOString(), ...r});
  while (history.length > 20) history.shift();
  try { sessionStorage.setItem(HISTORY_KEY, JSON.stringify(history)); } catch { /* too big: keep it in memory */ }
  renderHistory();
}

function renderHistory() {
  $("#exec-history").replaceChildren(...history.slice().reverse().map((r) =>
    el("li", {}, el("details", {}, el("summary", {}, `${r.at.slice(11, 19)} ${r.tool} — ${r.ok ? "ok" : r.outcome} (${r.durationMs} ms)`), renderResult(r)))));
}

async function runCall(tool, args, into) {
  into.replaceChildren(el("p", {class: "muted"}, `Running ${tool}…`));
  try {
    const r = await api("POST", "/v1/call", {tool, args});
    into.replaceChildren(renderResult(r));
    addHistory(r);
    return r;
  } catch (e) {
    into.replaceChildren(el("p", {class: "bad"}, e.message));
    return null;
  }
}

pages.executor = {
  async enter() {
    try {
      const res = await loadTools();
      const sel = $("#exec-tool");
      const keep = sel.value;
      sel.replaceChildren(...res.tools.filter((t) => !t.skipped).map((t) => el("option", {value: t.name}, t.name)));
      if (keep) sel.value = keep;
      renderParams();
      if (pendingExec) fillExecutor(pendingExec);
      pendingExec = null;
      renderHistory();
    } catch (e) { banner(e.message); }
  },
};

$("#exec-tool").addEventListener("change", () => { $("#exec-raw-toggle").checked = false; renderParams(); });
$("#exec-command").addEventListener("change", renderParams);
$("#exec-raw-toggle").addEventListener("change", renderParams);
$("#exec-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  let args;
  try { args = formArgs(); } catch (e) { $("#exec-result").replaceChildren(el("p", {class: "bad"}, e.message)); return; }
  $("#exec-run").disabled = true;
  await runCall($("#exec-tool").value, args, $("#exec-result"));
  $("#exec-run").disabled = false;
});

// ---- Parser ------------------------------------------------------------------

pages.parser = {};
let parsedCalls = [];

$("#parse-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const out = $("#parse-result");
  let res;
  $("#parse-results-text").hidden = true;
  try {
    res = await api("POST", "/v1/parse", {text: $("#parse-text").value, fuzzy: $("#parse-fuzzy").checked});
  } catch (e) { out.replaceChildren(el("p", {class: "bad"}, e.message)); $("#parse-all-form").hidden = true; return; }
  parsedCalls = res.calls;
  $("#parse-all-form").hidden = !res.calls.length;
  const items = res.calls.map((c, i) => {
    const args = {};
    for (const [k, v] of Object.entries(c.args || {})) args[k] = v;
    const resultBox = el("div", {"aria-live": "polite"});
    const run = el("button", {type: "button", id: `parse-run-${i}`}, `Run ${c.tool}`);
    run.addEventListener("click", async () => { run.disabled = true; await runCall(c.tool, args, resultBox); run.disabled = false; });
    return el("li", {class: "card"},
      el("h3", {}, el("code", {}, c.tool), el("span", {class: "muted"}, `${c.format}, line ${c.line}${c.repaired ? ", repaired JSON" : ""}${c.example ? ", example inside a code fence" : ""}`)),
      el("pre", {}, JSON.stringify(args, null, 2)),
      c.notes ? el("ul", {class: "warn"}, c.notes.map((n) => el("li", {}, n))) : null,
      run, resultBox);
  });
  const rejected = res.rejected.map((r) => el("li", {class: "warn"}, `line ${r.line} (${r.format}): ${r.reason}`));
  out.replaceChildren(
    el("p", {id: "parse-summary"}, `${res.calls.length} call${res.calls.length === 1 ? "" : "s"} found` + (res.rejected.length ? `, ${res.rejected.length} block(s) not calls` : "")),
    el("ol", {class: "cards"}, items),
    ...(rejected.length ? [el("ul", {}, rejected)] : [])); // replaceChildren would write a null as "null"
});

// Run all: every call through /v1/call, one after another or at once, then
// the answers written back as the model reads them (/v1/results), in call order.
$("#parse-all-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const btn = $("#parse-run-all"), out = $("#parse-results-text");
  const format = $("#parse-results-format").value;
  // A call inside a code fence shows how to call, it does not make the call.
  const calls = $("#parse-fenced").checked ? parsedCalls : parsedCalls.filter((c) => !c.example);
  btn.disabled = true;
  out.hidden = false;
  out.textContent = `Running ${calls.length} call(s)…`;
  try {
    const one = async (c) => ({call: c, response: await api("POST", "/v1/call", {tool: c.tool, args: c.args || {}})});
    let answers = [];
    if ($("#parse-parallel").checked) answers = await Promise.all(calls.map(one));
    else for (const c of calls) answers.push(await one(c));
    answers.forEach((a) => addHistory(a.response));
    if (format === "json") out.textContent = JSON.stringify(answers, null, 2);
    else {
      const r = await api("POST", "/v1/results", {format, results: answers.map((a) => ({id: a.call.id, response: a.response}))});
      out.textContent = r.text;
    }
  } catch (e) { out.textContent = e.message; }
  btn.disabled = false;
});

// ---- Approvals -----------------------------------------------------------------

const seenApprovals = new Set();
let approvalsPrimed = false;

function setApprovalCount(n) {
  const b = $("#approvals-count");
  b.textContent = n;
  b.hidden = !n;
}

function notifyNew(pending) {
  for (const p of pending) {
    if (seenApprovals.has(p.id)) continue;
    seenApprovals.add(p.id);
    if (approvalsPrimed && "Notification" in window && Notification.permission === "granted") {
      new Notification(`vcpnode: ${p.tool} waits for approval`, {body: "Open the console to approve or deny it.", tag: p.id});
    }
  }
  approvalsPrimed = true;
}

function approvalCard(p, now) {
  const id = "appr-" + p.id.replace(/[^A-Za-z0-9_-]/g, "_");
  const reason = el("input", {type: "text", id: id + "-reason", placeholder: "optional"});
  // "Always" remembers the answer for every later call of the tool (of
  // its command, when it has several): the daemon keeps the rule.
  const scope = p.command ? `${p.tool} command ${p.command}` : p.tool;
  const decide = async (action, always) => {
    try {
      const body = reason.value ? {reason: reason.value} : {};
      if (always) body.always = true;
      const res = await api("POST", `/v1/approvals/${encodeURIComponent(p.id)}/${action}`, body);
      const done = `${action === "approve" ? "Approved" : "Denied"} ${p.tool} (${p.requestId}).`;
      $("#approvals-result").replaceChildren(el("p", {}, res.rule
        ? `${done} Every later call of ${scope} ${action === "approve" ? "runs" : "is refused"} without asking.` : done));
    } catch (e) { $("#approvals-result").replaceChildren(el("p", {class: "bad"}, e.message)); }
    refreshApprovals();
  };
  const buttons = [
    el("button", {type: "button", id: id + "-approve", onclick: () => decide("approve", false)}, "Approve"),
    el("button", {type: "button", class: "danger", id: id + "-deny", onclick: () => decide("deny", false)}, "Deny"),
  ];
  if (p.where !== "server") {
    buttons.push(
      el("button", {type: "button", id: id + "-always-approve", title: `Approve, and run every later call of ${scope} without asking`,
        onclick: () => decide("approve", true)}, "Always allow"),
      el("button", {type: "button", class: "danger", id: id + "-always-deny", title: `Deny, and refuse every later call of ${scope} without asking`,
        onclick: () => decide("deny", true)}, "Always deny"));
  }
  return el("li", {class: "card", "aria-labelledby": id + "-h"},
    el("h3", {id: id + "-h"}, el("code", {}, p.tool), p.command ? el("code", {}, p.command) : "", el("span", {class: "muted"}, `${p.where === "server" ? "on the server" + (p.maid ? ` (asked by ${p.maid})` : "") : "on this node"} · ${p.requestId} · expires in ${age(Date.parse(p.expires) - now)}`)),
    el("pre", {}, JSON.stringify(p.args || {}, null, 2)),
    el("div", {class: "field"}, el("label", {for: id + "-reason"}, "Reason (sent with a denial)"), reason),
    el("div", {class: "tool-controls"}, ...buttons));
}

// The answers remembered with "Always", each with a Forget button.
async function refreshRules() {
  const res = await api("GET", "/v1/approval-rules", undefined, {poll: true});
  const list = $("#rules-list");
  const key = JSON.stringify([res.rules, res.error]);
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  list.replaceChildren(...res.rules.map((r) => {
    const rid = "rule-" + r.id.replace(/[^A-Za-z0-9_-]/g, "_");
    return el("li", {},
      el("code", {}, r.id), ` ${r.verdict === "allow" ? "always allowed" : "always denied"}${r.reason ? ` (${r.reason})` : ""} `,
      el("button", {type: "button", id: rid + "-forget", "aria-label": `Forget ${r.id}`, onclick: async () => {
        try {
          await api("POST", "/v1/approval-rules/forget", {id: r.id});
          $("#approvals-result").replaceChildren(el("p", {}, `Forgot ${r.id}: its calls follow the config's approval again.`));
        } catch (e) { $("#approvals-result").replaceChildren(el("p", {class: "bad"}, e.message)); }
        refreshRules();
      }}, "Forget"));
  }));
  $("#rules-empty").hidden = res.rules.length !== 0;
  $("#rules-error").textContent = res.error || "";
}

async function refreshApprovals() {
  const res = await api("GET", "/v1/approvals", undefined, {poll: true});
  notifyNew(res.pending);
  setApprovalCount(res.pending.length);
  if (current !== "approvals") return;
  const now = Date.parse(res.now);
  const list = $("#approvals-list");
  // Keep cards being typed in; replace the list only when the set changed.
  const ids = res.pending.map((p) => p.id).join(",");
  if (list.dataset.ids !== ids) {
    list.dataset.ids = ids;
    list.replaceChildren(...res.pending.map((p) => approvalCard(p, now)));
  }
  $("#approvals-empty").hidden = res.pending.length !== 0;
}

pages.approvals = every("approvals", 1500, () => Promise.all([refreshApprovals(), refreshRules()]));

// Pending approvals are watched on every page, for the badge and notifications.
setInterval(() => { if (current !== "approvals") refreshApprovals().catch(() => {}); }, 3000);

function notifyState() {
  const s = $("#notify-state");
  if (!("Notification" in window)) { s.textContent = "This browser has no notifications."; $("#notify-enable").hidden = true; return; }
  s.textContent = Notification.permission === "granted" ? "Notifications are on." : Notification.permission === "denied" ? "Notifications are blocked in this browser." : "";
  $("#notify-enable").hidden = Notification.permission !== "default";
}
$("#notify-enable").addEventListener("click", async () => { await Notification.requestPermission(); notifyState(); });

// ---- Activity (GET /v1/events, when the daemon has it) --------------------------

let activityAbort = null;
const activity = [];

function eventLine(ev) {
  const when = (ev.time || ev.at || "").slice(11, 19);
  const bits = [when, ev.source, ev.kind === "info" || ev.kind === "tool_log" ? `${ev.kind} ${ev.channel || ""}/${ev.type || ""}` : ev.kind, ev.tool, ev.status,
    ev.kind === "dropped" ? `${ev.dropped} events lost` : null, ev.durationMs !== undefined ? `${ev.durationMs} ms` : null,
    (ev.text || ev.summary || ev.message || "").split("\n")[0]];
  return bits.filter((b) => b !== undefined && b !== null && b !== "").join("  ");
}

function renderActivity() {
  const f = $("#activity-filter").value.toLowerCase();
  const rows = activity.filter((l) => !f || l.toLowerCase().includes(f)).slice(-300).reverse();
  $("#activity-list").replaceChildren(...rows.map((l) => el("li", {}, l)));
}

pages.activity = {
  async enter() {
    activityAbort?.abort();
    activityAbort = new AbortController();
    activity.length = 0;
    try {
      const res = await fetch("/v1/events?since=0", {signal: activityAbort.signal, headers: {"X-Vcpnode-Poll": "1"}});
      if (!res.ok) throw new Error(`events: ${res.status}`);
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buf += dec.decode(value, {stream: true});
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          let line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line.startsWith("data:")) line = line.slice(5).trim();
          if (!line || line.startsWith(":") || line.startsWith("event:") || line.startsWith("id:")) continue;
          let ev;
          try { ev = JSON.parse(line); } catch { activity.push(line); continue; }
          if (ev.kind === "stream_start") continue;
          activity.push(eventLine(ev));
          if (activity.length > 1000) activity.splice(0, activity.length - 1000);
        }
        renderActivity();
      }
    } catch (e) {
      if (e.name !== "AbortError") banner(e.message);
    }
  },
  leave() { activityAbort?.abort(); },
};
$("#activity-filter").addEventListener("input", renderActivity);

// The Activity tab appears only when the daemon serves the event stream.
async function probeEvents() {
  try {
    const ctl = new AbortController();
    const res = await fetch("/v1/events", {signal: ctl.signal, headers: {"X-Vcpnode-Poll": "1"}});
    ctl.abort();
    $("#tab-activity").hidden = res.status === 404;
  } catch { /* aborted after the headers: fine */ }
}

// ---- start -------------------------------------------------------------------

notifyState();
await probeEvents();
show(location.hash.slice(1) || "status");
