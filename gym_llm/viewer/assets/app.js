// The gym_llm rollout viewer. Everything from the rollouts reaches the page through textContent
// (never innerHTML), so markup in a message shows as text.
(function () {
  "use strict";

  const PAGE = 50;
  const NO_FAILURE = "(none)";
  // fields shown elsewhere in the rollout view (the rest are the task's and the verifier's)
  const SHOWN = new Set([
    "responses_create_params", "response", "reward", "reward_components", "failure_kind",
    "failure_reason", "mask_sample", "env_id", "task_index", "repeat_index", "num_turns",
    "tool_errors", "timings",
  ]);

  // ------------------------------------------------------------------ data sources
  // Served: the server filters, sorts and pages its index and reads one rollout at a time.
  function serverSource() {
    async function get(url) {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);
      return response.json();
    }
    return {
      meta: () => get("api/meta"),
      rows: (q) => get("api/rollouts?" + new URLSearchParams(queryParams(q))),
      row: (index) => get(`api/rollouts/${index}`),
    };
  }

  // Static file: the rollouts are in the page; the same filters run here.
  function staticSource(data) {
    return {
      meta: async () => data.meta,
      rows: async (q) => {
        const selected = select(data.summaries, q);
        return { total: selected.length, offset: q.offset, rows: selected.slice(q.offset, q.offset + PAGE) };
      },
      row: async (index) => ({ index, summary: data.summaries[index], row: data.rows[index] }),
    };
  }

  function select(summaries, q) {
    const keep = summaries.filter((s) => {
      if (q.env && s.env_id !== q.env) return false;
      if (q.failure && (s.failure_kind || NO_FAILURE) !== q.failure) return false;
      if (q.masked === "hide" && s.masked) return false;
      if (q.masked === "only" && !s.masked) return false;
      if (q.min_reward !== "" && (s.reward === null || s.reward < Number(q.min_reward))) return false;
      if (q.max_reward !== "" && (s.reward === null || s.reward > Number(q.max_reward))) return false;
      return true;
    });
    if (q.sort === "index") return q.order === "desc" ? keep.reverse() : keep;
    const present = keep.filter((s) => s[q.sort] !== null && s[q.sort] !== undefined);
    const absent = keep.filter((s) => s[q.sort] === null || s[q.sort] === undefined);
    const sign = q.order === "desc" ? -1 : 1;
    present.sort((a, b) => {
      const x = a[q.sort], y = b[q.sort];
      const c = x < y ? -1 : x > y ? 1 : a.index - b.index;
      return sign * c;
    });
    return present.concat(absent);
  }

  function queryParams(q) {
    const params = { sort: q.sort, order: q.order, offset: q.offset, limit: PAGE, masked: q.masked };
    for (const key of ["env", "failure", "min_reward", "max_reward"]) if (q[key] !== "") params[key] = q[key];
    return params;
  }

  // ------------------------------------------------------------------ DOM helpers
  function el(tag, props, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) if (child) node.append(child);
    return node;
  }
  const $ = (id) => document.getElementById(id);

  function pretty(value) {
    if (typeof value === "string") {
      try {
        const parsed = JSON.parse(value);
        if (parsed !== null && typeof parsed === "object") return JSON.stringify(parsed, null, 2);
      } catch (e) { /* not JSON: show the text */ }
      return value;
    }
    return JSON.stringify(value, null, 2);
  }

  function contentText(content) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content.map((part) => (part && typeof part === "object" ? part.text || "" : String(part))).join("");
    }
    return content === null || content === undefined ? "" : JSON.stringify(content);
  }

  function rewardClass(reward) {
    if (reward === null || reward === undefined) return "";
    return reward > 0 ? "reward-good" : "reward-bad";
  }

  function fmtReward(reward) {
    return reward === null || reward === undefined ? "–" : String(Math.round(reward * 1000) / 1000);
  }

  // ------------------------------------------------------------------ list
  const state = {
    env: "", failure: "", masked: "all", min_reward: "", max_reward: "",
    sort: "index", order: "asc", offset: 0, selected: null,
  };
  let source = null;
  let listToken = 0;

  function fillSelect(select, counts, allLabel) {
    const current = select.value;
    select.replaceChildren(el("option", { value: "", text: allLabel }));
    for (const [value, n] of Object.entries(counts)) {
      select.append(el("option", { value, text: `${value || "(no env)"} (${n})` }));
    }
    select.value = current && counts[current] !== undefined ? current : "";
  }

  async function loadMeta() {
    const meta = await source.meta();
    $("file").textContent = meta.file || "";
    const shown = meta.total.toLocaleString();
    $("note").textContent = meta.total_in_file !== undefined && meta.total_in_file > meta.total
      ? `${shown} of ${meta.total_in_file.toLocaleString()} rollouts (static file)`
      : `${shown} rollouts`;
    fillSelect($("f-env"), meta.envs, "all envs");
    fillSelect($("f-failure"), meta.failure_kinds, "any");
  }

  async function loadRows() {
    const token = ++listToken;
    const page = await source.rows({ ...state });
    if (token !== listToken) return; // a newer request is under way
    const body = $("list").tBodies[0];
    body.replaceChildren(...page.rows.map(rowView));
    const first = page.total ? page.offset + 1 : 0;
    $("range").textContent = `${first.toLocaleString()}–${(page.offset + page.rows.length).toLocaleString()}`
      + ` of ${page.total.toLocaleString()}`;
    $("prev").disabled = page.offset === 0;
    $("next").disabled = page.offset + page.rows.length >= page.total;
    for (const th of document.querySelectorAll("#list th[data-sort]")) {
      th.classList.toggle("sorted-asc", th.dataset.sort === state.sort && state.order === "asc");
      th.classList.toggle("sorted-desc", th.dataset.sort === state.sort && state.order === "desc");
    }
  }

  function rowView(s) {
    const tr = el("tr", { "data-index": s.index, class: s.masked ? "masked" : "" }, [
      el("td", { class: "num", text: String(s.index) }),
      el("td", { text: s.env_id || "" }),
      el("td", { class: "num", text: s.task_index ?? "" }),
      el("td", { class: "num", text: s.repeat_index ?? "" }),
      el("td", { class: `num ${rewardClass(s.reward)}`, text: fmtReward(s.reward) }),
      el("td", { class: "num", text: s.num_turns ?? "" }),
      el("td", { text: s.masked ? `${s.failure_kind || ""} (masked)` : s.failure_kind || "" }),
      el("td", { class: "preview", text: s.preview, title: s.preview }),
    ]);
    if (s.index === state.selected) tr.classList.add("selected");
    tr.addEventListener("click", () => openRollout(s.index));
    return tr;
  }

  // ------------------------------------------------------------------ one rollout
  async function openRollout(index) {
    state.selected = index;
    for (const tr of $("list").tBodies[0].rows) tr.classList.toggle("selected", Number(tr.dataset.index) === index);
    const pane = $("detail-pane");
    try {
      const data = await source.row(index);
      if (state.selected !== index) return;
      pane.replaceChildren(...rolloutView(data.index, data.row));
      pane.scrollTop = 0;
    } catch (error) {
      pane.replaceChildren(el("p", { class: "error", text: `Could not read rollout ${index}: ${error.message}` }));
    }
  }

  function rolloutView(index, row) {
    const title = `${row.env_id || "rollout"} · task ${row.task_index ?? "?"} · repeat ${row.repeat_index ?? "?"}`;
    const reward = typeof row.reward === "number" ? row.reward : null;
    const badges = el("p", {}, [
      el("span", { class: `badge ${reward === null ? "" : reward > 0 ? "good" : "bad"}`, text: `reward ${fmtReward(reward)}` }),
      el("span", { class: "badge", text: row.num_turns === 1 ? "1 turn" : `${row.num_turns ?? "?"} turns` }),
      row.failure_kind ? el("span", { class: "badge bad", text: `failure: ${row.failure_kind}` }) : null,
      row.mask_sample ? el("span", { class: "badge warn", text: "masked (not for training)" }) : null,
      row.tool_errors ? el("span", { class: "badge warn", text: `${row.tool_errors} tool errors` }) : null,
      el("span", { class: "muted", text: `rollout #${index}` }),
    ]);
    return [
      el("h2", { text: title }),
      badges,
      el("h3", { text: "Conversation" }),
      ...conversationView(row),
      el("h3", { text: "Verify" }),
      verifyView(row),
      el("h3", { text: "Task and verifier fields" }),
      fieldsView(row),
      toolsView(row),
      el("details", {}, [el("summary", { text: "Raw JSON" }), el("pre", { text: JSON.stringify(row, null, 2) })]),
    ];
  }

  function conversationView(row) {
    const params = row.responses_create_params || {};
    const prompt = [];
    if (params.instructions) prompt.push({ type: "message", role: "system", content: params.instructions });
    if (typeof params.input === "string") prompt.push({ type: "message", role: "user", content: params.input });
    else if (Array.isArray(params.input)) prompt.push(...params.input);
    const output = (row.response && Array.isArray(row.response.output)) ? row.response.output : [];
    const names = {};
    for (const item of [...prompt, ...output]) {
      if (item && item.type === "function_call") names[item.call_id] = item.name;
    }
    const nodes = prompt.map((item) => itemView(item, names));
    nodes.push(el("div", { class: "turn-divider", text: output.length ? "— the model's turns —" : "— no model output —" }));
    nodes.push(...output.map((item) => itemView(item, names)));
    if (row.failure_reason) nodes.push(el("p", { class: "error", text: row.failure_reason }));
    return nodes;
  }

  function itemView(item, names) {
    if (!item || typeof item !== "object") return el("pre", { text: JSON.stringify(item) });
    const type = item.type || "message";
    if (type === "message") {
      const role = String(item.role || "message");
      return el("div", { class: `msg ${role}` }, [
        el("div", { class: "who", text: role }),
        el("div", { class: "text", text: contentText(item.content) }),
      ]);
    }
    if (type === "reasoning") {
      const parts = [...(item.summary || []), ...(Array.isArray(item.content) ? item.content : [])];
      return el("div", { class: "msg reasoning" }, [
        el("div", { class: "who", text: "reasoning" }),
        el("div", { class: "text", text: parts.map((p) => (p && p.text) || "").join("\n") }),
      ]);
    }
    if (type === "function_call") {
      return el("div", { class: "msg tool-call" }, [
        el("div", { class: "who", text: `tool call · ${item.name} · ${item.call_id || ""}` }),
        el("pre", { text: pretty(item.arguments) }),
      ]);
    }
    if (type === "function_call_output") {
      const name = names[item.call_id];
      return el("div", { class: "msg tool-output" }, [
        el("div", { class: "who", text: `tool output · ${name || "?"} · ${item.call_id || ""}` }),
        el("pre", { text: pretty(typeof item.output === "string" ? item.output : contentText(item.output)) }),
      ]);
    }
    return el("div", { class: "msg" }, [el("div", { class: "who", text: type }), el("pre", { text: pretty(item) })]);
  }

  function kvTable(entries) {
    return el("table", { class: "kv" }, [
      el("tbody", {}, entries.map(([key, value]) => el("tr", {}, [
        el("th", { text: key }),
        el("td", { text: typeof value === "string" ? value : JSON.stringify(value, null, 2) }),
      ]))),
    ]);
  }

  function verifyView(row) {
    const entries = [["reward", row.reward]];
    for (const [key, value] of Object.entries(row.reward_components || {})) entries.push([`component: ${key}`, value]);
    entries.push(["failure_kind", row.failure_kind ?? null]);
    if (row.failure_reason) entries.push(["failure_reason", row.failure_reason]);
    entries.push(["mask_sample", !!row.mask_sample], ["tool_errors", row.tool_errors ?? 0]);
    if (row.timings) entries.push(["timings", row.timings]);
    return kvTable(entries);
  }

  function fieldsView(row) {
    const entries = Object.entries(row).filter(([key]) => !SHOWN.has(key));
    return entries.length ? kvTable(entries) : el("p", { class: "muted", text: "none" });
  }

  function toolsView(row) {
    const tools = (row.responses_create_params || {}).tools || [];
    if (!tools.length) return null;
    const names = tools.map((t) => t.name || (t.function && t.function.name) || t.type).join(", ");
    return el("details", {}, [
      el("summary", { text: `Tools (${tools.length}): ${names}` }),
      el("pre", { text: JSON.stringify(tools, null, 2) }),
    ]);
  }

  // ------------------------------------------------------------------ wiring
  function onFilter(key, value) {
    if (state[key] === value) return;
    state[key] = value;
    state.offset = 0;
    loadRows().catch(showError);
  }

  function showError(error) {
    $("range").textContent = `error: ${error.message}`;
  }

  function debounce(fn, ms) {
    let timer = null;
    return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
  }

  async function start() {
    const embedded = document.getElementById("gym-llm-data");
    source = embedded ? staticSource(JSON.parse(embedded.textContent)) : serverSource();
    if (embedded) $("reload").hidden = true;
    $("f-env").addEventListener("change", (e) => onFilter("env", e.target.value));
    $("f-failure").addEventListener("change", (e) => onFilter("failure", e.target.value));
    $("f-masked").addEventListener("change", (e) => onFilter("masked", e.target.value));
    for (const [id, key] of [["f-min", "min_reward"], ["f-max", "max_reward"]]) {
      const update = debounce((value) => onFilter(key, value.trim()), 250); // one timer per box
      for (const type of ["input", "change"]) $(id).addEventListener(type, (e) => update(e.target.value));
    }
    $("filters").addEventListener("submit", (e) => e.preventDefault());
    for (const th of document.querySelectorAll("#list th[data-sort]")) {
      th.addEventListener("click", () => {
        const key = th.dataset.sort;
        state.order = state.sort === key && state.order === "asc" ? "desc" : "asc";
        state.sort = key;
        state.offset = 0;
        loadRows().catch(showError);
      });
    }
    $("prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - PAGE); loadRows().catch(showError); });
    $("next").addEventListener("click", () => { state.offset += PAGE; loadRows().catch(showError); });
    $("reload").addEventListener("click", () => loadMeta().then(loadRows).catch(showError));
    await loadMeta();
    await loadRows();
    document.body.dataset.ready = "true";
  }

  start().catch(showError);
})();
