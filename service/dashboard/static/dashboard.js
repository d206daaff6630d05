// shredcat admin dashboard: the only script, served from our origin (CSP script-src 'self', no
// inline script). Every page works without it; it adds these conveniences:
// * the playground: Ctrl/Cmd+Enter runs, the last predicates run (this browser's) are listed;
// * the playground's form posts (any length); a predicate whose result URL is short enough
//   (data-max-url) is run by GET instead, so its result has a URL;
// * Back shows the predicate of the result shown (a page restored from the back-forward cache
//   keeps the text typed before leaving: it is put back to the page's own);
// * the caret under a predicate error is scrolled into view (a phone shows ~40 characters);
// * the playground's column and path list inserts its entry at the cursor of the predicate box;
// * completion in the predicate box: the columns and paths containing the word before the cursor
//   (a bounded request to /complete), a listbox driven by the arrow keys, Enter or Tab inserts,
//   Escape closes;
// * copy buttons: a file's full path, the candidates as a Spark read or a DuckDB query (fetched
//   from the export routes; a refusal is shown, not copied);
// * a chart's bars are one tab stop (roving tabindex): arrow keys, Home and End move between
//   bars, Enter follows a bar's link; the focused bar's file and values are written under the chart.
"use strict";

function insertAtCursor(box, text) {
  const start = box.selectionStart ?? box.value.length;
  const end = box.selectionEnd ?? start;
  box.focus();
  box.setRangeText(text, start, end, "end");
  box.dispatchEvent(new Event("input", { bubbles: true }));
}

function wireInserts() {
  const box = document.getElementById("sql");
  if (!box) return;
  for (const button of document.querySelectorAll("button.insert[data-insert]")) {
    button.addEventListener("click", () => insertAtCursor(box, button.dataset.insert));
  }
}

function runUrl(form) {
  const params = new URLSearchParams();
  for (const name of ["sql", "snapshot", "tz"]) {
    const field = form.elements.namedItem(name);
    if (field && field.value !== "") params.set(name, field.value);
  }
  return new URL(form.action).pathname + "?" + params.toString();
}

// The last predicates run, newest first, kept in this browser only (localStorage).
const RECENT_KEY = "shredcat.recentPredicates";
const RECENT_MAX = 10;
const RECENT_CHARS = 4000; // longer predicates are not kept (storage is small)

function recentPredicates() {
  try {
    const list = JSON.parse(window.localStorage.getItem(RECENT_KEY) || "[]");
    return Array.isArray(list) ? list.filter((x) => typeof x === "string") : [];
  } catch (e) {
    return [];
  }
}

function rememberPredicate(sql) {
  if (!sql.trim() || sql.length > RECENT_CHARS) return;
  const list = [sql, ...recentPredicates().filter((x) => x !== sql)].slice(0, RECENT_MAX);
  try {
    window.localStorage.setItem(RECENT_KEY, JSON.stringify(list));
  } catch (e) {
    // storage full or disabled: the list is a convenience
  }
}

function showRecent(form, box) {
  const list = recentPredicates();
  const holder = document.getElementById("recent-predicates");
  if (!holder || !list.length) return;
  const ul = holder.querySelector("ul");
  for (const sql of list) {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "insert";
    button.title = sql;
    const code = document.createElement("code");
    code.textContent = sql.length > 120 ? sql.slice(0, 120) + "…" : sql;
    button.appendChild(code);
    button.addEventListener("click", () => {
      box.value = sql;
      box.focus();
    });
    li.appendChild(button);
    ul.appendChild(li);
  }
  holder.hidden = false;
}

function wireRun() {
  const form = document.getElementById("playground-form");
  if (!form) return;
  const box = form.elements.namedItem("sql");
  const max = Number(form.dataset.maxUrl || 0);
  // Ctrl+Enter (Cmd+Enter on a Mac) runs the predicate from the box.
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  showRecent(form, box);
  form.addEventListener("submit", (event) => {
    rememberPredicate(box.value);
    const url = runUrl(form);
    if (url.length > max) return; // too long for a URL: posted
    event.preventDefault();
    window.location.assign(url);
  });
  window.addEventListener("pageshow", () => {
    for (const field of form.querySelectorAll("textarea, input[type=text]")) field.value = field.defaultValue;
  });
}

// The caret under an error sits in a box that scrolls sideways: on a phone a long line puts it
// off-screen, so the box is scrolled to it.
function showCaret() {
  const box = document.querySelector(".caret-box");
  const pre = box && box.querySelector("pre.caret");
  const text = pre && pre.firstChild;
  if (!text || text.nodeType !== Node.TEXT_NODE || !text.data.length) return;
  const range = document.createRange();
  range.setStart(text, text.data.length - 1);
  range.setEnd(text, text.data.length);
  const x = range.getBoundingClientRect().left - box.getBoundingClientRect().left + box.scrollLeft;
  if (x > box.clientWidth - 24) box.scrollLeft = x - box.clientWidth / 2;
}

// The focused bar's file and values, in words under the chart (a tooltip shows only on hover).
// Listened for on the document: Chromium makes an SVG element with a focus listener focusable,
// which would add a tab stop to the chart.
function wireFocusValues() {
  const said = document.getElementById("chart-focus");
  if (!said) return;
  document.addEventListener("focusin", (event) => {
    const bar = event.target.closest && event.target.closest("svg.chart [data-bar]");
    const title = bar && bar.querySelector("title");
    if (title) said.textContent = title.textContent;
  });
}

const MOVES = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

function wireChart(group) {
  const bars = [...group.querySelectorAll("[data-bar]")];
  if (!bars.length) return;
  group.addEventListener("keydown", (event) => {
    const at = bars.indexOf(event.target.closest("[data-bar]"));
    if (at < 0) return;
    let to;
    if (event.key in MOVES) to = at + MOVES[event.key];
    else if (event.key === "Home") to = 0;
    else if (event.key === "End") to = bars.length - 1;
    else if (event.key === "PageDown") to = at + 10;
    else if (event.key === "PageUp") to = at - 10;
    else return;
    event.preventDefault();
    to = Math.max(0, Math.min(bars.length - 1, to));
    bars[at].setAttribute("tabindex", "-1");
    bars[to].setAttribute("tabindex", "0");
    bars[to].focus();
  });
}

// --- copy buttons ---------------------------------------------------------------------------

function say(button, text) {
  const status = button.parentElement && button.parentElement.querySelector(".copied");
  if (status) status.textContent = text;
}

async function copyFrom(button) {
  let text;
  if (button.classList.contains("copy-path")) {
    text = button.parentElement.querySelector(".mid").title; // the full path
  } else if (button.dataset.copyFrom) {
    text = document.getElementById(button.dataset.copyFrom).textContent;
  } else {
    // The result's export form holds the predicate once; the button adds its format.
    const form = document.getElementById(button.dataset.copyForm);
    const params = new URLSearchParams(new FormData(form));
    for (const [k, v] of new URLSearchParams(button.dataset.copyParams)) params.set(k, v);
    const action = button.dataset.copyAction || form.action;
    const url = action + "?" + params.toString();
    const response = await fetch(url, { credentials: "same-origin" });
    const body = await response.text();
    if (!response.ok) {
      say(button, body.length < 600 ? body : "Refused (" + response.status + ").");
      button.dataset.copied = "refused";
      return;
    }
    text = body;
  }
  await navigator.clipboard.writeText(text);
  button.dataset.copied = "yes";
  say(button, "Copied.");
}

function wireCopy() {
  if (!navigator.clipboard) return; // the links and the text stay
  for (const button of document.querySelectorAll("button.copy, button.copy-path")) {
    button.hidden = false;
    button.addEventListener("click", () => copyFrom(button).catch((e) => say(button, "Not copied: " + e)));
  }
  for (const row of document.querySelectorAll(".copy-row[hidden]")) row.hidden = false;
}

// --- completion in the predicate box --------------------------------------------------------

function wireCompletion() {
  const form = document.getElementById("playground-form");
  const list = document.getElementById("complete-list");
  if (!form || !list || !form.dataset.completeUrl) return;
  const box = form.elements.namedItem("sql");
  let items = [];
  let active = -1;
  let timer = 0;
  let asked = 0;
  box.setAttribute("role", "combobox");
  box.setAttribute("aria-autocomplete", "list");
  box.setAttribute("aria-controls", "complete-list");
  box.setAttribute("aria-expanded", "false");

  function word() {
    const before = box.value.slice(0, box.selectionStart);
    const m = before.match(/[A-Za-z0-9_$.]+$/);
    return m ? m[0] : "";
  }
  function close() {
    list.hidden = true;
    list.replaceChildren();
    items = [];
    active = -1;
    box.setAttribute("aria-expanded", "false");
    box.removeAttribute("aria-activedescendant");
  }
  function mark(i) {
    active = i;
    list.querySelectorAll("[role=option]").forEach((li, j) => li.setAttribute("aria-selected", String(j === i)));
    if (i >= 0) box.setAttribute("aria-activedescendant", "complete-" + i);
  }
  function choose(i) {
    const w = word();
    const end = box.selectionStart;
    box.setRangeText(items[i].text, end - w.length, end, "end");
    close();
    box.focus();
  }
  function show(found) {
    close();
    items = found;
    if (!items.length) return;
    items.forEach((it, i) => {
      const li = document.createElement("li");
      li.id = "complete-" + i;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", "false");
      const code = document.createElement("code");
      code.textContent = it.label;
      const note = document.createElement("span");
      note.className = "muted";
      note.textContent = " " + it.note;
      li.append(code, note);
      li.addEventListener("mousedown", (event) => {
        event.preventDefault(); // keep the box's focus and cursor
        choose(i);
      });
      list.appendChild(li);
    });
    list.hidden = false;
    box.setAttribute("aria-expanded", "true");
    mark(0);
  }
  box.addEventListener("input", () => {
    window.clearTimeout(timer);
    const w = word();
    if (!w) return close();
    timer = window.setTimeout(async () => {
      const n = ++asked;
      const url = form.dataset.completeUrl + "?q=" + encodeURIComponent(w);
      const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (n !== asked || !response.ok) return; // a newer word was typed, or refused: no list
      show(await response.json());
    }, 120);
  });
  box.addEventListener("keydown", (event) => {
    if (list.hidden || !items.length || event.ctrlKey || event.metaKey) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      mark((active + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length);
    } else if ((event.key === "Enter" || event.key === "Tab") && active >= 0) {
      event.preventDefault();
      choose(active);
    } else if (event.key === "Escape") {
      event.preventDefault();
      close();
    }
  });
  box.addEventListener("blur", () => window.setTimeout(close, 150));
}

document.addEventListener("DOMContentLoaded", () => {
  wireRun();
  wireCopy();
  wireCompletion();
  showCaret();
  wireInserts();
  wireFocusValues();
  for (const group of document.querySelectorAll("svg.chart g.bars")) wireChart(group);
});
