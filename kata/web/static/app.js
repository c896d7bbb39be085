// The practice room's page: the session's screen, the katas, the review and the progress charts.
// Everything it shows comes from the server's JSON API (kata/web/app.py); everything it does is a
// POST with the token. The files it edits are the workspace's: a save here is a save on disk, and
// a save made elsewhere shows up here (or, over unsaved edits, as a notice that keeps both).
"use strict";
(() => {
  const TOKEN = document.querySelector('meta[name="kata-token"]').content;
  const POLL_MS = 1000;

  // --- small helpers -------------------------------------------------------------------------

  const $ = (sel, root = document) => root.querySelector(sel);

  // h("div", {class: "x", text: "y", onclick: f}, child...): an element; `html` only for markup
  // the server rendered and escaped (prompts, highlighted code, charts)
  function h(tag, attrs = {}, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") el.textContent = v;
      else if (k === "html") el.innerHTML = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  function clock(seconds) {
    let s = Math.max(0, Math.round(seconds));
    const hrs = Math.floor(s / 3600); s -= hrs * 3600;
    const m = Math.floor(s / 60); s -= m * 60;
    const pad = (n) => String(n).padStart(2, "0");
    return hrs ? `${hrs}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
  }

  const pts = (x) => (x === null || x === undefined ? "-" : String(Math.round(x * 100) / 100));

  async function api(method, path, body) {
    const opts = { method, headers: { "X-Kata-Token": TOKEN }, cache: "no-store" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, opts);
    } catch (e) {
      return { ok: false, status: 0, data: { error: "the server does not answer: is `kata serve` still running?" } };
    }
    let data;
    try {
      data = await res.json();
    } catch (e) {
      data = { error: `${res.status} ${res.statusText}` };
    }
    return { ok: res.ok, status: res.status, data };
  }

  // --- what the page knows ---------------------------------------------------------------------

  const S = {
    state: null, // the last /api/state
    stateAt: 0, // performance.now() when it came
    sessionId: null, // the session the room shows
    current: null, // the question shown (its slug)
    kata: {}, // slug -> /api/kata
    files: {}, // "slug/role" -> {slug, role, name, base, savedText, editor, host, dirty, conflict, saving}
    role: {}, // slug -> the role of the file shown
    results: {}, // slug -> {tab, run, submit}
    busy: false,
    ended: null, // {id, lines, kept}: what the end of the last session said
    scroll: {}, // slug -> where its prompt was scrolled to
  };

  // --- the header: clock, questions, warnings ----------------------------------------------------

  function remaining() {
    const s = S.state && S.state.session;
    if (!s) return 0;
    return Math.max(0, s.remaining_s - (performance.now() - S.stateAt) / 1000);
  }

  function drawClock() {
    const el = $("#clock");
    const s = S.state && S.state.session;
    if (!s) {
      el.textContent = "";
      el.className = "";
      return;
    }
    const left = remaining();
    el.textContent = `${clock(left)} left`;
    el.className = left <= 60 ? "warn3" : left <= 300 ? "warn2" : left <= 600 ? "warn1" : "";
    if (left <= 0 && !S.pollSoon) {
      S.pollSoon = true;
      setTimeout(() => { S.pollSoon = false; poll(); }, 300);
    }
  }

  function drawBanner() {
    const b = $("#banner");
    const s = S.state && S.state.session;
    const dirty = Object.values(S.files).some((f) => f.dirty);
    if (s && s.warning) {
      b.hidden = false;
      b.className = remaining() <= 60 ? "warn3" : remaining() <= 300 ? "warn2" : "warn1";
      b.textContent = `Session ${s.id}: ${s.warning}` + (dirty ? ". Unsaved edits do not count: save them." : ".");
    } else {
      b.hidden = true;
    }
  }

  function drawHeader() {
    const st = S.state;
    const s = st && st.session;
    const where = $("#where");
    where.textContent = s ? `Session ${s.id}: ${s.title}` : "No live session";
    const nav = $("#questions");
    nav.replaceChildren();
    nav.hidden = !(s && st.questions.length > 1);
    if (!nav.hidden) {
      st.questions.forEach((q, i) => {
        const full = q.hidden && q.hidden[0] === q.hidden[1];
        nav.append(h("button", {
          type: "button", class: "qtab" + (q.slug === S.current && currentRoute()[0] === "" ? " on" : ""),
          "data-slug": q.slug, title: q.title, onclick: () => { location.hash = "#/"; showQuestion(q.slug); },
        }, `Q${i + 1} `, h("b", { text: q.slug }),
        h("span", { class: "pts" + (full ? " full" : ""), text: q.hidden ? `${pts(q.hidden[0])}/${pts(q.hidden[1])}` : `${q.label}` })));
      });
    }
    for (const a of document.querySelectorAll("#links a")) {
      a.classList.toggle("on", a.dataset.route === currentRoute()[0]);
    }
    $("#submit-btn").hidden = Boolean(st && st.bundle);
    drawClock();
    drawBanner();
  }

  // --- polling: the clock, the questions, files saved elsewhere, the session's end -----------------

  async function poll() {
    if (S.polling) return;
    S.polling = true;
    try {
      const r = await api("GET", "/api/state");
      if (!r.ok) {
        $("#where").textContent = r.data.error || "offline";
        return;
      }
      S.state = r.data;
      S.stateAt = performance.now();
      const s = r.data.session;
      if (s && S.sessionId !== s.id) await enterSession(s);
      else if (!s && S.sessionId !== null && !S.finishing) await sessionEnded();
      else if (!s && r.data.pending_settle && !S.settling) { // a deadline passed while no page watched
        await settleNow(null);
        if (S.ended) { history.replaceState(null, "", `#/review/${S.ended.id}`); await route(); }
      }
      if (s) {
        await watchLevels();
        drawQuestionHead();
        await watchFiles();
      }
      drawHeader();
    } finally {
      S.polling = false;
    }
  }

  async function loop() {
    await poll();
    setTimeout(loop, POLL_MS);
  }

  // --- the room: one question at a time -----------------------------------------------------------

  async function enterSession(s) {
    S.sessionId = s.id;
    S.kata = {};
    for (const f of Object.values(S.files)) { // a session started elsewhere: unsaved edits are kept
      if (f.dirty) {
        const r = await api("POST", `/api/keep/${encodeURIComponent(f.slug)}/${encodeURIComponent(f.role)}`, { text: f.editor.getText() });
        if (r.ok) toast(`Your unsaved edits of ${f.name} are kept in ${r.data.archived}.`, "info");
      }
      f.host.remove();
    }
    S.files = {};
    S.results = {};
    $("#result-body").replaceChildren(h("p", { class: "muted", text: "Run checks your file on the visible tests; Submit grades it on the hidden suite." }));
    const first = S.state.questions[0];
    S.current = first.slug;
    if (currentRoute()[0] === "") await showQuestion(first.slug);
    else if (currentRoute()[0] === "catalog") await showCatalog(); // its Start buttons are gone now
  }

  function question(slug) {
    return S.state && S.state.questions.find((q) => q.slug === slug);
  }

  async function loadKata(slug) {
    const r = await api("GET", `/api/kata/${encodeURIComponent(slug)}`);
    if (!r.ok) {
      toast(r.data.error, "bad");
      return null;
    }
    S.kata[slug] = r.data;
    for (const f of r.data.files) ensureEditor(slug, f);
    if (!S.role[slug] || !r.data.files.some((f) => f.role === S.role[slug])) S.role[slug] = r.data.files[0].role;
    return r.data;
  }

  function ensureEditor(slug, f) {
    const key = `${slug}/${f.role}`;
    if (S.files[key]) return S.files[key];
    const host = h("div", { class: "editor-host", "data-file": key, hidden: true });
    $("#editors").append(host);
    const entry = { slug, role: f.role, name: f.name, path: f.path, base: f.sha, savedText: f.text || "",
      host, dirty: false, conflict: null, saving: false };
    entry.editor = window.KataEditor.create({
      parent: host, doc: f.text || "",
      onSave: () => save(entry),
      onChange: () => { entry.dirty = entry.editor.getText() !== entry.savedText; drawFileState(); drawBanner(); },
    });
    S.files[key] = entry;
    return entry;
  }

  async function showQuestion(slug) {
    const pane = $(".prompt-pane");
    if (S.current && S.current !== slug) S.scroll[S.current] = pane.scrollTop; // each question keeps its place
    const moved = S.current !== slug || $("#room").hidden;
    S.current = slug;
    showView("room");
    const data = S.kata[slug] || (await loadKata(slug));
    if (!data) return;
    $("#prompt").innerHTML = data.html;
    if (moved) pane.scrollTop = S.scroll[slug] || 0;
    drawQuestionHead();
    drawHints(data.hints, data.hints_closed);
    drawFiles();
    drawResults();
    drawHeader();
  }

  function drawQuestionHead() {
    const slug = S.current;
    const data = S.kata[slug];
    const q = question(slug);
    if (!data || !q) return;
    const span = q.label.replace(/^L/, "");
    $("#q-levels").textContent = (span.includes("-") ? "levels " : "level ") + span;
    $("#q-score").textContent = q.hidden ? `hidden ${pts(q.hidden[0])}/${pts(q.hidden[1])} pts` : "not submitted";
    $("#q-score").className = "tag" + (q.hidden && q.hidden[0] === q.hidden[1] ? " good" : "");
  }

  // a level opened elsewhere (a `kata submit` in a terminal): its text joins the prompt
  async function watchLevels() {
    for (const q of S.state.questions) {
      const data = S.kata[q.slug];
      if (data && data.levels.join() !== q.levels_open.join() && !S.busy) {
        await loadKata(q.slug);
        if (q.slug === S.current && currentRoute()[0] === "") {
          $("#prompt").innerHTML = S.kata[q.slug].html;
          drawHints(S.kata[q.slug].hints, S.kata[q.slug].hints_closed);
        }
      }
    }
  }

  function drawFiles() {
    const slug = S.current;
    const tabs = $("#file-tabs");
    tabs.replaceChildren();
    for (const f of Object.values(S.files)) {
      const shown = f.slug === slug && f.role === S.role[slug];
      f.host.hidden = !shown;
      if (f.slug === slug) {
        tabs.append(h("button", { type: "button", class: "ftab" + (shown ? " on" : ""), title: f.path,
          onclick: () => { S.role[slug] = f.role; drawFiles(); } }, f.path));
      }
    }
    drawFileState();
    drawNotice();
    const f = currentFile();
    if (f) f.editor.focus();
  }

  function currentFile() {
    return S.files[`${S.current}/${S.role[S.current]}`];
  }

  function drawFileState() {
    const f = currentFile();
    const el = $("#file-state");
    if (!f) { el.textContent = ""; return; }
    el.textContent = f.saving ? "saving..." : f.dirty ? "unsaved edits" : f.base ? "saved" : "no file on disk";
    el.className = f.dirty ? "dirty" : "muted";
  }

  // --- saving, and files saved elsewhere ----------------------------------------------------------

  async function save(f, force = false) {
    const text = f.editor.getText();
    f.saving = true;
    drawFileState();
    const r = await api("POST", `/api/save/${encodeURIComponent(f.slug)}/${encodeURIComponent(f.role)}`,
      { text, base: f.base, force });
    f.saving = false;
    if (r.status === 409) {
      f.conflict = r.data.disk;
      drawNotice();
      drawFileState();
      return false;
    }
    if (!r.ok) {
      toast(r.data.error, "bad");
      drawFileState();
      return false;
    }
    f.base = r.data.sha;
    f.savedText = text;
    f.dirty = f.editor.getText() !== text;
    const kept = f.conflict && r.data.archived;
    f.conflict = null;
    if (kept) f.notice = { kind: "info", text: `Saved your edits; the version from disk is kept in ${r.data.archived}.` };
    drawNotice();
    drawFileState();
    drawBanner();
    return true;
  }

  async function saveQuestion(slug) {
    for (const f of Object.values(S.files)) {
      if (f.slug === slug && (f.dirty || f.conflict)) {
        if (f.conflict) { S.role[slug] = f.role; drawFiles(); return false; }
        if (!(await save(f))) return false;
      }
    }
    return true;
  }

  async function watchFiles() {
    for (const q of S.state.questions) {
      for (const info of q.files) {
        const f = S.files[`${q.slug}/${info.role}`];
        if (!f || f.saving || f.conflict || info.sha === f.base) continue;
        const r = await api("GET", `/api/file/${encodeURIComponent(q.slug)}/${encodeURIComponent(info.role)}`);
        if (!r.ok || r.data.sha === f.base || f.saving) continue;
        if (r.data.text === null) continue; // gone or not text: the next save writes it again
        if (!f.dirty) {
          f.editor.setText(r.data.text);
          f.base = r.data.sha;
          f.savedText = r.data.text;
          f.notice = { kind: "info", text: `${f.name} was saved outside this page: reloaded (Ctrl-Z brings back what was here).` };
        } else {
          f.conflict = r.data;
        }
        if (f.slug === S.current) { drawNotice(); drawFileState(); }
      }
    }
  }

  function drawNotice() {
    const box = $("#notice");
    const f = currentFile();
    box.replaceChildren();
    box.hidden = true;
    if (!f) return;
    if (f.conflict) {
      box.hidden = false;
      box.className = "notice conflict";
      const disk = h("pre", { class: "disk", hidden: true, text: f.conflict.text || "" });
      box.append(
        h("p", {}, h("b", { text: `${f.path} was saved outside this page while you had unsaved edits here.` }),
          " Both versions are kept until you choose."),
        h("div", { class: "row" },
          h("button", { type: "button", class: "primary", onclick: () => keepMine(f) }, "Save my edits (the disk version is archived)"),
          h("button", { type: "button", onclick: () => takeDisk(f) }, "Load the disk version (my edits are archived)"),
          h("button", { type: "button", class: "quiet", onclick: () => { disk.hidden = !disk.hidden; } }, "Show the disk version")),
        disk);
    } else if (f.notice) {
      box.hidden = false;
      box.className = `notice ${f.notice.kind}`;
      box.append(h("span", { text: f.notice.text }),
        h("button", { type: "button", class: "quiet", onclick: () => { f.notice = null; drawNotice(); } }, "Dismiss"));
    }
  }

  async function keepMine(f) {
    await save(f, true);
  }

  async function takeDisk(f) {
    const r = await api("POST", `/api/keep/${encodeURIComponent(f.slug)}/${encodeURIComponent(f.role)}`, { text: f.editor.getText() });
    if (!r.ok) { toast(r.data.error, "bad"); return; }
    const disk = f.conflict;
    f.editor.setText(disk.text);
    f.base = disk.sha;
    f.savedText = disk.text;
    f.dirty = false;
    f.conflict = null;
    f.notice = { kind: "info", text: `Loaded the version on disk; your edits are kept in ${r.data.archived} (and Ctrl-Z brings them back).` };
    drawNotice();
    drawFileState();
  }

  // --- Run, Submit, hints, Finish -----------------------------------------------------------------

  function setBusy(text) {
    S.busy = Boolean(text);
    $("#busy").textContent = text || "";
    for (const id of ["#run-btn", "#submit-btn", "#finish-btn", "#hint-btn"]) $(id).disabled = S.busy;
  }

  async function act(kind) {
    const slug = S.current;
    if (S.busy || !slug) return;
    setBusy(kind === "run" ? "running the visible tests..." : "grading on the hidden suite...");
    try {
      if (!(await saveQuestion(slug))) return;
      const r = await api("POST", `/api/${kind === "run" ? "check" : "submit"}/${encodeURIComponent(slug)}`);
      const res = S.results[slug] || (S.results[slug] = {});
      res[kind] = r;
      res.tab = kind;
      if (kind === "submit" && r.ok && r.data.opened.length) {
        await loadKata(slug);
        if (S.current === slug) {
          $("#prompt").innerHTML = S.kata[slug].html;
          drawHints(S.kata[slug].hints, S.kata[slug].hints_closed);
        }
      }
      await poll();
      if (S.current === slug) drawResults();
    } finally {
      setBusy(null);
    }
  }

  function drawResults() {
    const res = S.results[S.current] || {};
    for (const b of document.querySelectorAll(".result-tabs .tab")) {
      b.classList.toggle("on", b.dataset.tab === res.tab);
      b.disabled = !res[b.dataset.tab];
    }
    const body = $("#result-body");
    const r = res.tab && res[res.tab];
    if (!r) {
      body.replaceChildren(h("p", { class: "muted", text: "Run checks your file on the visible tests; Submit grades it on the hidden suite." }));
      return;
    }
    if (!r.ok) {
      body.replaceChildren(h("p", { class: "bad", text: r.data.error }));
      return;
    }
    body.replaceChildren(...(res.tab === "run" ? runView(r.data) : submitView(r.data)));
  }

  // a table's header row; a name ending in "#" heads a column of numbers (right-aligned)
  function head(...names) {
    return h("thead", {}, h("tr", {}, ...names.map((t) => h("th", { class: t.endsWith("#") ? "num" : null, text: t.replace(/#$/, "") }))));
  }

  function pill(status) {
    return h("span", { class: `pill ${status}`, text: status.toUpperCase() });
  }

  function runView(d) {
    const levels = d.levels.map((l) => `level ${l.level}: ${l.passed}/${l.total}`).join(" · ");
    const out = [h("div", { class: "summary" }, h("b", { text: `${d.kata}` }),
      ` visible tests on ${d.file}: `, h("b", { class: d.passed === d.total ? "good" : "bad", text: `${d.passed}/${d.total} pass` }),
      h("span", { class: "muted", text: `   ${levels}` }))];
    if (d.timeouts) out.push(h("p", { class: "bad", text: d.timeouts }));
    if (d.check_note) out.push(h("p", { text: d.check_note }));
    const rows = [];
    for (const c of d.cases) {
      rows.push(h("tr", { class: c.status },
        h("td", {}, pill(c.status)), h("td", { text: c.level === null ? "" : `L${c.level}` }),
        h("td", { class: "name", text: c.name }),
        h("td", {}, c.call ? h("code", { text: c.call }) : ""),
        h("td", {}, c.expected ? h("code", { text: c.expected }) : ""),
        h("td", {}, c.actual ? h("code", { class: c.status === "pass" ? "" : "bad", text: c.actual }) : "")));
      if (c.status !== "pass" && (c.message || c.detail)) {
        const shown = c.call ? null : (c.message || "").split("\n")[0];
        rows.push(h("tr", { class: "more" }, h("td", { colspan: 2 }), h("td", { colspan: 4 },
          shown ? h("div", { class: "msg", text: shown }) : null,
          c.detail ? h("details", {}, h("summary", { text: "traceback" }), h("pre", { text: c.detail })) : null)));
      }
    }
    out.push(h("table", { class: "cases" },
      h("colgroup", {}, ...["st", "lv", "nm", "cl", "", ""].map((c) => h("col", { class: c || null }))),
      head("", "", "test", "call", "expected", "actual"),
      h("tbody", {}, rows)));
    return out;
  }

  function levelTable(levels, total) {
    const body = levels.map((l) => h("tr", {},
      h("td", { class: "num", text: String(l.level) }), h("td", { text: l.name }),
      h("td", { class: "num " + (l.passed === l.total && l.total ? "good" : l.passed ? "meh" : "bad"), text: `${l.passed}/${l.total}` }),
      h("td", { class: "num", text: `${pts(l.points_earned)}/${pts(l.points_possible)}` })));
    body.push(h("tr", { class: "total" }, h("td"), h("td", { text: "total" }),
      h("td", { class: "num", text: `${total.passed}/${total.total}` }),
      h("td", { class: "num" }, h("b", { text: `${pts(total.points_earned)}/${pts(total.points_possible)}` }))));
    return h("table", { class: "levels" },
      head("level#", "name", "tests#", "points#"),
      h("tbody", {}, body));
  }

  function testList(tests, reveal) {
    const sorted = [...tests].sort((a, b) => (a.status === "pass") - (b.status === "pass"));
    return h("ul", { class: "tests" }, sorted.map((t) => h("li", { class: t.status },
      pill(t.status), ` L${t.level ?? ""} `, h("span", { class: "name", text: t.name }),
      reveal && t.edge ? h("span", { class: "muted", text: ` (${t.edge})` }) : null,
      reveal && t.message && t.status !== "pass" ? h("div", { class: "msg", text: t.message }) : null)));
  }

  function submitView(d) {
    const out = [h("div", { class: "summary" }, h("b", { text: d.kata }), ": hidden suite, ",
      h("b", { class: d.points_earned === d.points_possible ? "good" : "", text: `${pts(d.points_earned)}/${pts(d.points_possible)} points` }))];
    out.push(levelTable(d.levels, d));
    if (d.message) out.push(h("p", { class: "bad", text: d.message }));
    if (d.timeouts) out.push(h("p", { class: "bad", text: d.timeouts }));
    for (const line of (d.part ? d.part.lines : [])) out.push(h("p", { text: line }));
    for (const lv of d.opened) {
      out.push(h("div", { class: "opened" }, h("b", { text: `Level ${lv} is open:` }), " its text is in the prompt now; Run checks its examples."));
    }
    if (d.practice) {
      out.push(h("p", { class: "muted", text: "Practice (no live session): every hidden test is shown; the code is kept as a snapshot and counts for no session." }));
      out.push(testList(d.tests, true));
    } else {
      if (d.missed && d.missed.length) { // practice: what each missed hidden test checks, never its input
        const tests = d.missed.reduce((n, m) => n + m.tests, 0);
        out.push(h("p", { text: `Missed (${tests}), by what each hidden test checks:` }));
        out.push(h("ul", { class: "missed" }, d.missed.map((m) => h("li", { text: `L${m.level ?? ""} ${m.edge}${m.tests > 1 ? ` (${m.tests} tests)` : ""}` }))));
      }
      out.push(h("p", { class: "muted", text: d.recorded }));
    }
    return out;
  }

  function drawHints(hints, closed) {
    const list = $("#hint-list");
    list.replaceChildren(...hints.map((t) => h("li", { text: t })));
    $("#hint-note").textContent = closed ? `${closed} more not revealed yet${hints.length ? "" : " (a hint costs no points)"}.` : "";
  }

  async function hint() {
    const slug = S.current;
    if (S.busy || !slug) return;
    const r = await api("POST", `/api/hint/${encodeURIComponent(slug)}`);
    if (!r.ok) { toast(r.data.error, "bad"); return; }
    drawHints(r.data.hints, r.data.hints_closed);
    if (!r.data.hint) toast(r.data.hints.length ? "Every hint of the open levels is shown already." : "No hint for the open levels.", "info");
  }

  async function finish() {
    const s = S.state && S.state.session;
    if (!s || S.busy) return;
    const dirty = Object.values(S.files).some((f) => f.dirty);
    const ask = `End session ${s.id} (${s.name}) with ${clock(remaining())} left? It cannot be resumed.`
      + (dirty ? "\nYour unsaved edits are saved first." : "");
    if (!window.confirm(ask)) return;
    setBusy("finishing: grading what you saved last...");
    S.finishing = true; // the session ends under the poll's eyes: this function says how
    try {
      for (const q of S.state.questions) if (!(await saveQuestion(q.slug))) return;
      const r = await api("POST", "/api/finish");
      if (!r.ok) { toast(r.data.error, "bad"); return; }
      S.ended = { id: r.data.session, lines: r.data.lines, kept: [], how: `Session ${r.data.session} (${r.data.name}) finished:` };
      S.sessionId = null;
      history.replaceState(null, "", `#/review/${r.data.session}`);
      await route();
    } finally {
      S.finishing = false;
      setBusy(null);
    }
  }

  // --- the session's end: the deadline's auto-submit, then the review ---------------------------------

  async function sessionEnded() {
    const id = S.sessionId;
    S.sessionId = null;
    const kept = [];
    for (const f of Object.values(S.files)) { // unsaved edits did not count, but are not lost
      if (f.dirty) {
        const r = await api("POST", `/api/keep/${encodeURIComponent(f.slug)}/${encodeURIComponent(f.role)}`, { text: f.editor.getText() });
        if (r.ok) kept.push(`${f.name}: your unsaved edits are kept in ${r.data.archived}`);
      }
    }
    S.ended = { id, lines: [], kept, how: `Session ${id} ended:` };
    if (S.state.pending_settle) await settleNow(id);
    history.replaceState(null, "", `#/review/${id}`);
    await route();
  }

  async function settleNow(id) {
    S.settling = true;
    const banner = $("#banner");
    banner.hidden = false;
    banner.className = "warn3";
    banner.textContent = "The clock ran out: auto-submitting the last version saved before the deadline...";
    try {
      const r = await api("POST", "/api/settle");
      if (r.ok) {
        for (const row of r.data.settled) {
          const ended = S.ended && S.ended.id === row.session ? S.ended : (S.ended = { id: row.session, kept: [] });
          ended.how = `Session ${row.session} (${row.name}) ran out at its deadline:`;
          ended.lines = row.lines;
        }
      }
    } finally {
      S.settling = false;
      banner.hidden = true;
    }
  }

  // --- the other pages ---------------------------------------------------------------------------------

  function showView(which) {
    if (which !== "room" && !$("#room").hidden && S.current) S.scroll[S.current] = $(".prompt-pane").scrollTop;
    $("#room").hidden = which !== "room";
    $("#page").hidden = which === "room";
  }

  function page(...children) {
    showView("page");
    const p = $("#page");
    p.replaceChildren(h("div", { class: "sheet" }, ...children));
    return p;
  }

  async function showReview(id) {
    const r = await api("GET", id ? `/api/review/${encodeURIComponent(id)}` : "/api/review");
    if (!r.ok) { page(h("h1", { text: "Review" }), h("p", { class: "bad", text: r.data.error })); return; }
    const d = r.data;
    const parts = [h("h1", {}, `Review of session ${d.session.id} `,
      h("span", { class: "muted", text: `(${d.session.name}, ${d.session.status.replace("_", " ")})` }), ": ",
      h("b", { text: `${pts(d.points_earned)}/${pts(d.points_possible)} points` }))];
    if (S.ended && String(S.ended.id) === String(d.session.id) && (S.ended.lines.length || S.ended.kept.length)) {
      parts.push(h("div", { class: "ended" }, h("p", { text: S.ended.how }),
        h("ul", {}, [...S.ended.lines, ...S.ended.kept].map((t) => h("li", { text: t })))));
    }
    if (d.live) parts.push(h("p", { class: "muted", text: `Session ${d.live.id} (${d.live.name}) is live; its review opens after it ends.` }));
    if (d.scaled_score !== null && d.scaled_score !== undefined) {
      parts.push(h("p", { text: `${d.scaled_score} on the 200-600 scale (a scale like the real round's, not its formula)` }));
      parts.push(h("ul", {}, d.timeline.map((t) => h("li", { text:
        `level ${t.level}: ${t.minutes === null ? "not opened" : `${t.minutes} min, ${t.passed ? "passed" : "not passed"}`}; reported ${t.budget[0]}-${t.budget[1]} min` }))));
    }
    d.questions.forEach((q, i) => {
      const card = h("section", { class: "card" }, h("h2", {}, `Q${i + 1}. ${q.title} `, h("span", { class: "muted", text: `(${q.slug})` }),
        h("span", { class: "tag right", text: `${pts(q.points_earned)}/${pts(q.points_possible)}` })));
      for (const line of q.part_lines || []) card.append(h("p", { text: line }));
      if (!q.counted) {
        card.append(h("p", { class: "bad", text: `no submission before the cutoff: 0/${pts(q.points_possible)}` }));
      } else {
        card.append(h("p", { text: q.counted }));
        if (q.evidence) card.append(h("p", { class: "bad", text: q.evidence }));
        if (q.levels_passed.length) card.append(h("p", { text: "levels passed at: " + q.levels_passed.map((l) => `L${l.level} ${l.at}`).join(", ") }));
        if (q.submitted_at.length) card.append(h("p", { text: "submitted at: " + q.submitted_at.join(", ") }));
        card.append(levelTable(q.levels, { passed: q.passed, total: q.total, points_earned: q.points_earned, points_possible: q.points_possible }));
        const missed = q.tests.filter((t) => t.status !== "pass");
        card.append(h("h3", { text: missed.length ? `Missed: ${missed.length} hidden test${missed.length > 1 ? "s" : ""}` : "Every hidden test passed" }));
        if (missed.length) card.append(testList(missed, true));
        const all = h("details", {}, h("summary", { text: `every hidden test (${q.tests.length})` }), testList(q.tests, true));
        card.append(all);
      }
      parts.push(card);
    });
    page(...parts);
  }

  async function showProgress() {
    const r = await api("GET", "/api/progress");
    if (!r.ok) { page(h("h1", { text: "Progress" }), h("p", { class: "bad", text: r.data.error })); return; }
    const d = r.data;
    const rows = d.katas.filter((k) => k.sessions || k.best).map((k) => h("tr", {},
      h("td", {}, h("b", { text: k.kata })), h("td", { text: k.title }),
      h("td", { class: "num", text: `${pts(k.best)}/${pts(k.points_possible)}` }), h("td", { class: "num", text: String(k.sessions) }),
      h("td", { text: Object.entries(k.fastest).map(([lv, t]) => `${lv} ${t}`).join(", ") })));
    page(h("h1", { text: "Progress" }),
      h("h2", { text: "Score per session, by kata" }), h("p", { class: "muted", text: "Each dot is a session's counted score; the dashed line is the best so far." }),
      h("div", { class: "charts", html: d.charts.katas }),
      h("h2", { text: "Mock assessments" }), h("div", { class: "charts", html: d.charts.mocks }),
      h("h2", { text: "Minutes per level" }), h("p", { class: "muted", text: "From the session's start or the previous level's pass to the level's pass: one bar per session and kata." }),
      h("div", { class: "charts", html: d.charts.levels }),
      h("h2", { text: "Best scores" }),
      rows.length ? h("table", { class: "levels wide" }, head("kata", "title", "best#", "sessions#", "fastest"), h("tbody", {}, rows))
        : h("p", { class: "muted", text: "Nothing yet." }));
  }

  async function showCatalog() {
    const r = await api("GET", "/api/catalog");
    if (!r.ok) { page(h("h1", { text: "Katas" }), h("p", { class: "bad", text: r.data.error })); return; }
    const live = S.state && S.state.session;
    const start = (target) => live ? null : h("button", { type: "button", class: "go small", onclick: () => briefing(target) }, "Start");
    const katas = r.data.katas.map((k) => h("tr", {},
      h("td", {}, h("a", { href: `#/kata/${k.slug}`, text: k.slug })), h("td", { text: k.title }),
      h("td", { text: k.difficulty }), h("td", { class: "num", text: String(k.minutes) }), h("td", { class: "num", text: String(k.levels) }),
      h("td", { class: "num", text: k.best === null ? "-" : `${pts(k.best)}/${k.points}` }), h("td", {}, start(k.slug))));
    const exams = r.data.exams.map((e) => h("tr", {},
      h("td", {}, h("b", { text: e.name })), h("td", { text: e.title }), h("td", { class: "num", text: String(e.minutes) }),
      h("td", { class: "small", text: e.questions.join(", ") }), h("td", {}, start(e.name))));
    page(h("h1", { text: "Katas and exams" }),
      live ? h("p", { class: "ended" }, `Session ${live.id} (${live.name}) is live: `, h("a", { href: "#/", text: "back to it" }), ". A new one starts after it ends.")
        : h("p", { class: "muted", text: "Start shows the briefing; its clock starts when you say so." }),
      h("table", { class: "levels wide" }, head("slug", "title", "difficulty", "min#", "levels#", "best#", ""), h("tbody", {}, katas)),
      h("h2", { text: "Exams" }),
      h("table", { class: "levels wide" }, head("name", "title", "min#", "questions", ""), h("tbody", {}, exams)));
  }

  async function briefing(target) {
    const r = await api("GET", `/api/plan/${encodeURIComponent(target)}`);
    if (!r.ok) { toast(r.data.error, "bad"); return; }
    const d = r.data;
    const dialog = h("dialog", { class: "briefing" },
      h("h2", { text: `${d.title} (${d.clock})` }), d.description ? h("p", { text: d.description }) : null,
      h("ol", {}, d.questions.map((q) => h("li", { text: `${q.title} (${q.slug}): ${q.levels.length > 1 ? `levels ${q.levels.join(", ")}` : `level ${q.levels[0]}`}${q.reveal === "progressive" && q.levels.length > 1 ? ", one at a time" : ""}, about ${q.minutes} min` }))),
      h("ul", { class: "muted" },
        h("li", { text: "Submit grades your file on the hidden tests, as often as you like; a submission counts if it starts before the deadline, and your best one counts." }),
        h("li", { text: "It ends at the deadline or when you finish; then the review shows every hidden test you missed." })),
      h("div", { class: "row" },
        h("button", { type: "button", class: "go", onclick: async () => {
          const s = await api("POST", "/api/start", { target });
          dialog.close(); dialog.remove();
          if (!s.ok) { toast(s.data.error, "bad"); return; }
          location.hash = "#/";
          await poll();
          route();
        } }, "Start the clock"),
        h("button", { type: "button", onclick: () => { dialog.close(); dialog.remove(); } }, "Cancel")));
    document.body.append(dialog);
    dialog.showModal();
  }

  async function showStudy(slug) {
    const r = await api("GET", `/api/kata/${encodeURIComponent(slug)}`);
    if (!r.ok) { page(h("h1", { text: slug }), h("p", { class: "bad", text: r.data.error })); return; }
    const d = r.data;
    const ref = h("div");
    page(h("h1", {}, d.title, " ", h("span", { class: "muted", text: `(${d.slug})` })),
      h("article", { class: "prompt", html: d.html }),
      d.solution ? h("button", { type: "button", onclick: async () => {
        const s = await api("GET", `/api/solution/${encodeURIComponent(slug)}`);
        ref.replaceChildren(s.ok ? h("div", { html: s.data.html }) : h("p", { class: "bad", text: s.data.error }));
      } }, "Show the reference solution") : h("p", { class: "muted", text: "The reference is not shown while a session holds this kata." }),
      ref);
  }

  // --- the router ----------------------------------------------------------------------------------

  function currentRoute() {
    return location.hash.replace(/^#\/?/, "").split("/");
  }

  async function route() {
    const [name, arg] = currentRoute();
    if (name === "") {
      const s = S.state && S.state.session;
      if (s && S.current) await showQuestion(S.current);
      else if (!s) await showCatalog();
    } else if (name === "catalog") await showCatalog();
    else if (name === "progress") await showProgress();
    else if (name === "review") await showReview(arg);
    else if (name === "kata" && arg) await showStudy(decodeURIComponent(arg));
    else await showCatalog();
    drawHeader();
  }

  let toastTimer = null;
  function toast(text, kind) {
    const t = $("#toast") || document.body.appendChild(h("div", { id: "toast" }));
    t.className = kind || "info";
    t.textContent = text;
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, 6000);
  }

  // --- start ---------------------------------------------------------------------------------------

  function wire() {
    $("#save-btn").addEventListener("click", () => { const f = currentFile(); if (f) save(f); });
    $("#run-btn").addEventListener("click", () => act("run"));
    $("#submit-btn").addEventListener("click", () => act("submit"));
    $("#hint-btn").addEventListener("click", hint);
    $("#finish-btn").addEventListener("click", finish);
    for (const b of document.querySelectorAll(".result-tabs .tab")) {
      b.addEventListener("click", () => { const res = S.results[S.current]; if (res && res[b.dataset.tab]) { res.tab = b.dataset.tab; drawResults(); } });
    }
    window.addEventListener("hashchange", route);
    window.addEventListener("beforeunload", (e) => {
      if (Object.values(S.files).some((f) => f.dirty)) { e.preventDefault(); e.returnValue = ""; }
    });
    setInterval(() => { drawClock(); }, 250);
  }

  async function main() {
    wire();
    await poll();
    await route();
    setTimeout(loop, POLL_MS);
  }

  main();
})();
