/* FaceDown page words: loads /i18n/<lang>.json (the package's message catalogs), renders message objects ("say":
   {code, params}) by the message contract, and remembers the reader's language (English, Simplified or Traditional
   Chinese) in localStorage. A missing key is logged as an error and shown as its key, never as English. */
"use strict";
window.FD = (() => {
  const LANGS = ["en", "zh-Hans", "zh-Hant"];
  const STORE = "facedown-lang";
  const SIDE_PARAMS = new Set(["player", "side", "owner", "by", "winner", "defender", "turn"]);
  const STATION_PARAMS = new Set(["station", "from", "to", "guard", "target"]);
  let lang = initial();
  let catalog = {};
  let game = null;
  const listeners = [];

  function initial() {
    let saved = null;
    try { saved = localStorage.getItem(STORE); } catch (e) { saved = null; }
    if (saved === "zh") saved = "zh-Hant";  // the old page's single Chinese choice
    if (LANGS.includes(saved)) return saved;
    const nav = (navigator.language || "").toLowerCase();
    if (nav.startsWith("zh")) return /tw|hk|mo|hant/.test(nav) ? "zh-Hant" : "zh-Hans";
    return "en";
  }

  async function load(next) {
    const resp = await fetch(`/i18n/${next}.json`);
    if (!resp.ok) throw new Error(`no catalog for ${next} (HTTP ${resp.status})`);
    catalog = await resp.json();
    lang = next;
    try { localStorage.setItem(STORE, lang); } catch (e) { /* private mode: the choice lasts this page */ }
    document.documentElement.lang = lang === "en" ? "en" : lang;
    for (const fn of listeners) fn(lang);
  }

  function has(key) { return Object.prototype.hasOwnProperty.call(catalog, key); }

  function t(key, params) {
    if (!has(key)) {
      console.error(`FaceDown: no message ${key} in the ${lang} catalog`);
      return `⟨${key}⟩`;
    }
    return catalog[key].replace(/\{(\w+)\}/g, (m, name) => (params && name in params ? value(name, params[name]) : m));
  }

  // a parameter's words, by its name (the contract's rules)
  function value(name, v) {
    if (v === null || v === undefined) return "";
    if (Array.isArray(v)) {
      const item = name === "winners" || name === "sides" ? "side" : name === "stations" ? "station" : name;
      // a list of message objects is a list of clauses (list.sep); a list of names, sides or stations a list of
      // names (list.names_sep), as the Python renderer does
      const clauses = v.length && v.every((x) => x && typeof x === "object" && x.code);
      return v.map((x) => value(item, x)).join(t(clauses ? "list.sep" : "list.names_sep"));
    }
    if (typeof v === "object") return v.code ? say(v) : value(name, v.station || "");
    if (name === "piece" || name.endsWith("_piece")) return pieceName(v);
    if (SIDE_PARAMS.has(name) || name.endsWith("_side")) return sideName(v);
    if (STATION_PARAMS.has(name) || name.endsWith("_station")) return stationLabel(v);
    return String(v);
  }

  function say(obj) {
    if (!obj) return "";
    if (Array.isArray(obj)) return obj.map(say).join(has("list.sep") ? catalog["list.sep"] : ", ");
    return t(obj.code, obj.params || {});
  }

  function piece(id) { return game && id ? game.pieces.find((p) => p.id === id) : null; }
  function pieceName(id) {
    const p = piece(id);
    if (!p) return id ? String(id) : "";
    if (lang === "en") return p.name;
    if (lang === "zh-Hans") return p.zh_hans || p.zh;
    return p.zh;
  }
  /* the words on a piece's face: its rank mark or short label in English, its name in Chinese */
  function pieceFace(id) {
    const p = piece(id);
    if (!p) return "";
    return lang === "en" ? (p.short || p.name) : pieceName(id);
  }
  function sideName(side) { return side ? t(`side.${side}`) : ""; }
  function stationLabel(id) {
    const s = game && game.stations.find((x) => x.id === id);
    return s && s.label ? s.label : String(id);
  }
  function gameName() { return game ? (lang === "en" ? game.name : lang === "zh-Hans" ? game.zh_hans || game.zh || game.name : game.zh || game.name) : ""; }

  /* fill every element marked data-t (text), data-t-placeholder, data-t-aria (aria-label) and data-t-title */
  function apply(root) {
    for (const el of (root || document).querySelectorAll("[data-t]")) el.textContent = t(el.getAttribute("data-t"));
    for (const el of (root || document).querySelectorAll("[data-t-placeholder]")) el.placeholder = t(el.getAttribute("data-t-placeholder"));
    for (const el of (root || document).querySelectorAll("[data-t-aria]")) el.setAttribute("aria-label", t(el.getAttribute("data-t-aria")));
    for (const el of (root || document).querySelectorAll("[data-t-title]")) el.title = t(el.getAttribute("data-t-title"));
  }

  return {
    LANGS, load, t, say, value, has, apply, pieceName, pieceFace, sideName, stationLabel, gameName,
    get lang() { return lang; },
    get zh() { return lang !== "en"; },
    setGame(g) { game = g; },
    onChange(fn) { listeners.push(fn); },
  };
})();
