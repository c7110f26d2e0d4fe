// FaceDown club dashboard: every table's board, turn, clocks and last ruling, live from /api/club/events (SSE), with
// results and standings. Everything shown comes from the tables' public status; every text is set with textContent.
(() => {
  "use strict";
  const SVGNS = "http://www.w3.org/2000/svg";
  const ONE = document.querySelector('meta[name="facedown-club-table"]').content;
  const $ = (id) => document.getElementById(id);
  const cap = (s) => (s ? s.charAt(0).toUpperCase() + s.slice(1) : "");
  const tables = {};
  const boards = {};
  const loading = {};
  let version = 0;

  function el(name, attrs, parent, svg) {
    const e = svg ? document.createElementNS(SVGNS, name) : document.createElement(name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(name, t, parent, attrs) { const e = el(name, attrs, parent); e.textContent = t; return e; }
  function showError(msg) { $("error").hidden = !msg; $("error").textContent = msg || ""; }

  function clockText(s) {
    if (s < 10) return `0:${s.toFixed(1).padStart(4, "0")}`;
    const t = Math.ceil(s);
    return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, "0")}`;
  }
  function playerName(st, side) { return (st.players && st.players[side]) || cap(side); }

  function pieceName(b, type) { return (b && b.pieces[type] && b.pieces[type].name) || type; }

  function rulingText(b, st, r) {
    if (!r) return "";
    const who = playerName(st, r.side);
    if (r.kind === "attack") {
      const mine = r.piece ? pieceName(b, r.piece) + " " : "";
      const theirs = r.defender_piece ? " " + pieceName(b, r.defender_piece) : "";
      const out = {attacker: "attacker wins", defender: "defender holds", both: "both removed", bounce: "no effect"}[r.outcome] || r.outcome;
      return `${who}: ${mine}${r.from}→${r.to} attacks ${cap(r.defender_side)}${theirs}: ${out}`;
    }
    return `${who}: ${r.piece ? pieceName(b, r.piece) + " " : ""}${r.from}→${r.to}`;
  }

  function turnText(t) {
    const st = t.status;
    if (!st) return "waiting for the table's status";
    if (st.phase === "setup") return `Setup: ${st.sides.map((s) => `${playerName(st, s)} ${st.setups.includes(s) ? "✓" : "…"}`).join(", ")}`;
    if (st.phase === "over") {
      const r = st.result || {};
      return r.winners && r.winners.length ? `Game over: ${r.winners.map((w) => playerName(st, w)).join(", ")} won (${r.reason})` : `Game over: draw (${r.reason || ""})`;
    }
    let s = `${playerName(st, st.turn)} (${cap(st.turn)}) to move · ply ${st.ply}`;
    if (st.paused) s = "Paused · " + s;
    if (st.fault) s = "Referee stopped, restarting · " + s;  // the table's referee hit a fault (issue 16)
    else if (st.link && st.link.status !== "connected") s += ` · sensors ${st.link.status}`;
    if (st.mismatch) s += " · board mismatch";
    else if (st.waiting_for_board) s += " · waiting for the board";
    return s;
  }

  function drawBoard(svg, t) {
    const st = t.status;
    const b = st && boards[st.game];
    if (!b) return;
    if (svg.getAttribute("data-game") !== st.game) {
      svg.setAttribute("viewBox", b.viewbox);
      svg.innerHTML = b.layer;  // the server's own drawing of a game file it ships, not table data
      svg.setAttribute("data-game", st.game);
    }
    const pts = {};
    for (const g of svg.querySelectorAll("g.station")) pts[g.getAttribute("data-station")] = [g.getAttribute("data-x"), g.getAttribute("data-y")];
    for (const old of svg.querySelectorAll("g.pieces")) old.remove();
    const layer = el("g", {class: "pieces"}, svg, true);
    const r = st.last_ruling;
    for (const g of svg.querySelectorAll("g.station")) {
      g.classList.remove("hl-from", "hl-to");
      const id = g.getAttribute("data-station");
      if (r && id === r.from) g.classList.add("hl-from");
      if (r && id === r.to) g.classList.add("hl-to");
    }
    for (const p of st.view.pieces) {
      const at = pts[p.station];
      if (!at) continue;
      const g = el("g", {class: `piece side-${p.owner} sidex-${b.sides.indexOf(p.owner)}`, transform: `translate(${at[0]},${at[1]})`, "data-station": p.station}, layer, true);
      el("rect", {x: -20, y: -14, width: 40, height: 28, rx: 4}, g, true);
      if (p.piece) { g.setAttribute("data-piece", p.piece); el("text", {y: 5}, g, true).textContent = pieceName(b, p.piece); }
    }
  }

  function needBoard(game) {
    if (boards[game] || loading[game]) return;
    loading[game] = fetch(`/api/board/${encodeURIComponent(game)}`).then((r) => r.ok ? r.json() : null).then((b) => {
      if (b) { boards[game] = b; render(); }
    }).catch(() => {});
  }

  function card(t) {
    const id = `table-${t.name}`;
    let c = $(id);
    if (!c) {
      c = el("article", {id, class: "card", "data-table": t.name}, $("tables"));
      const h = el("h3", {}, c);
      text("a", t.name, h, {href: `/table/${encodeURIComponent(t.name)}`, class: "name"});
      text("span", "", h, {class: "state"});
      text("span", "", h, {class: "game hint"});
      text("div", "", c, {class: "turn"});
      el("div", {class: "clocks"}, c);
      text("p", "", c, {class: "ruling"});
      text("p", "", c, {class: "note"});
      el("svg", {role: "img", "aria-label": `board of ${t.name}`}, c, true);
      const links = el("p", {class: "links"}, c);
      text("a", "the table's own page", links, {class: "own", hidden: ""});
    }
    const st = t.status;
    c.classList.toggle("offline", t.online === false);
    c.classList.toggle("over", !!(st && st.phase === "over"));
    c.classList.toggle("paused", !!(st && st.paused));
    c.classList.toggle("mismatch", !!(st && st.mismatch));
    c.classList.toggle("fault", !!(st && st.fault));
    c.classList.toggle("link-down", !!(st && st.link && st.link.status !== "connected"));
    c.setAttribute("data-phase", st ? st.phase : "");
    c.setAttribute("data-seq", String(st ? st.seq : 0));
    c.querySelector(".state").textContent = t.online === false ? `offline${t.offline_reason === "lost" ? " (lost)" : ""}` : t.online ? "online" : "…";
    c.querySelector(".game").textContent = st ? `${st.game_name}` : "";
    c.querySelector(".turn").textContent = turnText(t);
    if (st) needBoard(st.game);
    const b = st && boards[st.game];
    c.querySelector(".ruling").textContent = st && st.last_ruling ? "Last ruling: " + rulingText(b, st, st.last_ruling) : "";
    const last = t.events.length ? t.events[t.events.length - 1] : null;
    c.querySelector(".note").textContent = last && last.message ? last.message : "";
    const own = c.querySelector("a.own");
    if (t.web && /^https?:\/\//.test(t.web)) { own.href = t.web; own.hidden = false; } else own.hidden = true;
    drawBoard(c.querySelector("svg"), t);
    drawClocks(c, t);
  }

  function drawClocks(c, t) {
    const box = c.querySelector(".clocks");
    const k = t.clock;
    box.hidden = !k;
    if (!k) return;
    const st = t.status;
    const ran = (Date.now() - t.got) / 1000;  // the server counted down to when it sent the table
    box.textContent = "";
    for (const side of st.sides) {
      let left = k.left[side];
      const running = k.running === side && !k.paused && !k.stopped && t.online !== false;
      if (running) left = Math.max(0, left - ran);
      const s = text("span", `${playerName(st, side)} ${clockText(left)}`, box, {"data-side": side});
      if (running) s.classList.add("running");
      if (left < 60) s.classList.add("low");
    }
  }

  function renderResults(snap) {
    if (!$("results") || !snap.results) return;
    const tb = $("results").querySelector("tbody");
    tb.textContent = "";
    for (const r of snap.results.slice().reverse()) {
      const tr = el("tr", {}, tb);
      text("td", new Date(r.ended_at * 1000).toLocaleString(), tr);
      text("td", r.table, tr);
      text("td", r.game, tr);
      text("td", r.sides.map((s) => `${cap(s)}: ${r.players[s] || "—"}`).join(", "), tr);
      text("td", r.winners.length ? `${r.winners.map((w) => r.players[w] || cap(w)).join(", ")} won (${r.reason})` : `draw (${r.reason})`, tr);
      text("td", String(r.plies), tr);
    }
    const wrap = $("unverified-wrap");
    if (wrap) {
      const ub = $("unverified").querySelector("tbody");
      ub.textContent = "";
      const rows = snap.unverified || [];
      wrap.hidden = rows.length === 0;
      for (const r of rows.slice().reverse()) {
        const tr = el("tr", {}, ub);
        text("td", new Date(r.ended_at * 1000).toLocaleString(), tr);
        text("td", r.table, tr);
        text("td", r.game, tr);
        text("td", r.winners.length ? `${r.winners.map((w) => r.players[w] || cap(w)).join(", ")} won` : "draw", tr);
        text("td", r.why, tr);
      }
    }
    const box = $("standings");
    box.textContent = "";
    for (const [game, rows] of Object.entries(snap.standings || {})) {
      text("h3", game, box);
      const t = el("table", {class: "grid", "data-game": game}, box);
      const h = el("tr", {}, el("thead", {}, t));
      for (const x of ["Player", "Played", "Wins", "Draws", "Losses", "Points"]) text("th", x, h);
      const body = el("tbody", {}, t);
      for (const s of rows) {
        const tr = el("tr", {}, body);
        for (const x of [s.player, s.played, s.wins, s.draws, s.losses, s.points]) text("td", String(x), tr);
      }
    }
  }

  function render() {
    for (const name of Object.keys(tables).sort()) if (!ONE || name === ONE) card(tables[name]);
  }

  function apply(snap) {
    version = snap.version;
    for (const [name, t] of Object.entries(snap.tables)) { t.got = Date.now(); tables[name] = t; }
    for (const name of Object.keys(tables)) if (!snap.names.includes(name)) { delete tables[name]; const c = $(`table-${name}`); if (c) c.remove(); }
    document.body.setAttribute("data-version", String(version));
    $("problems").textContent = snap.rejected ? `${snap.rejected} malformed message(s) ignored; latest: ${snap.problems[snap.problems.length - 1] || ""}` : "";
    render();
    renderResults(snap);
  }

  async function start() {
    const r = await fetch("/api/club");
    apply(await r.json());
    const es = new EventSource(`/api/club/events?after=${version}`);
    es.onopen = () => { $("live").className = "live on"; };
    es.onerror = () => { $("live").className = "live off"; };
    es.onmessage = (m) => { try { apply(JSON.parse(m.data)); } catch (e) { showError(e.message); } };
    setInterval(() => { for (const name of Object.keys(tables)) { const c = $(`table-${name}`); if (c) drawClocks(c, tables[name]); } }, 250);
  }
  start().catch((e) => showError(e.message));
})();
