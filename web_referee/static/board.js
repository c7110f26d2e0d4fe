/* FaceDown board drawing: the server draws the static board (controller/board_svg.py, this viewer's side at the
   bottom); this module reads each station's position from it, draws the pieces and marks on top, and zooms so that
   every station is at least 44 CSS px wide at the working zoom on a phone (pan by scrolling, pinch as usual).
   It knows nothing of the game's rules: app.js hands it a model of what to show. */
"use strict";
window.FDBoard = (() => {
  const SVGNS = "http://www.w3.org/2000/svg";
  const PITCH = 60;            // board_svg.SCREEN_PITCH: one station's tap area in board units
  const MIN_TAP_PX = 44;       // the smallest tap target at the working zoom
  const WATER_KINDS = ["water", "anchorage"];
  const cls = (s) => String(s).toLowerCase().replace(/[^a-z0-9_-]/g, "_");

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVGNS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  function create(svg, wrap, G, onTap) {
    const pts = {}, groups = {};
    for (const g of svg.querySelectorAll("g.station")) {
      const id = g.getAttribute("data-station");
      pts[id] = [parseFloat(g.getAttribute("data-x")), parseFloat(g.getAttribute("data-y"))];
      groups[id] = g;
      g.addEventListener("click", () => onTap(id));
    }
    const vb = svg.viewBox.baseVal;
    drawWater();
    const layer = el("g", {class: "pieces"}, svg);
    const arrowLayer = el("g", {class: "arrows"}, svg);  // the computer's move, drawn over the pieces
    const defs = el("defs", {}, svg);
    const head = el("marker", {id: "fd-arrow-head", viewBox: "0 0 10 10", refX: "7", refY: "5", markerWidth: "4",
      markerHeight: "4", orient: "auto-start-reverse"}, defs);
    el("path", {d: "M 0 0 L 10 5 L 0 10 z", class: "arrow-head"}, head);
    const flashLayer = el("g", {class: "flash"}, svg);
    let zoom = null;  // null: automatic (fit, or the working zoom when fitting makes taps too small)
    let autoZoom = false;  // the zoom was set by show() to bring stations far apart into one screen

    // A river or sea between lands gets a band of water under the lines, and the sea lines on it are drawn white.
    function drawWater() {
      const wet = G.stations.filter((s) => WATER_KINDS.includes(s.kind) && pts[s.id]).map((s) => pts[s.id]);
      const lines = svg.querySelector("g.lines");
      if (!wet.length || !lines) return;
      let pitch = Infinity;
      for (const [ax, ay] of wet) for (const [bx, by] of wet) { const d = Math.hypot(ax - bx, ay - by); if (d > 0 && d < pitch) pitch = d; }
      if (!isFinite(pitch)) pitch = 40;
      const xs = wet.map((p) => p[0]), ys = wet.map((p) => p[1]);
      const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
      const pad = pitch / 2;
      const band = x1 - x0 >= y1 - y0
        ? {x: vb.x, y: y0 - pad, width: vb.width, height: y1 - y0 + 2 * pad}
        : {x: x0 - pad, y: vb.y, width: x1 - x0 + 2 * pad, height: vb.height};
      svg.insertBefore(el("rect", {class: "water-band", ...band}), lines);
      const inside = ([x, y]) => x >= band.x && x <= band.x + band.width && y >= band.y && y <= band.y + band.height;
      for (const pl of lines.querySelectorAll("polyline.line-sea")) {
        const ps = (pl.getAttribute("points") || "").trim().split(/\s+/).map((p) => p.split(",").map(Number));
        if (ps.length && ps.every(inside)) pl.classList.add("on-water");
      }
    }

    // ---------------------------------------------------------------- zoom
    function fitScale() {
      // the whole board in the width, and in the height of the screen less the header and banner
      const w = wrap.clientWidth || vb.width;
      const h = Math.max(300, window.innerHeight - 140);
      return Math.min(w / vb.width, h / vb.height);
    }
    /* the working zoom: fit the board, unless that makes a station smaller than a finger */
    function workingScale() { return Math.max(fitScale(), MIN_TAP_PX / PITCH); }
    function layout() {
      const s = zoom === null ? workingScale() : zoom;
      svg.style.width = `${Math.round(vb.width * s)}px`;
      svg.style.height = `${Math.round(vb.height * s)}px`;
      wrap.classList.toggle("zoomed", vb.width * s > wrap.clientWidth + 1);
      fitHeight();
      cues();
      return s;
    }
    /* the board's window ends at the bottom of the first screen (the pinned box above it, its tools below), so
       whatever it shows is on the first screen; on a desktop the stylesheet's height holds */
    function fitHeight() {
      const was = wrap.style.maxHeight;
      if (window.matchMedia("(min-width: 1000px)").matches) wrap.style.maxHeight = "";
      else {
        const top = wrap.getBoundingClientRect().top + window.scrollY;
        const tools = document.getElementById("board-tools");
        const below = tools ? tools.getBoundingClientRect().height + 12 : 12;
        wrap.style.maxHeight = `${Math.max(200, Math.floor(window.innerHeight - top - below))}px`;
      }
      const changed = wrap.style.maxHeight !== was;  // what was in the window may not be any more
      if (changed) cues();
      return changed;
    }
    /* the arrows at the board's edges where it goes on beyond the window (it pans: drag, or it pans by itself) */
    const frame = wrap.parentElement;
    function cues() {
      if (!frame) return;
      const x = wrap.scrollLeft, y = wrap.scrollTop, w = wrap.scrollWidth - wrap.clientWidth, h = wrap.scrollHeight - wrap.clientHeight;
      frame.classList.toggle("more-left", x > 2);
      frame.classList.toggle("more-right", x < w - 2);
      frame.classList.toggle("more-up", y > 2);
      frame.classList.toggle("more-down", y < h - 2);
    }
    wrap.addEventListener("scroll", () => cues(), {passive: true});
    if (window.ResizeObserver) new ResizeObserver(() => cues()).observe(wrap);  // the window grew or shrank
    /* where stations are in the board's scrolled content, in CSS px: {x0, y0, x1, y1} */
    function boxOf(stations) {
      const wr = wrap.getBoundingClientRect();
      let box = null;
      for (const st of stations) {
        const r = groups[st] && groups[st].querySelector("rect.hit");
        if (!r) continue;
        const b = r.getBoundingClientRect();
        const x0 = b.left - wr.left + wrap.scrollLeft, y0 = b.top - wr.top + wrap.scrollTop;
        box = box ? {x0: Math.min(box.x0, x0), y0: Math.min(box.y0, y0), x1: Math.max(box.x1, x0 + b.width), y1: Math.max(box.y1, y0 + b.height)}
          : {x0, y0, x1: x0 + b.width, y1: y0 + b.height};
      }
      return box;
    }
    /* bring these stations into the board's window by itself (and zoom out just enough when they are too far apart
       for one screen at the working zoom); an empty list gives back the working zoom. Returns whether it moved. */
    function show(stations) {
      if (!stations.length) {
        if (autoZoom) { autoZoom = false; zoom = null; layout(); }
        return false;
      }
      let box = boxOf(stations);
      if (!box) return false;
      const cw = wrap.clientWidth, ch = wrap.clientHeight;
      if (box.x1 - box.x0 > cw || box.y1 - box.y0 > ch) {
        const now = zoom === null ? workingScale() : zoom;
        const need = now * Math.min(cw / (box.x1 - box.x0 + 8), ch / (box.y1 - box.y0 + 8));
        zoom = Math.max(fitScale(), need);
        autoZoom = true;
        layout();
        box = boxOf(stations);
      }
      const inside = box.x0 >= wrap.scrollLeft && box.x1 <= wrap.scrollLeft + cw && box.y0 >= wrap.scrollTop && box.y1 <= wrap.scrollTop + ch;
      if (inside) { cues(); return false; }
      const x = Math.max(0, Math.min(wrap.scrollWidth - cw, (box.x0 + box.x1) / 2 - cw / 2));
      const y = Math.max(0, Math.min(wrap.scrollHeight - ch, (box.y0 + box.y1) / 2 - ch / 2));
      const moved = Math.abs(x - wrap.scrollLeft) > 1 || Math.abs(y - wrap.scrollTop) > 1;
      wrap.scrollLeft = x;
      wrap.scrollTop = y;
      cues();
      return moved;
    }
    function scrollHome() {
      // the viewer's own side is drawn at the bottom: start a zoomed board there, centred
      wrap.scrollLeft = (wrap.scrollWidth - wrap.clientWidth) / 2;
      wrap.scrollTop = wrap.scrollHeight;
    }
    function setZoom(kind) {
      const now = zoom === null ? workingScale() : zoom;
      if (kind === "in") zoom = Math.min(now * 1.25, 4);
      else if (kind === "out") zoom = Math.max(now / 1.25, fitScale());
      else zoom = zoom === null ? fitScale() : null;  // toggle: whole board <-> working zoom
      layout();
      return zoom;
    }
    window.addEventListener("resize", () => layout());

    // ---------------------------------------------------------------- pieces and marks
    /* fit a label in a piece face: the font shrinks for long words, so nothing is ever cut */
    const sizes = new Map();  // label -> font size that fits, measured once per label
    function face(g, text, zh, w) {
      const t = el("text", {y: 0, class: zh ? "zh" : "en", "dominant-baseline": "central", "font-size": "17"}, g);
      t.textContent = text;
      const key = `${w}|${text}`;
      if (!sizes.has(key)) {
        const width = t.getComputedTextLength();
        sizes.set(key, width > w - 8 ? Math.floor(170 * (w - 8) / width) / 10 : 17);
      }
      t.setAttribute("font-size", String(sizes.get(key)));
      return t;
    }

    /* model: {pieces: [{station, owner, piece, state, label, mark}], marks: {station: [class...]}, badges: {station: text},
       shown: {station: {occupied, hand}} } */
    function draw(model) {
      for (const [id, g] of Object.entries(groups)) {
        const want = model.marks[id] || [];
        const has = g.getAttribute("data-marks") || "";
        const key = want.join(" ");
        if (has !== key) {
          if (has) g.classList.remove(...has.split(" "));
          if (want.length) g.classList.add(...want);
          g.setAttribute("data-marks", key);
        }
        const shown = model.shown[id];
        g.setAttribute("data-occupied", shown && shown.occupied ? "1" : "0");
        if (shown && shown.hand) g.setAttribute("data-hand", "1"); else g.removeAttribute("data-hand");
      }
      layer.textContent = "";
      const W = 48, H = 36;
      for (const p of model.pieces) {
        if (!pts[p.station]) continue;
        const [X, Y] = pts[p.station];
        const g = el("g", {class: `piece side-${cls(p.owner || "none")} sidex-${G.sides.indexOf(p.owner)} ${p.state || ""}`,
          "data-station": p.station, transform: `translate(${X},${Y})`}, layer);
        if (p.piece) g.setAttribute("data-piece", p.piece);
        if (p.owner) g.setAttribute("data-owner", p.owner);
        el("rect", {x: -W / 2, y: -H / 2, width: W, height: H, rx: 5}, g);
        if (p.label) face(g, p.label, p.zh, W);
        else if (p.sideMark) { const t = face(g, p.sideMark, p.zh, W * 0.6); t.classList.add("side-mark"); }
        if (p.mark) { const m = el("text", {x: W / 2 - 3, y: -H / 2 + 8, class: "rank-mark"}, g); m.textContent = p.mark; }
        if (p.state && p.state.includes("lifted")) {
          const h = el("text", {y: H / 2 + 10, class: "hand-mark"}, g);
          h.textContent = "✋";
          if (p.handTitle) el("title", {}, h).textContent = p.handTitle;
        }
      }
      arrowLayer.textContent = "";
      for (const a of model.arrows || []) {
        if (!pts[a.from] || !pts[a.to]) continue;
        const [x0, y0] = pts[a.from], [x1, y1] = pts[a.to];
        const d = Math.hypot(x1 - x0, y1 - y0) || 1, cut = Math.min(PITCH * 0.2, d / 4);
        const ux = (x1 - x0) / d, uy = (y1 - y0) / d;
        const attrs = {x1: x0 + ux * cut, y1: y0 + uy * cut, x2: x1 - ux * cut, y2: y1 - uy * cut, "marker-end": "url(#fd-arrow-head)"};
        // a ring round each station, outside the piece standing there: from white, to cyan (the lights' colours)
        for (const [cx, cy, kind] of [[x0, y0, "from"], [x1, y1, "to"]]) {
          el("circle", {cx, cy, r: PITCH * 0.54, class: "ring-under"}, arrowLayer);
          el("circle", {cx, cy, r: PITCH * 0.54, class: `ring ring-${kind}`}, arrowLayer);
        }
        el("line", {...attrs, class: "arrow-under"}, arrowLayer);
        el("line", {...attrs, class: `arrow arrow-${a.kind}`, "data-from": a.from, "data-to": a.to}, arrowLayer);
      }
      for (const [id, text] of Object.entries(model.badges || {})) {
        if (!pts[id]) continue;
        const [X, Y] = pts[id];
        const g = el("g", {class: "badge", transform: `translate(${X - PITCH * 0.38},${Y - PITCH * 0.36})`, "data-station": id}, layer);
        el("circle", {r: 11}, g);
        const t = el("text", {"dominant-baseline": "central"}, g);
        t.textContent = text;
      }
    }

    /* a few seconds of marks after a ruling: the survivor's star, a cross where pieces left, arrows for a bounce */
    let flashTimer = null;
    function flash(items, ms) {
      clearTimeout(flashTimer);
      flashLayer.textContent = "";
      for (const it of items) {
        if (!pts[it.station]) continue;
        const [X, Y] = pts[it.station];
        const g = el("g", {class: `flash-mark ${it.kind}`, transform: `translate(${X},${Y})`, "data-station": it.station}, flashLayer);
        el("circle", {r: PITCH * 0.46}, g);
        const t = el("text", {x: PITCH * 0.3, y: -PITCH * 0.26, "dominant-baseline": "central"}, g);
        t.textContent = it.icon;
        if (it.title) el("title", {}, g).textContent = it.title;
      }
      svg.appendChild(flashLayer);
      flashTimer = setTimeout(() => { flashLayer.textContent = ""; }, ms || 4000);
    }

    return {
      pts, groups, draw, flash, layout, setZoom, scrollHome, show, cues, fitHeight,
      tapPx: () => PITCH * (parseFloat(svg.style.width) / vb.width),
      isZoomed: () => zoom !== null,
    };
  }

  /* A watcher's page (no seat) on a wide screen turns a tall board on its side when that draws it larger: the
     server sends both drawings; this swaps the landscape one in before the board is set up. */
  function chooseOrientation(svg, wrap) {
    const tpl = document.getElementById("board-landscape");
    if (!tpl || !window.matchMedia("(min-width: 1000px)").matches) return false;
    const alt = tpl.content.querySelector("svg");
    const fit = (w, h) => Math.min(wrap.clientWidth / w, Math.max(300, window.innerHeight - 140) / h);
    const now = svg.viewBox.baseVal, [, , aw, ah] = alt.getAttribute("viewBox").split(/\s+/).map(Number);
    if (fit(aw, ah) < 1.2 * fit(now.width, now.height)) return false;
    svg.textContent = "";
    svg.setAttribute("viewBox", alt.getAttribute("viewBox"));
    for (const child of [...alt.childNodes]) svg.appendChild(document.importNode(child, true));
    svg.classList.add("landscape");
    return true;
  }

  return {create, chooseOrientation};
})();
