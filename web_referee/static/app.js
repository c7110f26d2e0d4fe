/* FaceDown web referee page: draws the board from the game file, follows live events, guided setup, arbiter
   controls, simulated-board clicks and the post-game replay. Everything shown comes from the server's view for
   this page's role; this script never holds more than that view. */
"use strict";
(() => {
  const SVGNS = "http://www.w3.org/2000/svg";
  const metaContent = (n) => document.querySelector(`meta[name="facedown-${n}"]`).content;
  const ROLE = metaContent("role"), KEY = metaContent("key"), CSRF = metaContent("csrf");
  const IS_ARBITER = ROLE === "arbiter", IS_SPECTATOR = ROLE === "spectator", IS_SEAT = !IS_ARBITER && !IS_SPECTATOR;
  const $ = (id) => document.getElementById(id);
  let G = null;          // the game file's public data
  let S = null;          // the latest state for this role
  let lang = localStorage.getItem("facedown-lang") || ((navigator.language || "").startsWith("zh") ? "zh" : "en");
  let replay = null;     // {steps, i} while stepping through the replay
  let prevOccupied = null;
  const storeKey = `facedown-placement-${KEY}`;
  let placement = {};
  try { placement = JSON.parse(sessionStorage.getItem(storeKey) || "{}") || {}; } catch (e) { placement = {}; }
  let chosenPiece = null;
  let problems = [];

  // ------------------------------------------------------------------ helpers
  const cap = (s) => (s ? s.charAt(0).toUpperCase() + s.slice(1) : "");
  const cls = (s) => String(s).toLowerCase().replace(/[^a-z0-9_-]/g, "_");
  const pieceDef = (id) => G.pieces.find((p) => p.id === id);
  const pieceName = (id, short) => {
    const p = id && pieceDef(id);
    if (!p) return "";
    if (lang === "zh") return p.zh;
    if (!short || p.name.length <= 6) return p.name;
    const words = p.name.split(" ");
    return words.length > 1 ? words.map((w) => w[0]).join("") : p.name.slice(0, 5) + ".";
  };
  const bothNames = (id) => { const p = id && pieceDef(id); return p ? (lang === "zh" ? `${p.zh} (${p.name})` : `${p.name} (${p.zh})`) : ""; };

  async function api(path, body) {
    const opts = body === undefined ? {} : {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRF-Token": CSRF},
      body: JSON.stringify(body),
    };
    const resp = await fetch(`/api/${KEY}${path}`, opts);
    const data = await resp.json().catch(() => ({error: `HTTP ${resp.status}`}));
    if (!resp.ok) { const err = new Error(data.error || `HTTP ${resp.status}`); err.data = data; err.status = resp.status; throw err; }
    return data;
  }

  function showError(msg) {
    const el = $("error");
    el.textContent = msg || "";
    el.hidden = !msg;
  }

  function logLine(text, cl) {
    if (!text) return;
    const li = document.createElement("li");
    li.textContent = text;
    if (cl) li.className = cl;
    const log = $("log");
    log.insertBefore(li, log.firstChild);
    while (log.children.length > 60) log.removeChild(log.lastChild);
  }

  // ------------------------------------------------------------------ words
  function verdict(r) {
    if (!r) return "";
    const side = cap(r.side);
    const mover = r.piece ? `${side}'s ${pieceName(r.piece)}` : `${side}'s piece`;
    if (r.kind !== "attack") return `${mover} moved ${r.from} → ${r.to}`;
    const def = cap(r.defender_side);
    const defender = r.defender_piece ? `${def}'s ${pieceName(r.defender_piece)}` : `${def}'s piece`;
    switch (r.outcome) {
      case "attacker": return `${mover} from ${r.from} attacked ${r.to}: ${side}'s piece at ${r.to} survived; ${def}'s removed${r.defender_piece ? ` (${pieceName(r.defender_piece)})` : ""}`;
      case "defender": return `${mover} attacked ${r.to}: ${defender} at ${r.to} survived; ${side}'s removed`;
      case "both": return `${mover} attacked ${defender} at ${r.to}: both removed`;
      case "bounce": return `${mover} attacked ${r.to}: no effect, both pieces go back`;
      default: return `${mover} attacked ${r.to}: ${r.outcome}`;
    }
  }

  function eventText(ev) {
    if (ev.ruling) return verdict(ev.ruling) + (ev.ruling.notices && ev.ruling.notices.length ? ` (${ev.ruling.notices.join("; ")})` : "");
    switch (ev.event) {
      case "board": return null;
      case "setup": return ev.status === "registered" ? `${cap(ev.player)} has deployed` : `${cap(ev.player)}'s deployment refused`;
      case "turn": return `${cap(ev.player)} to move`;
      case "start": return `play starts: ${cap(ev.player)} to move`;
      case "game_over": return ev.winners && ev.winners.length ? `game over: ${ev.winners.map(cap).join(", ")} won (${ev.reason})` : `game over: draw (${ev.reason})`;
      case "paused": return "the arbiter paused the game";
      case "resumed": return "the arbiter resumed the game";
      case "undo": return `the arbiter took back the last ruling; ${cap(ev.turn)} to move`;
      case "fixup_done": return "the board matches";
      default: return ev.message || ev.event;
    }
  }

  // ------------------------------------------------------------------ board geometry
  // The server draws the static board (lines, stations, kinds, labels) with controller/board_svg.py, turned so this
  // viewer's side is at the bottom; the page reads each station's position from it and adds pieces on top.
  let geo = null;
  function geometry() {
    const pts = {}, groups = {};
    for (const g of document.querySelectorAll("#board g.station")) {
      const id = g.getAttribute("data-station");
      pts[id] = [parseFloat(g.getAttribute("data-x")), parseFloat(g.getAttribute("data-y"))];
      groups[id] = g;
      g.addEventListener("click", () => clickStation(id));
    }
    return {pts, groups};
  }

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVGNS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  function sideClass(side) { return `side-${cls(side)} sidex-${G.sides.indexOf(side)}`; }

  // ------------------------------------------------------------------ drawing
  function draw() {
    if (!G || !S) return;
    const svg = $("board");
    const stepView = replay ? replay.steps[replay.i].view : S.view;
    const stepRuling = replay ? replay.steps[replay.i].ruling : S.last_ruling;
    const occupied = new Set(S.occupied || []);
    const expected = new Set(S.expected || []);
    const setupMode = !replay && inSetup();
    const zone = new Set(setupMode ? S.setup.zone : []);
    const allowed = new Set(setupMode && currentPiece() ? S.setup.allowed[currentPiece()] : []);
    const probStations = new Set(problems.filter((p) => p.station).map((p) => p.station));
    const fix = new Set();
    if (!replay && S.guidance) {
      for (const st of (S.guidance.steps || S.guidance.stations || [])) fix.add(st.station);
      if (S.guidance.kind === "illegal") { /* stations named in the message are enough */ }
    }
    const hl = {};
    if (stepRuling) { hl[stepRuling.from] = "hl-from"; hl[stepRuling.to] = "hl-to"; }
    const marks = ["zone", "allowed", "problem", "hl-fix", "hl-from", "hl-to"];
    for (const [id, g] of Object.entries(geo.groups)) {
      g.classList.remove(...marks);
      if (zone.has(id)) g.classList.add("zone");
      if (allowed.has(id) && !(id in placement)) g.classList.add("allowed");
      if (probStations.has(id)) g.classList.add("problem");
      if (fix.has(id)) g.classList.add("hl-fix");
      if (hl[id]) g.classList.add(hl[id]);
    }
    for (const old of svg.querySelectorAll("g.pieces")) old.remove();
    const pieces = el("g", {class: "pieces"}, svg);
    const shown = new Set();
    const piece = (station, owner, type, extra) => {
      const [X, Y] = geo.pts[station];
      const g = el("g", {class: `piece ${sideClass(owner)} ${extra || ""}`, "data-station": station, transform: `translate(${X},${Y})`}, pieces);
      if (type) g.setAttribute("data-piece", type);
      el("rect", {x: -20, y: -14, width: 40, height: 28, rx: 4}, g);
      if (type) el("text", {y: 5, class: lang === "zh" ? "zh" : "en"}, g).textContent = pieceName(type, true);
      shown.add(station);
      g.addEventListener("click", () => clickStation(station));
    };
    for (const p of stepView.pieces) {
      const lifted = !replay && S.view.phase === "play" && !occupied.has(p.station);
      piece(p.station, p.owner, p.piece, lifted ? "lifted" : "");
    }
    if (setupMode) for (const [st, type] of Object.entries(placement)) if (!shown.has(st)) piece(st, ROLE, type, "planned");
    if (!replay) for (const st of occupied) if (!shown.has(st) && !expected.has(st)) {
      const [X, Y] = geo.pts[st] || [0, 0];
      const g = el("g", {class: "piece stray", "data-station": st, transform: `translate(${X},${Y})`}, pieces);
      el("rect", {x: -20, y: -14, width: 40, height: 28, rx: 4}, g);
      g.addEventListener("click", () => clickStation(st));
    }
  }

  // ------------------------------------------------------------------ water
  // A river or sea between lands (stations of kind water or anchorage) gets a band of water under the lines, and the
  // sea lines lying on it are drawn white, as the seed's board has them; boards with no such stations keep their look.
  const WATER_KINDS = ["water", "anchorage"];
  function drawWater() {
    const svg = $("board");
    const wet = G.stations.filter((s) => WATER_KINDS.includes(s.kind) && geo.pts[s.id]).map((s) => geo.pts[s.id]);
    const lines = svg.querySelector("g.lines");
    if (!wet.length || !lines) return;
    let pitch = Infinity;
    for (const [ax, ay] of wet) for (const [bx, by] of wet) { const d = Math.hypot(ax - bx, ay - by); if (d > 0 && d < pitch) pitch = d; }
    if (!isFinite(pitch)) pitch = 40;
    const xs = wet.map((p) => p[0]), ys = wet.map((p) => p[1]);
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const vb = svg.viewBox.baseVal, pad = pitch / 2;
    const band = x1 - x0 >= y1 - y0
      ? {x: vb.x, y: y0 - pad, width: vb.width, height: y1 - y0 + 2 * pad}
      : {x: x0 - pad, y: vb.y, width: x1 - x0 + 2 * pad, height: vb.height};
    svg.insertBefore(el("rect", {class: "water-band", ...band}), lines);
    const inside = ([x, y]) => x >= band.x && x <= band.x + band.width && y >= band.y && y <= band.y + band.height;
    for (const pl of lines.querySelectorAll("polyline.line-sea")) {
      const pts = (pl.getAttribute("points") || "").trim().split(/\s+/).map((p) => p.split(",").map(Number));
      if (pts.length && pts.every(inside)) pl.classList.add("on-water");
    }
  }

  // ------------------------------------------------------------------ optional reactions (reactions: ask)
  // A seat is asked privately whether its guard reacts ("Your AA gun at X may fire at the aircraft at Y"); the offer
  // lapses when the seat moves. "react automatically" is the seat's standing choice.
  let offersShown = "";
  function renderReactions() {
    const box = $("reactions");
    const R = IS_SEAT && !replay ? S.reactions : null;
    box.hidden = !R || S.status.phase === "over";
    if (box.hidden) return;
    $("react-auto").checked = !!R.automatic;
    const key = JSON.stringify(R.offers);
    if (key === offersShown) return;
    offersShown = key;
    const ul = $("offers");
    ul.textContent = "";
    for (const o of R.offers) {
      const li = document.createElement("li");
      li.className = "offer";
      li.setAttribute("data-offer", String(o.id));
      const text = document.createElement("span");
      text.textContent = `${o.text}: `;
      li.appendChild(text);
      for (const [label, react] of [[o.accept, true], [o.decline, false]]) {
        const b = document.createElement("button");
        b.type = "button";
        b.className = react ? "react-yes" : "react-no";
        b.textContent = label;
        b.addEventListener("click", () => answerOffer(o, react, li));
        li.appendChild(b);
      }
      ul.appendChild(li);
    }
  }

  async function answerOffer(o, react, li) {
    for (const b of li.querySelectorAll("button")) b.disabled = true;
    try { showError(""); await api("/reaction", {offer: o.id, react, target: o.target}); }
    catch (e) { showError(e.message); }
    offersShown = "";
    await refresh();
  }

  // ------------------------------------------------------------------ game clock (club play)
  let clockSeen = null;  // {left: {side: seconds}, running, at: performance.now() when read}

  function fmtClock(s) {
    const t = Math.max(0, Math.ceil(s));
    return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, "0")}`;
  }

  function drawClock() {
    const box = $("clock");
    if (!box) return;
    box.hidden = !clockSeen;
    if (!clockSeen) return;
    box.textContent = "";
    const running = S && S.status && S.status.phase === "play" && !S.status.paused ? clockSeen.running : null;
    for (const [side, left] of Object.entries(clockSeen.left)) {
      const now = side === running ? left - (performance.now() - clockSeen.at) / 1000 : left;
      const span = document.createElement("span");
      span.className = `side side-${cls(side)}` + (side === running ? " running" : "") + (now <= 60 ? " low" : "");
      span.textContent = `${cap(side)} ${fmtClock(now)}`;
      box.appendChild(span);
    }
  }
  setInterval(drawClock, 500);

  // ------------------------------------------------------------------ status texts
  function render() {
    if (!G || !S) return;
    const st = S.status;
    let text;
    if (st.phase === "setup") {
      const waiting = G.sides.filter((s) => !st.setups.includes(s));
      text = `Setup: ${G.sides.map((s) => `${cap(s)} ${st.setups.includes(s) ? "✓" : "…"}`).join(", ")}` + (waiting.length ? "" : "; lay out the board");
    } else if (st.phase === "play") {
      text = `${cap(st.turn)} to move` + (IS_SEAT && st.turn === ROLE ? " (your move)" : "") + ` · ply ${st.ply}`;
      if (st.waiting_for_board) text += " · waiting for the board to match";
    } else {
      const r = st.result || {};
      text = r.winners && r.winners.length ? `Game over: ${r.winners.map(cap).join(", ")} won (${r.reason})` : `Game over: draw (${r.reason || ""})`;
    }
    if (st.paused) text = "Paused by the arbiter · " + text;
    $("banner").textContent = text;
    $("banner").className = `turn-${cls(st.turn || "none")} phase-${st.phase}`;
    clockSeen = S.clock ? {left: S.clock.left, running: S.clock.running, at: performance.now()} : null;
    drawClock();
    const v = $("verdict");
    v.hidden = !S.last_ruling;
    v.textContent = S.last_ruling ? "Last ruling: " + verdict(S.last_ruling) : "";
    const gd = $("guidance");
    gd.hidden = !S.guidance;
    if (S.guidance) {
      gd.textContent = "";
      const head = document.createElement("strong");
      head.textContent = S.guidance.message;
      gd.appendChild(head);
      const steps = S.guidance.steps || [];
      if (steps.length) {
        const ul = document.createElement("ul");
        for (const s of steps) { const li = document.createElement("li"); li.textContent = `${s.station}: ${s.do}`; ul.appendChild(li); }
        gd.appendChild(ul);
      }
    }
    renderSetup();
    renderArbiter();
    renderReactions();
    $("replay").hidden = !(st.phase === "over" || IS_ARBITER) || !S.has_journal;
    $("record").href = `/api/${KEY}/record.txt`;
    $("lang").textContent = lang === "zh" ? "English" : "中文";
    draw();
  }

  // ------------------------------------------------------------------ guided setup
  function inSetup() { return IS_SEAT && S && S.setup && !S.setup.deployed; }

  function remaining() {
    const used = {};
    for (const t of Object.values(placement)) used[t] = (used[t] || 0) + 1;
    return Object.fromEntries(G.pieces.map((p) => [p.id, p.count - (used[p.id] || 0)]));
  }

  function guidedOrder() {
    // the most constrained pieces first, so the board never runs out of legal stations
    return [...G.pieces].sort((a, b) => (S.setup.allowed[a.id].length - S.setup.allowed[b.id].length) || (G.pieces.indexOf(a) - G.pieces.indexOf(b)));
  }

  function currentPiece() {
    const left = remaining();
    if (chosenPiece && left[chosenPiece] > 0) return chosenPiece;
    const next = guidedOrder().find((p) => left[p.id] > 0);
    return next ? next.id : null;
  }

  function savePlacement() { sessionStorage.setItem(storeKey, JSON.stringify(placement)); }

  function renderSetup() {
    const box = $("setup");
    const on = IS_SEAT && S.status.phase === "setup";
    box.hidden = !on;
    if (!on) return;
    const deployed = S.setup && S.setup.deployed;
    for (const id of ["setup-pieces", "setup-problems"]) $(id).hidden = deployed;
    for (const b of box.querySelectorAll("button, select, input")) b.disabled = deployed;
    if (deployed) {
      $("setup-prompt").textContent = "Your deployment is registered. Waiting for the other seats, then lay out the board.";
      return;
    }
    const cur = currentPiece();
    const left = remaining();
    const total = Object.values(left).reduce((a, b) => a + b, 0);
    $("setup-prompt").textContent = cur
      ? `Place your ${bothNames(cur)}: ${left[cur]} left · ${total} pieces to go` + (S.sim ? " (tap a station of your area)" : " (put it on the board, or tap its station)")
      : "Every piece is placed: check the problems below, then submit.";
    const pieces = $("setup-pieces");
    pieces.textContent = "";
    for (const p of guidedOrder()) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "pick" + (p.id === cur ? " current" : "") + (left[p.id] <= 0 ? " done" : "");
      b.setAttribute("data-piece", p.id);
      b.textContent = `${pieceName(p.id)} ×${left[p.id]}`;
      b.disabled = left[p.id] <= 0;
      b.addEventListener("click", () => { chosenPiece = p.id; render(); });
      pieces.appendChild(b);
    }
    const ul = $("setup-problems");
    ul.textContent = "";
    const shown = problems.filter((p) => p.station || total === 0);
    for (const p of shown) {
      const li = document.createElement("li");
      li.textContent = p.station ? `${p.station}: ${p.message}` : p.message;
      ul.appendChild(li);
    }
    $("setup-submit").disabled = total > 0 || problems.length > 0;
    $("setup-layout").hidden = !S.sim;
  }

  let checkTimer = null;
  function checkPlacement() {
    clearTimeout(checkTimer);
    checkTimer = setTimeout(async () => {
      try {
        const r = await api("/setup/check", {placement});
        problems = r.problems;
        render();
      } catch (e) { showError(e.message); }
    }, 60);
  }

  function assign(station) {
    if (!S.setup.zone.includes(station)) { showError(`${station} is outside your deployment area`); return; }
    showError("");
    if (station in placement) delete placement[station];
    else { const cur = currentPiece(); if (!cur) return; placement[station] = cur; }
    savePlacement();
    render();
    checkPlacement();
  }

  function onBoardEvent(occupiedList) {
    const occ = new Set(occupiedList);
    if (inSetup() && prevOccupied) {
      let changed = false;
      for (const s of occ) {
        if (!prevOccupied.has(s) && S.setup.zone.includes(s) && !(s in placement)) {
          const cur = currentPiece();
          if (cur) { placement[s] = cur; changed = true; }
        }
      }
      for (const s of prevOccupied) if (!occ.has(s) && s in placement) { delete placement[s]; changed = true; }
      if (changed) { savePlacement(); checkPlacement(); }
    }
    prevOccupied = occ;
    if (S) { S.occupied = [...occ]; render(); }
  }

  // ------------------------------------------------------------------ clicks
  async function clickStation(station) {
    if (replay || !S) return;
    if (inSetup() && !S.sim) { assign(station); return; }
    if (IS_SPECTATOR || !S.sim) return;
    if (inSetup() && !S.setup.zone.includes(station)) { showError(`${station} is outside your deployment area`); return; }
    try { showError(""); await api("/sim/toggle", {station}); } catch (e) { showError(e.message); }
  }

  // ------------------------------------------------------------------ arbiter
  let linksShown = false;
  function renderArbiter() {
    const box = $("arbiter");
    box.hidden = !IS_ARBITER;
    if (!IS_ARBITER) return;
    const st = S.status;
    $("arb-pause").disabled = st.paused || st.phase === "over";
    $("arb-resume").disabled = !st.paused;
    $("arb-undo").disabled = st.phase === "setup" || st.ply === 0;
    $("arb-end").disabled = st.phase === "over";
    // more than two seats: the arbiter may put one out (a club's time rule) and play goes on
    $("arb-out-row").hidden = G.sides.length <= 2;
    const outSel = $("arb-out-side");
    const outNow = Object.keys((S.view && S.view.out) || {});
    const active = G.sides.filter((s) => !outNow.includes(s));
    if (outSel.options.length !== active.length) {
      outSel.textContent = "";
      for (const s of active) outSel.add(new Option(cap(s), s));
    }
    $("arb-out").disabled = st.phase !== "play";
    const sel = $("arb-winner");
    if (!sel.options.length) {
      for (const s of G.sides) sel.add(new Option(`${cap(s)} wins`, s));
      sel.add(new Option("Draw", ""));
    }
    const sn = S.sensors;
    $("sensors").textContent = `Sensors: ${S.board_kind} board · last reading ${sn.snapshot_age_s === null ? "none yet" : `${sn.snapshot_age_s} s ago`}` +
      (sn.mismatch ? ` · mismatch at ${sn.mismatch.map((d) => d.station).join(", ")}` : " · no mismatch") + (sn.waiting_for_board ? " · waiting for the board" : "");
    if (!linksShown) {
      linksShown = true;
      api("/links").then((links) => {
        const box2 = $("links");
        for (const [role, url] of Object.entries(links)) {
          const fig = document.createElement("figure");
          const img = document.createElement("img");
          img.src = `/api/${KEY}/qr/${role}.svg`; img.alt = `QR code for ${role}`;
          const cap2 = document.createElement("figcaption");
          const a = document.createElement("a"); a.href = url; a.textContent = role === "spectator" ? "Spectators" : role === "arbiter" ? "Arbiter (private)" : `${cap(role)} seat`;
          cap2.appendChild(a); fig.appendChild(img); fig.appendChild(cap2); box2.appendChild(fig);
        }
      }).catch((e) => showError(e.message));
    }
  }

  async function arbiter(action, body) {
    try { showError(""); await api(`/arbiter/${action}`, body || {}); await refresh(); } catch (e) { showError(e.message); }
  }

  // ------------------------------------------------------------------ replay
  function renderReplay() {
    const on = !!replay;
    $("replay-prev").disabled = !on || replay.i === 0;
    $("replay-next").disabled = !on || replay.i >= replay.steps.length - 1;
    $("replay-live").hidden = !on;
    if (on) {
      const step = replay.steps[replay.i];
      $("replay-step").textContent = `Step ${replay.i + 1} of ${replay.steps.length}: ` + (step.ruling ? verdict(step.ruling) : "the deployments");
    } else $("replay-step").textContent = "";
    draw();
  }

  // ------------------------------------------------------------------ live updates
  let refreshTimer = null;
  async function refresh() {
    try {
      S = await api("/state");
      if (prevOccupied === null) prevOccupied = new Set(S.occupied);
      if (S.status.phase !== "setup" && Object.keys(placement).length) { placement = {}; savePlacement(); }
      render();
      renderHealth();
    } catch (e) { showError(e.message); }
  }
  function scheduleRefresh() { clearTimeout(refreshTimer); refreshTimer = setTimeout(refresh, 40); }

  // ------------------------------------------------------------------ the referee's health (banner)
  // state.fault (the referee stopped: why) and state.link (the board's sensors: connected / resyncing / lost),
  // in words from the message catalog (FD.say when i18n.js is loaded, else the same catalog fetched here).
  const healthWords = {};
  async function healthCatalog() {
    const code = lang === "zh" ? "zh-Hans" : "en";
    if (!healthWords[code]) {
      try { const r = await fetch(`/i18n/${code}.json`); healthWords[code] = r.ok ? await r.json() : {}; }
      catch (e) { return {}; }
    }
    return healthWords[code];
  }
  function sayWith(cat, obj) {
    if (window.FD && typeof window.FD.say === "function") return window.FD.say(obj);
    const params = obj.params || {};
    return (cat[obj.code] || obj.code).replace(/\{(\w+)\}/g, (m, k) => {
      const v = params[k];
      return v && typeof v === "object" && v.code ? sayWith(cat, v) : String(v ?? "");
    });
  }
  async function renderHealth() {
    const box = $("health");
    if (!box || !S) return;
    const link = S.link || {status: "connected"};
    const parts = [];
    if (S.fault || link.status !== "connected") {
      const cat = await healthCatalog();
      if (S.fault) parts.push(sayWith(cat, S.fault.say));
      if (link.status !== "connected") {
        const since = link.since ? ` (${new Date(link.since * 1000).toLocaleTimeString()})` : "";
        parts.push(sayWith(cat, link.say) + since);
      }
    }
    box.textContent = parts.join(" ");
    box.hidden = parts.length === 0;
    box.className = S.fault ? "fault" : `link-${link.status}`;
  }

  $("lang").addEventListener("click", () => { setTimeout(renderHealth, 0); });  // once the page switched language

  // the live stream, reopened by itself: EventSource gives up after a refusal (503) or an HTTP error, so a
  // closed stream is reopened after a short, growing delay, and the state is fetched again to catch up
  let liveStream = null, retryMs = 1000;
  function reconnect() {
    if (liveStream) liveStream.close();
    liveStream = null;
    $("live").className = "live off";
    setTimeout(() => { refresh().finally(connect); }, retryMs);
    retryMs = Math.min(retryMs * 2, 10000);
  }

  function connect() {
    if (liveStream) return;
    const es = new EventSource(`/api/${KEY}/events?after=${S ? S.seq : 0}`);
    liveStream = es;
    es.onopen = () => { $("live").className = "live on"; retryMs = 1000; };
    es.onerror = () => {
      $("live").className = "live off";
      if (es.readyState === EventSource.CLOSED) reconnect();  // refused or failed: the browser will not retry
    };
    es.onmessage = (m) => {
      let ev;
      try { ev = JSON.parse(m.data); } catch (e) { return; }
      if (ev.say && (ev.event === "fault" || ev.event === "link")) {  // the referee's health: catalog words
        healthCatalog().then((cat) => logLine(sayWith(cat, ev.say), `ev-${cls(ev.event)}`));
        scheduleRefresh();
        return;
      }
      logLine(eventText(ev), `ev-${cls(ev.event)}`);
      document.body.setAttribute("data-seq", String(ev.seq));
      if (ev.event === "board") onBoardEvent(ev.occupied);
      scheduleRefresh();
    };
  }

  async function start() {
    const resp = await fetch("/api/game");
    G = await resp.json();
    geo = geometry();
    drawWater();
    await refresh();
    if (inSetup() && Object.keys(placement).length) checkPlacement();
    connect();
  }

  // ------------------------------------------------------------------ wiring
  $("lang").addEventListener("click", () => { lang = lang === "zh" ? "en" : "zh"; localStorage.setItem("facedown-lang", lang); document.documentElement.lang = lang === "zh" ? "zh" : "en"; render(); });
  $("setup-clear").addEventListener("click", () => { placement = {}; chosenPiece = null; savePlacement(); problems = []; render(); });
  $("setup-random").addEventListener("click", async () => {
    // a valid random deployment to start from (the seat can still change it before submitting)
    try { showError(""); const r = await api("/setup/random", {}); placement = {...r.placement}; chosenPiece = null; savePlacement(); render(); checkPlacement(); }
    catch (e) { showError(e.message); }
  });
  $("setup-submit").addEventListener("click", async () => {
    try { showError(""); await api("/setup", {placement}); await refresh(); }
    catch (e) { problems = (e.data && e.data.problems) || problems; showError(e.message); render(); }
  });
  $("setup-save").addEventListener("click", async () => {
    try { const r = await api("/setups", {name: $("setup-name").value, placement}); $("setup-hint").textContent = `saved as “${r.setup.name}”`; loadSaved(); }
    catch (e) { showError(e.message); }
  });
  let saved = [];
  async function loadSaved() {
    if (!IS_SEAT) return;
    try {
      saved = (await api("/setups")).setups;
      const sel = $("setup-saved");
      while (sel.options.length > 1) sel.remove(1);
      for (const s of saved) sel.add(new Option(s.name, s.name));
    } catch (e) { showError(e.message); }
  }
  $("setup-load").addEventListener("click", () => {
    const s = saved.find((x) => x.name === $("setup-saved").value);
    if (!s) return;
    placement = {...s.placement}; savePlacement(); render(); checkPlacement();
  });
  $("setup-layout").addEventListener("click", async () => {
    // put a piece on every planned station of the simulated board, and lift the others of your area
    const occ = new Set(S.occupied);
    for (const st of S.setup.zone) {
      if ((st in placement) !== occ.has(st)) {
        try { await api("/sim/toggle", {station: st}); } catch (e) { showError(e.message); return; }
      }
    }
  });
  $("react-auto").addEventListener("change", async (e) => {
    const on = e.target.checked;
    try { showError(""); await api("/reaction/auto", {on}); } catch (err) { e.target.checked = !on; showError(err.message); }
    await refresh();
  });
  $("arb-pause").addEventListener("click", () => arbiter("pause"));
  $("arb-resume").addEventListener("click", () => arbiter("resume"));
  $("arb-undo").addEventListener("click", () => arbiter("undo"));
  $("arb-out").addEventListener("click", () => {
    const side = $("arb-out-side").value;
    if (side) arbiter("out", {side, reason: $("arb-reason").value || "out by the club's time rule"});
  });
  $("arb-end").addEventListener("click", () => {
    const w = $("arb-winner").value;
    arbiter("end", {winners: w ? [w] : [], reason: $("arb-reason").value || (w ? "ended by the arbiter" : "draw agreed")});
  });
  $("replay-open").addEventListener("click", async () => {
    try { const r = await api("/replay"); replay = {steps: r.steps, i: 0}; renderReplay(); } catch (e) { showError(e.message); }
  });
  $("replay-prev").addEventListener("click", () => { if (replay && replay.i > 0) { replay.i--; renderReplay(); } });
  $("replay-next").addEventListener("click", () => { if (replay && replay.i < replay.steps.length - 1) { replay.i++; renderReplay(); } });
  $("replay-live").addEventListener("click", () => { replay = null; renderReplay(); });
  loadSaved();
  start().catch((e) => showError(e.message));
})();
