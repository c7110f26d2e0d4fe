/* FaceDown web referee page: live state pushed with every event (no fetch per move), immediate tap feedback on the
   simulated board, verdicts at a glance, fix-ups as a checklist, setup as one flow, arbiter controls and the replay.
   Everything shown comes from the server's view for this page's role; every word comes from FD (i18n.js). */
"use strict";
(() => {
  const metaContent = (n) => document.querySelector(`meta[name="facedown-${n}"]`).content;
  const ROLE = metaContent("role"), KEY = metaContent("key"), CSRF = metaContent("csrf");
  const IS_ARBITER = ROLE === "arbiter", IS_SPECTATOR = ROLE === "spectator", IS_SEAT = !IS_ARBITER && !IS_SPECTATOR;
  const $ = (id) => document.getElementById(id);
  const t = (k, p) => FD.t(k, p);
  const cls = (s) => String(s).toLowerCase().replace(/[^a-z0-9_-]/g, "_");
  const SIDE_SHAPES = ["●", "■", "▲", "◆"];  // a hidden piece's side by shape as well as colour (never a letter: B is a bomb)
  let G = null;          // the game file's public data
  let S = null;          // the latest state for this role (pushed with the events)
  let B = null;          // the board drawing (board.js)
  let replay = null;     // {steps, i} while stepping through the replay
  let lastSeq = 0;
  let prevOccupied = null;
  // station -> {occ, at, readBy, during}: a tap shown at once, until a reading taken after it (at or after ``readBy``,
  // from the referee's answer) confirms or corrects it; ``during``: the ply whose fix-up was asked when it was made
  const optimistic = new Map();
  const TAP_SHOWN_MS = 10000;  // how long a tap stays shown with no reading of it
  const storeKey = `facedown-placement-${KEY}`;
  let placement = {};
  try { placement = JSON.parse(sessionStorage.getItem(storeKey) || "{}") || {}; } catch (e) { placement = {}; }
  let chosenPiece = null;
  let problems = [];
  let verdictShown = null;  // {ruling | illegal, live}
  let layoutAsked = false;
  // how long the page took from an event's arrival to the redrawn board, and to the next frame (ms)
  const paint = {sync: [], frame: [], done: {}};  // done: event number -> wall-clock ms when its redraw finished
  window.FD_PAINT = paint;

  // ------------------------------------------------------------------ words
  /* an object's words: its structured message ("say"); every event, step, problem and offer carries one (the
     message contract), so a missing one is an error the browser tests catch, never English made up here */
  function words(obj, li) {
    if (obj && obj.say) { li.textContent = FD.say(obj.say); return; }
    console.error("FaceDown: no message object in", JSON.stringify(obj).slice(0, 200));
  }
  /* the server's own detail of a refused request, for the English page only (an operator's words) */
  function serverDetail(message) {
    const span = document.createElement("span");
    span.className = "server-detail";
    span.lang = "en";
    span.textContent = message;
    return span;
  }

  // ------------------------------------------------------------------ requests
  async function api(path, body) {
    const opts = body === undefined ? {} : {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRF-Token": CSRF},
      body: JSON.stringify(body),
    };
    let resp;
    try { resp = await fetch(`/api/${KEY}${path}`, opts); } catch (e) { const err = new Error("network"); err.status = 0; throw err; }
    const data = await resp.json().catch(() => ({error: `HTTP ${resp.status}`}));
    if (!resp.ok) { const err = new Error(data.error || `HTTP ${resp.status}`); err.data = data; err.status = resp.status; throw err; }
    return data;
  }

  function errorText(e) {
    if (typeof e === "string") return e;
    if (e.data && e.data.say) return FD.say(e.data.say);
    const key = e.status === 0 ? "page.error.network" : e.status === 503 ? "page.error.busy"
      : e.status === 403 && /CSRF/.test(e.message) ? "page.error.csrf" : e.status === 403 ? "page.error.forbidden"
      : e.status === 409 ? "page.error.conflict" : "page.error.refused";
    return t(key);
  }
  function showError(e) {
    const box = $("error");
    box.textContent = "";
    box.hidden = !e;
    if (!e) return;
    const head = document.createElement("span");
    head.textContent = errorText(e);
    box.appendChild(head);
    if (typeof e !== "string" && e.status && e.message && !FD.zh) {  // the server's own detail (English)
      box.appendChild(document.createTextNode(" · "));
      box.appendChild(serverDetail(e.message));
    }
  }

  // ------------------------------------------------------------------ occupancy as shown (taps at once)
  function shownOccupied() {
    const occ = new Set(S.occupied || []);
    for (const [st, o] of optimistic) { if (o.occ) occ.add(st); else occ.delete(st); }
    return occ;
  }
  function settleOptimistic() {
    const real = new Set(S.occupied || []);
    const now = performance.now();
    // a tap gives way only to a reading taken after it (at or after the ``read_by`` the referee answered it with),
    // which shows the station as it is since the tap: an older reading can show it as the tap left it by chance (a
    // piece taken off and put back, the stream lagging behind the answers), and taking that for the tap's reading
    // dropped the tap's tick until the stream caught up. A tap no reading confirms is given up after TAP_SHOWN_MS:
    // long enough for a referee slowed by a busy machine (giving up sooner showed the tap undone, a tick lost, until
    // the late reading brought it back)
    const readAt = typeof S.read_at === "number" ? S.read_at : -Infinity;
    for (const [st, o] of optimistic) {
      if ((typeof o.readBy === "number" && readAt >= o.readBy) || now - o.at > TAP_SHOWN_MS) optimistic.delete(st);
    }
  }

  // ------------------------------------------------------------------ words for rulings
  function survivorOf(r) {
    if (r.kind !== "attack") return null;
    if (r.outcome === "attacker") return {side: r.side, station: r.to};
    if (r.outcome === "defender") return {side: r.defender_side, station: r.to};
    return null;
  }
  function shortVerdict(r) {
    if (r.kind !== "attack") return {text: t("page.verdict.move", {side: r.side, from: r.from, to: r.to}), icon: "→", outcome: "move"};
    const key = {attacker: "page.verdict.attacker", defender: "page.verdict.defender", both: "page.verdict.both", bounce: "page.verdict.bounce"}[r.outcome] || "page.verdict.clash";
    const surv = survivorOf(r);
    const icon = surv ? "★" : r.outcome === "both" ? "✕" : "↺";
    return {text: t(key, {side: surv ? surv.side : r.side, station: r.to}), icon, outcome: r.outcome};
  }
  function rulingSentence(r) {
    if (r.say) return FD.say(r.say);
    const hidden = {code: "page.log.piece_hidden"};
    if (r.kind !== "attack") {
      return r.piece ? t("page.log.move", {side: r.side, piece: r.piece, from: r.from, to: r.to}) : t("page.log.move_hidden", {side: r.side, from: r.from, to: r.to});
    }
    const okey = ["attacker", "defender", "both", "bounce"].includes(r.outcome) ? `page.log.outcome.${r.outcome}` : "page.log.outcome.other";
    const outcome = {code: okey, params: {side: r.side, defender: r.defender_side, outcome: r.outcome}};
    return t("page.log.attack", {side: r.side, piece: r.piece || hidden, from: r.from, to: r.to, defender: r.defender_side,
      defender_piece: r.defender_piece || hidden, outcome});
  }

  /* one event's line in the log: its message object, else words made here from its structured fields */
  function eventLine(ev, li) {
    if (ev.say) { li.textContent = FD.say(ev.say); return true; }
    if (ev.ruling) { li.textContent = rulingSentence(ev.ruling); return true; }
    const side = ev.player;
    const simple = {
      turn: ["page.log.turn", {side}], start: ["page.log.start", {side}], paused: ["page.log.paused", {}],
      resumed: ["page.log.resumed", {}], undo: ["page.log.undo", {side: ev.turn}], fixup_done: ["page.log.fixup_done", {}],
      illegal: ["page.log.illegal", {side, from: ev.from, to: ev.to}],
      mismatch: ["page.log.mismatch", {stations: (ev.stations || []).map((d) => d.station)}],
    }[ev.event];
    if (simple) { li.textContent = t(simple[0], simple[1]); return true; }
    if (ev.event === "setup") { li.textContent = t(ev.status === "registered" ? "page.log.setup_done" : "page.log.setup_refused", {side}); return true; }
    if (ev.event === "game_over") {
      const w = ev.winners || (ev.winner ? [ev.winner] : []);
      li.textContent = w.length ? t("page.log.over_win", {winners: w}) : t("page.log.over_draw");
      return true;
    }
    if (ev.event === "board" || ev.event === "offer_closed") return false;
    if (ev.event === "notice" && ev.out) { li.textContent = t("page.log.out", {side: ev.out}); return true; }
    console.error(`FaceDown: no words for a ${ev.event} event`);
    return false;
  }

  const kept = [];  // the events in the log, to say them again in another language
  function logEvent(ev) {
    kept.push(ev);
    if (kept.length > 400) kept.shift();
    addLogLine(ev);
  }
  function relog() { $("log").textContent = ""; for (const ev of kept) addLogLine(ev); }
  function addLogLine(ev) {
    const li = document.createElement("li");
    if (!eventLine(ev, li)) return;
    // laying out (and comparing the board after a resume) is one line that moves on, not a line per piece
    const progress = ev.event === "fixup" && (ev.kind === "layout" || (ev.say && ev.say.code === "event.board_differs"));
    const top = $("log").firstChild;
    if (progress && top && top.classList.contains("progress-line")) top.remove();
    if (progress) li.classList.add("progress-line");
    li.value = ev.seq;
    li.classList.add(`ev-${cls(ev.event)}`);
    li.setAttribute("data-seq", String(ev.seq));
    const log = $("log");
    log.insertBefore(li, log.firstChild);
    while (log.children.length > 400) log.removeChild(log.lastChild);
  }

  // ------------------------------------------------------------------ banner, verdict, checklist
  function renderBanner() {
    const st = S.status;
    const banner = $("banner");
    let text;
    if (replay) {
      text = t("page.replay.showing", {n: replay.i + 1, total: replay.steps.length});
    } else if (st.phase === "setup") {
      const done = st.setups.length;
      const cur = inSetup() ? currentPiece() : null;
      if (cur) {
        const left = remaining();
        text = t("page.setup.place", {piece: cur, left: left[cur], total: Object.values(left).reduce((a, b) => a + b, 0)});
      } else text = IS_SEAT && !st.setups.includes(ROLE) ? t("page.banner.setup_you") : t("page.banner.setup", {done, total: G.sides.length});
    } else if (st.phase === "play" && st.waiting_for_board && st.ply === 0) {
      text = t("page.banner.layout");
    } else if (st.phase === "play" && (st.waiting_for_board || S.pending || S.mismatch)) {
      // the referee waits for the board (a fix-up, a mismatch): the next move comes after it
      text = t("page.banner.fix_first", {side: st.turn});
    } else if (st.phase === "play" && S.instruction) {
      // the computer's move, for the human at the board to make (public: everyone at the table is told it)
      const ins = S.instruction, wrong = wrongLifts();
      text = wrong.length ? t("page.banner.computer_wrong", {stations: wrong})
        : t(ins.attack ? "page.banner.computer_attack" : "page.banner.computer", {player: ins.player, from: ins.from, to: ins.to});
    } else if (st.phase === "play" && (st.computers || []).includes(st.turn)) {
      text = t("page.banner.computer_thinking", {side: st.turn, ply: st.ply + 1});
    } else if (st.phase === "play") {
      text = IS_SEAT && st.turn === ROLE ? t("page.banner.your_turn", {side: st.turn, ply: st.ply + 1}) : t("page.banner.turn", {side: st.turn, ply: st.ply + 1});
    } else {
      const r = st.result || {};
      text = r.winners && r.winners.length ? t("page.banner.over_win", {winners: r.winners}) : t("page.banner.over_draw");
    }
    if (st.paused && !replay) text = `${t("page.banner.paused")} · ${text}`;
    banner.textContent = text;
    const mine = IS_SEAT && st.phase === "play" && st.turn === ROLE && !st.waiting_for_board && !S.pending && !S.mismatch;
    const computer = !replay && st.phase === "play" && !!S.instruction && !st.waiting_for_board && !S.pending && !S.mismatch;
    banner.className = `turn-${cls(st.turn || "none")} phase-${st.phase}` + (mine ? " mine" : "") + (replay ? " replaying" : "")
      + (computer ? " computer" : "") + (computer && wrongLifts().length ? " wrong" : "");
  }

  function renderVerdict() {
    const box = $("verdict");
    let r = null, live = false;
    if (replay) r = replay.steps[replay.i].ruling;
    else if (verdictShown && verdictShown.illegal) {
      const ev = verdictShown.illegal;
      box.hidden = false;
      box.className = "outcome-illegal";  // (drops "empty")
      box.removeAttribute("data-survivor");
      box.querySelector(".v-icon").textContent = "⚠";
      $("verdict-text").textContent = t("page.verdict.illegal", {side: ev.player, station: ev.from});
      const detail = $("verdict-detail");
      detail.textContent = "";
      if (ev.reason && typeof ev.reason === "object") detail.textContent = t("page.illegal.reason", {reason: ev.reason});
      return;
    } else { r = S.last_ruling; live = !!(verdictShown && verdictShown.live); }
    // in play the verdict keeps its place even before the first ruling, so the board below never jumps
    box.hidden = !r && (S.status.phase === "setup" || S.status.ply === 0);
    box.classList.toggle("empty", !r);
    if (!r) return;
    const v = shortVerdict(r);
    const surv = survivorOf(r);
    box.className = `outcome-${v.outcome}` + (live ? " fresh" : "");  // (drops "empty")
    box.querySelector(".v-icon").textContent = v.icon;
    $("verdict-text").textContent = v.text;
    if (surv) { box.setAttribute("data-survivor", surv.side); box.setAttribute("data-station", surv.station); }
    else { box.removeAttribute("data-survivor"); box.setAttribute("data-station", r.to); }
    $("verdict-detail").textContent = replay ? rulingSentence(r) : "";
  }

  /* the computer's move (state.instruction) as the steps the human makes for it, ticked from the board as it reads:
     lift its token (and, for an attack, the piece attacked), put the token down where it goes */
  let insTrack = {key: null, emptied: new Set()};
  function computerSteps(occ) {
    const ins = S.instruction;
    const key = `${S.status.ply}|${ins.player}|${ins.from}|${ins.to}`;
    if (insTrack.key !== key) insTrack = {key, emptied: new Set()};
    for (const st of [ins.from, ins.to]) if (!occ.has(st)) insTrack.emptied.add(st);
    const lifted = insTrack.emptied.has(ins.from), taken = insTrack.emptied.has(ins.to);
    const items = [{station: ins.from, done: lifted, text: t("page.fix.step_from", {player: ins.player, station: ins.from})}];
    if (ins.attack) items.push({station: ins.to, done: taken, text: t("page.fix.step_take", {station: ins.to})});
    items.push({station: ins.to, done: lifted && (!ins.attack || taken) && occ.has(ins.to),
      text: t(ins.attack ? "page.fix.step_attack" : "page.fix.step_to", {station: ins.to})});
    return {title: "", items, kind: "computer"};
  }
  /* tokens lifted during the computer's move that the move does not touch: flagged at once, before they are put down */
  function wrongLifts() {
    const ins = S && S.status.phase === "play" && !S.pending && !S.mismatch && !S.status.waiting_for_board ? S.instruction : null;
    if (!ins || replay) return [];
    const occ = shownOccupied();
    return (S.expected || []).filter((st) => !occ.has(st) && st !== ins.from && st !== ins.to);
  }

  const layoutSeen = new Map();  // station -> owner of the piece it should hold (null: it should be empty)
  /* the fix-up checklist: numbered steps addressed to the player who acts, each ticked off as its station matches */
  function checklist() {
    if (replay || !S || S.status.phase === "setup") return null;
    const occ = shownOccupied();
    const exp = new Set(S.expected || []);
    const owners = Object.fromEntries((S.view.pieces || []).map((p) => [p.station, p.owner]));
    const matches = (st) => occ.has(st) === exp.has(st);
    const g = S.guidance;
    const wholeBoard = g && (g.kind === "layout" || g.kind === "board" || g.kind === "illegal");
    if (S.status.waiting_for_board || wholeBoard || (g && !(g.steps || []).length && !(g.stations || []).length)) {
      fixTrack = {key: null, emptied: new Set()};  // a fix-up asked after this (an undo, then the same ply) starts anew
      // laying out (or after an undo, a resume, a refused move): every station that differs from the referee's board,
      // ticked off as it comes to match (kept in the list, so the list does not jump while the board fills in)
      for (const s of new Set([...occ, ...exp])) if (!matches(s) && !layoutSeen.has(s)) layoutSeen.set(s, exp.has(s) ? owners[s] || null : null);
      // what is still to do first (own pieces before the others'), then what is done, each in the board's order
      const order = (st) => G.stations.findIndex((x) => x.id === st);
      const mineFirst = (a, b) => (matches(a) - matches(b)) || ((layoutSeen.get(b) === ROLE) - (layoutSeen.get(a) === ROLE))
        || (order(a) - order(b));
      const computers = S.status.computers || [];
      const items = [...layoutSeen.keys()].sort(mineFirst).map((s) => {
        const owner = layoutSeen.get(s);
        const text = !owner ? t("page.fix.take", {station: s})
          : computers.includes(owner) ? t("page.fix.token", {side: owner, station: s}) : t("page.fix.put", {side: owner, station: s});
        return {station: s, by: owner, done: matches(s), text};
      });
      const progress = S.pending && S.pending.progress;
      const laying = S.status.waiting_for_board && S.status.ply === 0;
      const title = laying && progress ? t("page.fix.layout_count", progress) : t(laying ? "page.fix.layout_title" : "page.fix.title");
      return {title, items, kind: "layout", left: items.filter((it) => !it.done).length};
    }
    layoutSeen.clear();
    // no fix-up: the computer's move to make, if any (the steps' ticks come from the referee, so a fix-up asked
    // again later starts with nothing ticked)
    if (!g) {
      fixTrack = {key: null, emptied: new Set()};
      return S.instruction && S.status.phase === "play" ? computerSteps(occ) : null;
    }
    if (g.kind === "mismatch") {
      const items = (g.stations || []).map((d) => ({
        station: d.station, by: d.expected && d.expected !== "empty" ? d.expected : null, done: false,
        text: d.found === "empty" ? t("page.fix.put", {side: d.expected, station: d.station})
          : d.found === "occupied" ? t("page.fix.take", {station: d.station}) : t("page.fix.wrong", {side: d.expected, station: d.station}),
      }));
      // a stray hand during a fix-up: the fix-up's own steps still to do stay listed after the strays (a station
      // the strays name is not listed twice), so the players see the whole of what is left, not only the stray part
      const named = new Set(items.map((it) => it.station));
      if (S.pending && S.pending.kind !== "layout") for (const s of fixupItems(S.pending, occ, matches)) {
        if (!s.done && !named.has(s.station)) items.push(s);
      }
      return {title: t("page.fix.mismatch_title"), items, kind: "mismatch"};
    }
    return {title: t("page.fix.title"), items: fixupItems(g, occ, matches), kind: g.kind, obj: g};
  }

  /* the fix-up's steps as checklist items. The referee says which steps the board has done (``done``, from its own
     target, as each reading left it); a tap the referee has not read yet ticks its step at once when the step's
     stations come to match (the reading then confirms it with the referee's own tick, so the tick never blinks off
     and back between the two). Only a tap made while this fix-up was asked counts: the move's own last tap, not yet
     read when the fix-up comes, did none of its steps. A step that takes a piece off and puts it elsewhere (a
     ``return``) is done once its station was seen emptied during this fix-up and the piece stands where it goes:
     the reading of the lift may come before the tap that puts it down is read (a loaded machine), and the tick
     must not wait for, or be lost to, that reading */
  let fixTrack = {key: null, emptied: new Set()};
  const TAKES_OFF = ["remove", "take_off", "return"];
  function fixupItems(g, occ, matches) {
    const key = `${S.status.ply}|${g.kind}`;
    if (fixTrack.key !== key) fixTrack = {key, emptied: new Set()};
    const steps = (g.steps || []).filter((s) => s.action !== "none");
    for (const s of steps) if (s.station && !occ.has(s.station)) fixTrack.emptied.add(s.station);
    const tapped = (st) => !!st && optimistic.has(st) && optimistic.get(st).during === S.status.ply;
    return steps.map((s) => {
      let acted = false;
      if (s.station && TAKES_OFF.includes(s.action)) {
        acted = (tapped(s.station) || tapped(s.to)) && fixTrack.emptied.has(s.station) && (!s.to || matches(s.to));
      } else if (s.station) acted = tapped(s.station) && matches(s.station) && (!s.to || matches(s.to));
      return {station: s.station, to: s.to || null, by: s.by || null, obj: s, done: s.done === true || acted};
    });
  }

  function renderGuidance(list) {
    const box = $("guidance");
    box.hidden = !list || !list.items.length;
    if (box.hidden) return;
    $("guidance-title").textContent = list.title;
    $("guidance-title").hidden = !list.title;
    box.className = `kind-${cls(list.kind || "fixup")}`;
    const ol = $("fix-list");
    ol.textContent = "";
    list.items.forEach((it, i) => {
      const li = document.createElement("li");
      li.className = it.done ? "done" : "todo";
      if (it.station) li.setAttribute("data-station", it.station);
      const tick = document.createElement("span");
      tick.className = "tick";
      tick.textContent = it.done ? "✓" : String(i + 1);
      tick.setAttribute("aria-hidden", "true");
      li.appendChild(tick);
      const state = document.createElement("span");
      state.className = "sr-only";
      state.textContent = `${i + 1}, ${t(it.done ? "page.fix.done" : "page.fix.todo")}: `;
      li.appendChild(state);
      const body = document.createElement("span");
      if (it.obj) words(it.obj, body); else body.textContent = it.text;
      if (it.by && it.obj && it.obj.say) body.textContent = t("page.fix.for", {side: it.by, step: body.textContent});
      li.appendChild(body);
      ol.appendChild(li);
    });
    if (list.kind === "layout") {
      const li = document.createElement("li");
      li.className = "summary";
      li.textContent = t("page.fix.remaining", {count: list.left});
      ol.appendChild(li);
    }
  }

  // ------------------------------------------------------------------ the board model
  function drawBoard(list) {
    const rep = replay ? replay.steps[replay.i] : null;
    const view = rep ? rep.view : S.view;
    const ruling = rep ? rep.ruling : S.last_ruling;
    const occ = shownOccupied();
    const exp = new Set(S.expected || []);
    const setupMode = !replay && inSetup();
    const marks = {};
    const add = (id, c) => { (marks[id] = marks[id] || []).push(c); };
    if (setupMode) {
      const cur = currentPiece();
      const allowed = cur ? stationsFor(cur) : new Set();
      for (const s of S.setup.zone) { add(s, "zone"); if (allowed.has(s) && !(s in placement)) add(s, "allowed"); }
      for (const p of problems) if (p.station) add(p.station, "problem");
    }
    const badges = {};
    const fixing = new Set();
    const arrows = [];
    const fixMark = list && list.kind === "mismatch" ? "mismatch" : "fix";
    const todoAt = new Map();  // station -> is any step there still to do
    if (list && list.kind !== "computer") list.items.forEach((it, i) => {
      if (!it.station) return;
      // a station's badge is the number of its first step still to do (a piece off and back on a7: 1, then 2)
      if (!(it.station in badges) || (badges[it.station] === "✓" && !it.done)) badges[it.station] = it.done ? "✓" : String(i + 1);
      todoAt.set(it.station, todoAt.get(it.station) || !it.done);
      if (it.to && !(it.to in badges)) todoAt.set(it.to, todoAt.get(it.to) || !it.done);  // where the piece goes
    });
    for (const [st, todo] of todoAt) { add(st, todo ? fixMark : "fix-done"); fixing.add(st); }
    const ins = !replay && S.status.phase === "play" && !(list && list.kind !== "computer") ? S.instruction : null;
    if (ins) {
      // the computer's move: from (white) and to (cyan), as the station lights show them, with an arrow between
      add(ins.from, "ins-from"); add(ins.to, "ins-to");
      fixing.add(ins.from); fixing.add(ins.to);
      arrows.push({from: ins.from, to: ins.to, kind: ins.attack ? "attack" : "move"});
      for (const st of wrongLifts()) { add(st, "mismatch"); badges[st] = "✕"; fixing.add(st); }
    }
    if (ruling) {
      if (!fixing.has(ruling.from)) add(ruling.from, "hl-from");
      if (!fixing.has(ruling.to)) add(ruling.to, "hl-to");
    }
    const pieces = [];
    const shown = {};
    const seen = new Set();
    const play = !replay && S.view.phase === "play";
    // a station the sensors say holds another piece than the referee's: drawn as an unknown piece, never as the
    // piece the referee expects there (the checklist calls it the wrong piece)
    const wrongPiece = new Set(replay ? [] : ((S.mismatch && S.mismatch.stations) || [])
      .filter((d) => d.found !== "empty" && d.found !== "occupied").map((d) => d.station));
    for (const st of wrongPiece) { pieces.push({station: st, owner: null, label: "?", state: "stray wrong"}); seen.add(st); }
    for (const p of view.pieces) {
      if (wrongPiece.has(p.station)) continue;
      const lifted = play && !occ.has(p.station);
      const face = p.piece ? FD.pieceFace(p.piece) : "";
      const def = p.piece && G.pieces.find((x) => x.id === p.piece);
      pieces.push({
        station: p.station, owner: p.owner, piece: p.piece, zh: FD.zh, label: face,
        sideMark: p.piece ? null : SIDE_SHAPES[G.sides.indexOf(p.owner) % SIDE_SHAPES.length],
        mark: FD.zh && def && /^(\d{1,2}|[A-Z])$/.test(def.short || "") ? def.short : null,  // a rank mark (10 … 1, S, B, F)
        state: (lifted ? "lifted " : "") + (p.public ? "revealed" : ""), handTitle: lifted ? t("page.in_hand") : null,
      });
      seen.add(p.station);
    }
    if (setupMode) {
      for (const [st, type] of Object.entries(placement)) if (!seen.has(st)) {
        pieces.push({station: st, owner: ROLE, piece: type, zh: FD.zh, label: FD.pieceFace(type), state: "planned" + (occ.has(st) ? " placed" : "")});
        seen.add(st);
      }
    }
    if (!replay) for (const st of occ) if (!seen.has(st) && !exp.has(st)) pieces.push({station: st, owner: null, state: "stray"});
    for (const id of Object.keys(B.pts)) shown[id] = {occupied: replay ? seen.has(id) : occ.has(id), hand: !replay && exp.has(id) && !occ.has(id)};
    B.draw({pieces, marks, badges, shown, arrows});
  }

  // ------------------------------------------------------------------ whole page
  // ------------------------------------------------------------------ the referee's health (banner)
  /* state.fault (the referee stopped: why) and state.link (the board's sensors: connected / resyncing / lost), in
     the catalog's words, in one banner above everything else */
  function renderHealth() {
    const box = $("health");
    if (!box) return;
    const link = S.link || {status: "connected"};
    const parts = [];
    if (S.fault) parts.push(FD.say(S.fault.say));
    if (link.status !== "connected") {
      const since = link.since ? ` (${new Date(link.since * 1000).toLocaleTimeString()})` : "";
      parts.push(FD.say(link.say) + since);
    }
    box.textContent = parts.join(" ");
    box.hidden = parts.length === 0;
    box.className = S.fault ? "fault" : `link-${link.status}`;
  }

  function render() {
    if (!G || !S) return;
    renderHealth();
    renderBanner();
    renderVerdict();
    const list = checklist();
    renderGuidance(list);
    renderSetup();
    renderArbiter();
    renderRemote();
    renderReactions();
    renderReplay();
    clockSeen = S.clock ? {left: S.clock.left, running: S.clock.running, at: performance.now()} : null;
    drawClock();
    drawBoard(list);
    focusBoard(list);
  }

  // ------------------------------------------------------------------ the board follows what must be done
  /* the stations the players must act on now: the steps still to do (a whole board being laid out: the next one),
     else the computer's move and any token lifted by mistake */
  function focusStations(list) {
    if (replay || !S || S.status.phase !== "play") return [];
    if (list && list.kind !== "computer") {
      const todo = list.items.filter((it) => !it.done);
      const some = list.kind === "layout" ? todo.slice(0, 1) : todo;
      return [...new Set(some.flatMap((it) => [it.station, it.to]).filter(Boolean))];
    }
    return S.instruction ? [...new Set([S.instruction.from, S.instruction.to, ...wrongLifts()])] : [];
  }
  let focusKey = null, movedTimer = null, homed = false;
  /* when what must be done changes, the board pans (and if need be zooms out) by itself to show it, says so for a
     moment, and the page returns to its first screen; the player's own panning is left alone until then */
  function focusBoard(list) {
    if (!homed) return;
    const stations = focusStations(list);
    const key = JSON.stringify(stations);
    const resized = B.fitHeight();  // the pinned box above may have grown or shrunk
    if (key === focusKey) { if (resized && stations.length) B.show(stations); return; }
    focusKey = key;
    const moved = B.show(stations);
    if (stations.length && !onFirstScreen(stations)) window.scrollTo(0, 0);
    const note = $("board-moved");
    if (moved) {
      note.textContent = t("page.board.moved", {stations});
      note.hidden = false;
      clearTimeout(movedTimer);
      movedTimer = setTimeout(() => { note.hidden = true; }, 2500);
    }
    document.body.setAttribute("data-focus", stations.join(" "));
  }
  function onFirstScreen(stations) {
    const inView = (b) => b.top >= 0 && b.left >= 0 && b.bottom <= window.innerHeight && b.right <= window.innerWidth;
    const now = $("now").getBoundingClientRect();
    return now.top >= 0 && stations.every((st) => {
      const r = document.querySelector(`#board g.station[data-station="${st}"] rect.hit`);
      return !r || inView(r.getBoundingClientRect());
    });
  }

  // ------------------------------------------------------------------ guided setup
  function inSetup() { return IS_SEAT && S && S.setup && !S.setup.deployed; }

  /* Where the current piece may go so that the rest of the army still fits: a station is offered only if every
     piece left can still be given its own allowed station (a matching of the pieces left to the free stations,
     Kuhn's augmenting paths). With a random guided order a newcomer could otherwise fill the headquarters with
     another piece and find no station left for the flag. */
  const fitsCache = new Map();
  function stationsFor(cur) {
    const key = cur + "|" + JSON.stringify(placement);
    if (fitsCache.has(key)) return fitsCache.get(key);
    const left = remaining();
    left[cur] -= 1;
    const free = S.setup.zone.filter((s) => !(s in placement));
    const units = [];
    for (const [id, n] of Object.entries(left)) for (let k = 0; k < n; k++) units.push(new Set(S.setup.allowed[id] || []));
    const out = new Set();
    for (const st of S.setup.allowed[cur] || []) {
      if (st in placement || !free.includes(st)) continue;
      const stations = free.filter((s) => s !== st);
      const holder = new Map();  // station -> unit index
      const tryUnit = (u, seen) => {
        for (const s of stations) {
          if (!units[u].has(s) || seen.has(s)) continue;
          seen.add(s);
          if (!holder.has(s) || tryUnit(holder.get(s), seen)) { holder.set(s, u); return true; }
        }
        return false;
      };
      if (units.every((_, u) => tryUnit(u, new Set()))) out.add(st);
    }
    if (fitsCache.size > 200) fitsCache.clear();
    fitsCache.set(key, out);
    return out;
  }

  function remaining() {
    const used = {};
    for (const ty of Object.values(placement)) used[ty] = (used[ty] || 0) + 1;
    return Object.fromEntries(G.pieces.map((p) => [p.id, p.count - (used[p.id] || 0)]));
  }

  /* the order the page asks for pieces in: the seat's private random order when the referee gives one, else the
     most constrained pieces first so the area never runs out of legal stations */
  function guidedOrder() {
    const order = S.setup.guided_order || S.guided_order;
    if (Array.isArray(order) && order.length) {
      const seen = [];
      for (const id of order) if (!seen.includes(id)) seen.push(id);
      return seen.map((id) => G.pieces.find((p) => p.id === id)).filter(Boolean)
        .concat(G.pieces.filter((p) => !seen.includes(p.id)));
    }
    return [...G.pieces].sort((a, b) => (S.setup.allowed[a.id].length - S.setup.allowed[b.id].length) || (G.pieces.indexOf(a) - G.pieces.indexOf(b)));
  }

  function currentPiece() {
    const left = remaining();
    if (chosenPiece && left[chosenPiece] > 0) return chosenPiece;
    const order = S.setup.guided_order || S.guided_order;
    if (Array.isArray(order) && order.length) {
      // the private order lists each piece as often as it is placed: the next one not yet placed
      const used = {};
      for (const id of order) {
        used[id] = (used[id] || 0) + 1;
        if (left[id] > 0 && used[id] > (G.pieces.find((p) => p.id === id).count - left[id])) return id;
      }
    }
    const next = guidedOrder().find((p) => left[p.id] > 0);
    return next ? next.id : null;
  }

  function savePlacement() { try { sessionStorage.setItem(storeKey, JSON.stringify(placement)); } catch (e) { /* ignore */ } }

  function renderSetup() {
    const box = $("setup");
    const on = IS_SEAT && !replay && (S.status.phase === "setup" || (S.status.waiting_for_board && S.status.ply === 0));
    box.hidden = !on;
    if (!on) return;
    const deployed = !S.setup || S.setup.deployed;
    const total = G.pieces.reduce((a, p) => a + p.count, 0);
    const planned = Object.keys(placement);
    const occ = shownOccupied();
    for (const id of ["setup-pieces", "setup-problems"]) $(id).hidden = deployed;
    for (const b of box.querySelectorAll("button, select, input")) b.disabled = deployed;
    // laying out is part of the same flow, before or after submitting
    // own pieces: the plan until play starts (the referee's board holds no piece before every seat has deployed)
    const mine = planned.length ? planned : (S.view.pieces || []).filter((p) => p.owner === ROLE).map((p) => p.station);
    const onBoard = mine.filter((s) => occ.has(s)).length;
    const prog = $("setup-progress");
    prog.hidden = !(layoutAsked || deployed) || (!planned.length && !deployed);
    const want = deployed ? Math.max(mine.length, 1) && total : planned.length;
    $("setup-progress-bar").style.width = `${want ? Math.round(100 * onBoard / want) : 0}%`;
    $("setup-progress-text").textContent = t(onBoard >= want ? "page.setup.laid" : "page.setup.laying", {done: onBoard, total: want});
    $("setup-submit").textContent = t(S.sim ? "page.setup.submit_sim" : "page.setup.submit");
    if (deployed) {
      const waiting = G.sides.filter((s) => !S.status.setups.includes(s));
      $("setup-prompt").textContent = t("page.setup.registered") + (waiting.length ? " " + t("page.setup.waiting_for", {sides: waiting}) : "");
      $("setup-layout").hidden = true;
      return;
    }
    const cur = currentPiece();
    const left = remaining();
    const toGo = Object.values(left).reduce((a, b) => a + b, 0);
    $("setup-prompt").textContent = cur ? `${t("page.setup.place", {piece: cur, left: left[cur], total: toGo})} ${t(S.sim ? "page.setup.tap" : "page.setup.tap_real")}`
      : t("page.setup.all_placed");
    const pieces = $("setup-pieces");
    pieces.textContent = "";
    for (const p of guidedOrder()) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "pick" + (p.id === cur ? " current" : "") + (left[p.id] <= 0 ? " done" : "");
      b.setAttribute("data-piece", p.id);
      b.setAttribute("aria-pressed", p.id === cur ? "true" : "false");
      b.textContent = t("page.setup.count", {piece: p.id, left: left[p.id]});
      b.disabled = left[p.id] <= 0;
      b.addEventListener("click", () => { chosenPiece = p.id; render(); });
      pieces.appendChild(b);
    }
    const ul = $("setup-problems");
    ul.textContent = "";
    const shownProblems = problems.filter((p) => p.station || toGo === 0);
    for (const p of shownProblems) { const li = document.createElement("li"); words(p, li); ul.appendChild(li); }
    $("setup-submit").disabled = toGo > 0 || problems.length > 0;
    $("setup-hint").textContent = problems.length && toGo === 0 ? t("page.setup.problems", {count: problems.length}) : $("setup-hint").textContent;
    $("setup-layout").hidden = !S.sim || planned.length === 0;
  }

  /* the referee's problems with the plan, asked a moment after it changes; an answer is kept only while the plan is
     still the one it was asked about (answers may arrive out of order: an earlier, unfinished plan's "pieces
     missing" must not land on the finished plan and hold its Submit button disabled) */
  let checkTimer = null;
  const planKey = (plan) => JSON.stringify(Object.entries(plan).sort());  // the same plan, whatever its order
  function checkPlacement() {
    clearTimeout(checkTimer);
    checkTimer = setTimeout(async () => {
      const plan = {...placement};
      const asked = planKey(plan);
      try {
        const r = await api("/setup/check", {placement: plan});
        if (planKey(placement) !== asked) return;
        problems = r.problems; render();
      } catch (e) { showError(e); }
    }, 60);
  }

  function assign(station) {
    if (!S.setup.zone.includes(station)) { showError(t("page.setup.outside", {station})); return; }
    showError("");
    if (station in placement) delete placement[station];
    else {
      const cur = currentPiece();
      if (!cur) return;
      if ((S.setup.allowed[cur] || []).includes(station) && !stationsFor(cur).has(station)) {
        showError(t("page.setup.no_room", {station}));  // the rest of the army would not fit: choose a marked station
        return;
      }
      placement[station] = cur;
      chosenPiece = null;
    }
    savePlacement();
    render();
    checkPlacement();
    if (layoutAsked && S.sim) layOut();
  }

  /* put the planned pieces on the simulated board in one reading (and lift the others of this seat's area) */
  async function layOut() {
    layoutAsked = true;
    const stations = Object.keys(placement).length ? Object.keys(placement) : (S.view.pieces || []).filter((p) => p.owner === ROLE).map((p) => p.station);
    try { await api("/sim/layout", {stations}); } catch (e) { showError(e); }
    render();
  }

  /* a real board during setup: a piece put down in this seat's area takes the piece the page asked for */
  function onBoardDuringSetup(occ) {
    if (!inSetup() || S.sim || !prevOccupied) return;
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

  // ------------------------------------------------------------------ taps
  async function tapStation(station) {
    if (replay || !S) return;
    if (inSetup()) { assign(station); return; }
    if (IS_SPECTATOR || !S.sim) return;
    const now = shownOccupied().has(station);
    const mine = {occ: !now, at: performance.now(), during: S.pending ? S.status.ply : null};
    optimistic.set(station, mine);
    render();  // the tap shows at once; the referee's next reading confirms or corrects it
    // only the station's latest tap may change what it shows: the answer to an earlier tap that arrives after a
    // later one (lift and put back quickly, on a busy network) must not bring back the older state
    const latest = () => optimistic.get(station) === mine;
    try {
      showError("");
      const r = await api("/sim/toggle", {station});
      if (latest()) { optimistic.set(station, {...mine, occ: r.occupied, at: performance.now(), readBy: r.read_by}); settleOptimistic(); }
    } catch (e) { if (latest()) optimistic.delete(station); showError(e); }
    render();
  }

  // ------------------------------------------------------------------ optional reactions (reactions: ask)
  let offersShown = "";
  function renderReactions() {
    const box = $("reactions");
    const R = IS_SEAT && !replay ? S.reactions : null;
    box.hidden = !R || S.status.phase === "over";
    if (box.hidden) return;
    $("react-auto").checked = !!R.automatic;
    const key = FD.lang + JSON.stringify(R.offers);
    if (key === offersShown) return;
    offersShown = key;
    const ul = $("offers");
    ul.textContent = "";
    for (const o of R.offers) {
      const li = document.createElement("li");
      li.className = "offer";
      li.setAttribute("data-offer", String(o.id));
      const text = document.createElement("span");
      text.textContent = o.say ? FD.say(o.say) : t("page.reactions.offer", {guard_piece: o.guard_piece, guard: o.guard, target: o.target});
      li.appendChild(text);
      for (const react of [true, false]) {
        const b = document.createElement("button");
        b.type = "button";
        b.className = react ? "react-yes" : "react-no";
        b.textContent = t(react ? "page.reactions.yes" : "page.reactions.no");
        b.addEventListener("click", () => answerOffer(o, react, li));
        li.appendChild(b);
      }
      ul.appendChild(li);
    }
  }
  async function answerOffer(o, react, li) {
    for (const b of li.querySelectorAll("button")) b.disabled = true;
    try { showError(""); await api("/reaction", {offer: o.id, react, target: o.target}); } catch (e) { showError(e); }
    offersShown = "";
  }

  // ------------------------------------------------------------------ game clock (club play)
  let clockSeen = null;
  function fmtClock(s) { const x = Math.max(0, Math.ceil(s)); return `${Math.floor(x / 60)}:${String(x % 60).padStart(2, "0")}`; }
  function drawClock() {
    const box = $("clock");
    box.hidden = !clockSeen;
    if (!clockSeen) return;
    box.textContent = "";
    const running = S && S.status.phase === "play" && !S.status.paused ? clockSeen.running : null;
    for (const [side, left] of Object.entries(clockSeen.left)) {
      const now = side === running ? left - (performance.now() - clockSeen.at) / 1000 : left;
      const span = document.createElement("span");
      span.className = `side side-${cls(side)}` + (side === running ? " running" : "") + (now <= 60 ? " low" : "");
      span.textContent = (side === running ? "▶ " : "") + t("page.clock.label", {side, time: fmtClock(now)});
      box.appendChild(span);
    }
  }
  setInterval(() => { if (S) drawClock(); }, 500);

  // ------------------------------------------------------------------ a remote seat's asks (its host is the arbiter)
  function renderRemote() {
    const box = $("remote"), r = S.remote;
    box.hidden = !IS_SEAT || !r || S.status.phase !== "play";
    if (box.hidden) return;
    $("remote-title").textContent = t("page.remote.title", {game: r.game});
    $("remote-pause").disabled = S.status.paused;
    $("remote-resume").disabled = !S.status.paused;
    // an undo another seat asked for, waiting for this seat's answer (the host takes the move back once all agree)
    const u = r.undo, mine = !!u && (u.waiting || []).includes(ROLE);
    $("remote-undo").disabled = S.status.ply === 0 || !!u;
    $("remote-undo-row").hidden = !u;
    if (u) $("remote-undo-text").textContent = t("remote.undo_asked", {player: u.by, ply: u.ply});
    $("remote-undo-agree").disabled = !mine;
    $("remote-undo-decline").disabled = !mine;
  }
  async function remoteAsk(action) {
    try { showError(""); await api(`/remote/${action}`, {}); } catch (e) { showError(e); }
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
    $("arb-out-row").hidden = G.sides.length <= 2;
    const outSel = $("arb-out-side");
    const outNow = Object.keys((S.view && S.view.out) || {});
    const active = G.sides.filter((s) => !outNow.includes(s));
    outSel.textContent = "";
    for (const s of active) outSel.add(new Option(FD.sideName(s), s));
    $("arb-out").disabled = st.phase !== "play";
    const sel = $("arb-winner");
    const chosen = sel.value;
    sel.textContent = "";
    for (const s of G.sides) sel.add(new Option(t("page.arb.wins", {side: s}), s));
    sel.add(new Option(t("page.arb.draw"), ""));
    if ([...sel.options].some((o) => o.value === chosen)) sel.value = chosen;
    const sn = S.sensors;
    const age = sn.snapshot_age_s === null ? t("page.arb.none_yet") : t("page.arb.age", {seconds: sn.snapshot_age_s});
    $("sensors").textContent = `${t("page.arb.sensors", {kind: FD.has(`page.board_kind.${S.board_kind}`) ? t(`page.board_kind.${S.board_kind}`) : S.board_kind, age})} · ` +
      (sn.mismatch ? t("page.arb.mismatch", {stations: sn.mismatch.map((d) => d.station)}) : t("page.arb.no_mismatch"));
    if (!linksShown) {
      linksShown = true;
      api("/links").then((links) => { linkData = links; drawLinks(); }).catch((e) => showError(e));
    } else drawLinks();
  }
  let linkData = null, linksLang = null;
  function drawLinks() {
    if (!linkData || linksLang === FD.lang) return;
    linksLang = FD.lang;
    const box = $("links");
    box.textContent = "";
    for (const [role, url] of Object.entries(linkData)) {
      const who = role === "spectator" ? t("page.arb.link_spectators") : role === "arbiter" ? t("page.arb.link_arbiter") : t("page.role.seat", {side: role});
      const fig = document.createElement("figure");
      const img = document.createElement("img");
      img.src = `/api/${KEY}/qr/${role}.svg`;
      img.alt = t("page.arb.qr", {who});
      const cap = document.createElement("figcaption");
      const a = document.createElement("a");
      a.href = url; a.textContent = who;
      cap.appendChild(a); fig.appendChild(img); fig.appendChild(cap); box.appendChild(fig);
    }
  }
  async function arbiter(action, body) {
    try { showError(""); await api(`/arbiter/${action}`, body || {}); } catch (e) { showError(e); }
  }
  /* an action that cannot be taken back asks once: the first tap turns the button into "tap again to confirm"
     for a few seconds, the second tap does it */
  const armed = new Map();  // button id -> timer
  function confirmed(id) {
    const b = $(id);
    if (armed.has(id)) { clearTimeout(armed.get(id)); armed.delete(id); b.classList.remove("confirming"); FD.apply(b.parentElement); return true; }
    b.classList.add("confirming");
    b.textContent = t("page.arb.confirm");
    armed.set(id, setTimeout(() => { armed.delete(id); b.classList.remove("confirming"); FD.apply(b.parentElement); }, 4000));
    return false;
  }

  // ------------------------------------------------------------------ replay
  function renderReplay() {
    const on = !!replay;
    $("replay").hidden = !(S.status.phase === "over" || IS_ARBITER) || !S.has_journal;
    $("record").href = `/api/${KEY}/record.txt?lang=${encodeURIComponent(FD.lang)}`;
    $("record-en").href = `/api/${KEY}/record.txt?lang=en`;
    $("record-en").hidden = FD.lang === "en";
    $("replay-bar").hidden = !on;
    document.body.classList.toggle("replaying", on);
    if (!on) return;
    $("replay-prev").disabled = replay.i === 0;
    $("replay-next").disabled = replay.i >= replay.steps.length - 1;
    const step = replay.steps[replay.i];
    $("replay-step").textContent = t("page.replay.step", {n: replay.i + 1, total: replay.steps.length}) + (step.ruling ? "" : ` · ${t("page.replay.deployments")}`);
  }

  // ------------------------------------------------------------------ live updates
  function applyState(next) {
    if (!next || (S && next.seq < S.seq)) return;
    S = next;
    document.body.setAttribute("data-state-seq", String(S.seq));
    if (S.status.phase !== "setup" && Object.keys(placement).length && !(S.status.waiting_for_board && S.status.ply === 0)) { placement = {}; savePlacement(); }
    settleOptimistic();
  }

  /* a reading of the board during play (seats and arbiter): who lifted what shows at once; not an event of the game */
  function onOccupancy(ev) {
    if (S && "pending" in ev) {
      // the referee's read model, as the reading left it: which fix-up steps the board has done
      S.pending = ev.pending;
      if (!S.mismatch) S.guidance = ev.pending;
    }
    if (ev.event === "guidance") { if (S) render(); return; }
    const occ = new Set(ev.occupied);
    prevOccupied = occ;
    if (!S) return;
    S.occupied = [...occ];
    S.read_at = ev.read_at;
    settleOptimistic();
    render();
  }

  let historyTo = 0;  // the events up to the page's first state: the game's history, logged only
  function onEvent(ev) {
    if (ev.live && ev.seq === undefined) { onOccupancy(ev); return; }
    if (ev.seq <= historyTo) {
      lastSeq = Math.max(lastSeq, ev.seq);
      document.body.setAttribute("data-seq", String(Math.max(ev.seq, Number(document.body.getAttribute("data-seq") || 0))));
      logEvent(ev);
      return;
    }
    const t0 = performance.now();
    lastSeq = Math.max(lastSeq, ev.seq);
    document.body.setAttribute("data-seq", String(ev.seq));
    if (ev.event === "board") {
      const occ = new Set(ev.occupied);
      if (S && !ev.state) { S.occupied = [...occ]; settleOptimistic(); }
      onBoardDuringSetup(occ);
      prevOccupied = occ;
    }
    applyState(ev.state);
    logEvent(ev);
    if (ev.ruling) {
      verdictShown = {live: true};
      const r = ev.ruling;
      const surv = survivorOf(r);
      if (r.kind === "attack") {
        const marks = surv ? [{station: r.to, kind: `survivor side-${cls(surv.side)}`, icon: "★", title: t("page.verdict.survivor", surv)}]
          : [{station: r.to, kind: r.outcome === "both" ? "removed" : "bounce", icon: r.outcome === "both" ? "✕" : "↺"}];
        if (r.outcome === "bounce") marks.push({station: r.from, kind: "bounce", icon: "↺"});
        B.flash(marks, 4000);
      }
    } else if (ev.event === "illegal") verdictShown = {illegal: ev};
    else if (ev.event === "fixup_done" || ev.event === "turn" || ev.event === "undo") { if (verdictShown && verdictShown.illegal) verdictShown = null; }
    if (ev.event === "offer" || ev.event === "offer_closed") offersShown = "";
    if (!replay || ev.state) render();
    paint.sync.push(performance.now() - t0);
    paint.done[ev.seq] = performance.timeOrigin + performance.now();
    requestAnimationFrame(() => paint.frame.push(performance.now() - t0));
  }

  let es = null, backoff = 1000, historyLoaded = false;
  function setLive(on) {
    $("live").className = `live ${on ? "on" : "off"}`;
    $("live-text").textContent = t(on ? "page.live.on" : "page.live.off");
  }
  /* the live stream; after any error (a restart, a 503 when the referee serves too many pages) it reconnects with
     a growing pause and catches up from the last event it saw */
  function connect() {
    if (es) es.close();
    // the first stream brings the whole history (a page opened mid-game sees what happened before), later ones catch up
    es = new EventSource(`/api/${KEY}/events?after=${historyLoaded ? Math.max(lastSeq, S ? S.seq : 0) : 0}`);
    historyLoaded = true;
    es.onopen = () => { backoff = 1000; setLive(true); };
    es.onerror = () => {
      setLive(false);
      es.close();
      es = null;
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 30000);
    };
    es.onmessage = (m) => {
      let ev;
      try { ev = JSON.parse(m.data); } catch (e) { return; }
      onEvent(ev);
    };
  }

  function applyLanguage() {
    FD.apply(document);
    $("lang").value = FD.lang;
    $("game-name").textContent = FD.gameName();
    $("who").textContent = IS_SPECTATOR ? t("page.role.spectator") : IS_ARBITER ? t("page.role.arbiter") : t("page.role.seat", {side: ROLE});
    $("board").setAttribute("aria-label", t("page.board.label", {game: FD.gameName()}));
    $("board-wrap").setAttribute("aria-label", t("page.board.label", {game: FD.gameName()}));
    document.title = `FaceDown · ${FD.gameName()} · ${$("who").textContent}`;
    setLive($("live").classList.contains("on"));
    offersShown = "";
    linksLang = null;
    // the log's lines are made again in the new language from the events kept
    render();
  }

  async function start() {
    const [g, s] = await Promise.all([fetch("/api/game").then((r) => r.json()), api("/state"), FD.load(FD.lang)]);
    G = g;
    FD.setGame(G);
    FDBoard.chooseOrientation($("board"), $("board-wrap"));
    B = FDBoard.create($("board"), $("board-wrap"), G, tapStation);
    applyState(s);
    lastSeq = S.seq;
    historyTo = S.seq;
    prevOccupied = new Set(S.occupied);
    B.layout();
    applyLanguage();
    B.scrollHome();
    B.cues();
    homed = true;
    focusBoard(checklist());
    if (inSetup() && Object.keys(placement).length) checkPlacement();
    connect();
    document.body.setAttribute("data-ready", "1");
  }

  // ------------------------------------------------------------------ wiring
  $("lang").addEventListener("change", async (e) => {
    try { await FD.load(e.target.value); applyLanguage(); relog(); } catch (err) { showError(err.message); }
  });

  $("setup-clear").addEventListener("click", () => { placement = {}; chosenPiece = null; savePlacement(); problems = []; render(); if (layoutAsked && S.sim) layOut(); });
  $("setup-random").addEventListener("click", async () => {
    try { showError(""); const r = await api("/setup/random", {}); placement = {...r.placement}; chosenPiece = null; savePlacement(); render(); checkPlacement(); if (layoutAsked && S.sim) layOut(); }
    catch (e) { showError(e); }
  });
  $("setup-submit").addEventListener("click", async () => {
    try {
      showError("");
      const planned = {...placement};
      await api("/setup", {placement: planned});
      const missing = Object.keys(planned).some((st) => !shownOccupied().has(st));
      layoutAsked = true;
      if (S.sim && missing) await api("/sim/layout", {stations: Object.keys(planned)});
    } catch (e) { problems = (e.data && e.data.problems) || problems; showError(e); render(); }
  });
  $("setup-layout").addEventListener("click", () => layOut());
  $("setup-save").addEventListener("click", async () => {
    try { const r = await api("/setups", {name: $("setup-name").value, placement}); $("setup-hint").textContent = t("page.setup.saved_as", {name: r.setup.name}); loadSaved(); }
    catch (e) { showError(e); }
  });
  let saved = [];
  async function loadSaved() {
    if (!IS_SEAT) return;
    try {
      saved = (await api("/setups")).setups;
      const sel = $("setup-saved");
      while (sel.options.length > 1) sel.remove(1);
      for (const s of saved) sel.add(new Option(s.name, s.name));
    } catch (e) { showError(e); }
  }
  $("setup-load").addEventListener("click", () => {
    const s = saved.find((x) => x.name === $("setup-saved").value);
    if (!s) return;
    placement = {...s.placement}; savePlacement(); render(); checkPlacement();
    if (layoutAsked && S.sim) layOut();
  });
  $("react-auto").addEventListener("change", async (e) => {
    const on = e.target.checked;
    try { showError(""); await api("/reaction/auto", {on}); } catch (err) { e.target.checked = !on; showError(err); }
  });
  $("remote-pause").addEventListener("click", () => remoteAsk("pause"));
  $("remote-resume").addEventListener("click", () => remoteAsk("resume"));
  $("remote-resign").addEventListener("click", () => { if (confirmed("remote-resign")) remoteAsk("resign"); });
  $("remote-undo").addEventListener("click", () => remoteAsk("undo"));
  $("remote-undo-agree").addEventListener("click", () => remoteAsk("undo_agree"));
  $("remote-undo-decline").addEventListener("click", () => remoteAsk("undo_decline"));
  $("arb-pause").addEventListener("click", () => arbiter("pause"));
  $("arb-resume").addEventListener("click", () => arbiter("resume"));
  $("arb-undo").addEventListener("click", () => { if (confirmed("arb-undo")) arbiter("undo"); });
  $("arb-out").addEventListener("click", () => {
    if (!confirmed("arb-out")) return;
    const side = $("arb-out-side").value;
    if (side) arbiter("out", {side, reason: $("arb-reason").value || "out by the club's time rule"});
  });
  $("arb-end").addEventListener("click", () => {
    if (!confirmed("arb-end")) return;
    const w = $("arb-winner").value;
    arbiter("end", {winners: w ? [w] : [], reason: $("arb-reason").value || (w ? "ended by the arbiter" : "draw agreed")});
  });
  $("replay-open").addEventListener("click", async () => {
    try { const r = await api("/replay"); replay = {steps: r.steps, i: 0}; render(); } catch (e) { showError(e); }
  });
  $("replay-prev").addEventListener("click", () => { if (replay && replay.i > 0) { replay.i--; render(); } });
  $("replay-next").addEventListener("click", () => { if (replay && replay.i < replay.steps.length - 1) { replay.i++; render(); } });
  $("replay-live").addEventListener("click", () => { replay = null; render(); });
  $("error").addEventListener("click", () => showError(""));
  $("zoom-in").addEventListener("click", () => B.setZoom("in"));
  $("zoom-out").addEventListener("click", () => B.setZoom("out"));
  $("zoom-fit").addEventListener("click", () => { B.setZoom("fit"); $("zoom-fit").setAttribute("aria-pressed", B.isZoomed() ? "true" : "false"); });
  loadSaved();
  start().catch((e) => showError(e.message || String(e)));
})();
