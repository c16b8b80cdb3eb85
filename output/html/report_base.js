// atrace report --html: the page's scripts (embedded at build time, see
// docs/report-html.md), each its own <script> in this order, sharing the
// top-level names of the ones before:
//   report_base.js      the data (#atrace-data), formatting, colours,
//                       canvas helpers, the header's facts
//   report_flame.js     the summary table (sortable by any column) and the
//                       flame graph of the call tree (click to zoom)
//   report_flows.js     the Flows section: who hands data to whom, as a
//                       graph in the split's two columns and a table
//   report_timeline.js  the timeline of the threads (drag to pan, wheel to
//                       zoom): calls by depth, system calls and off-CPU
//                       periods beneath, grey "busy" bars where short spans
//                       were left out of the page; then draws everything
// Once everything is drawn, <html data-atrace-ready="1">: the integration
// test waits for it in headless Chromium.
"use strict";

const data = JSON.parse(document.getElementById("atrace-data").textContent);

// ---- formatting --------------------------------------------------------

// Three significant digits, as the text report: "812 ns", "20.1 ms".
function sig3(v) {
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(2);
}
function fmtDur(ns) {
  if (!isFinite(ns)) return "-";
  const a = Math.abs(ns);
  if (a < 1e3) return Math.round(ns) + " ns";
  if (a < 999.5e3) return sig3(ns / 1e3) + " us";
  if (a < 999.5e6) return sig3(ns / 1e6) + " ms";
  return sig3(ns / 1e9) + " s";
}
function fmtCount(n) {
  return Number(n).toLocaleString("en-US");
}
function fmtPct(part, whole) {
  if (!whole) return "-";
  const p = (100 * part) / whole;
  return (p >= 10 ? p.toFixed(1) : p.toFixed(2)) + "%";
}

// Stable colours per name: warm hues for calls (flame-graph style).
function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}
const colorCache = new Map();
function callColor(name) {
  let c = colorCache.get(name);
  if (!c) {
    const h = hash(name);
    const hue = 8 + (h % 44);
    const sat = 70 + ((h >>> 8) % 20);
    const light = 55 + ((h >>> 16) % 14);
    c = "hsl(" + hue + "," + sat + "%," + light + "%)";
    colorCache.set(name, c);
  }
  return c;
}
const KIND_CALL = 0, KIND_SYSCALL = 1, KIND_OFFCPU = 2;
const COLORS = {
  syscall: "#4f86c6",
  blocked: "#8d6e97",
  runnable: "#4db6ac",
  busy: "120,124,140",
  axis: "#5b6475",
  grid: "rgba(0,0,0,0.07)",
  band: "#eef1f5",
  text: "#1d2430",
};
function spanColor(kind, name) {
  if (kind === KIND_SYSCALL) return COLORS.syscall;
  if (kind === KIND_OFFCPU) return name.indexOf("runnable") >= 0 ? COLORS.runnable : COLORS.blocked;
  return callColor(name);
}

// A canvas sized in CSS pixels, drawn at the screen's resolution.
function sizeCanvas(canvas, width, height) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(width * dpr));
  canvas.height = Math.max(1, Math.round(height * dpr));
  canvas.style.width = width + "px";
  canvas.style.height = height + "px";
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}
function boxWidth(canvas) {
  return Math.max(300, canvas.parentElement.clientWidth);
}
// Text cut to fit `width` pixels (approximated per character: measuring
// every label would cost more than drawing).
const CHAR_W = 6.6;
function fitText(text, width) {
  const n = Math.floor((width - 6) / CHAR_W);
  if (n < 2) return "";
  return text.length <= n ? text : text.slice(0, n - 1) + "\u2026";
}
// First index in [lo, hi) of the sorted view `arr` (stride, field) whose
// value is > v.
function upperBound(arr, stride, field, lo, hi, v) {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid * stride + field] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
// Redraws at the next frame, once however many events asked for it. The
// timer is for where frames do not come (a hidden tab, a headless
// browser): whichever fires first draws.
function rafDraw(fn) {
  let pending = false;
  const run = function () {
    if (!pending) return;
    pending = false;
    fn();
  };
  return function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(run);
    setTimeout(run, 50);
  };
}
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// ---- header ------------------------------------------------------------

function renderFacts() {
  const m = data.meta;
  const facts = document.getElementById("facts");
  const parts = [
    ["command", m.command || "(attached)"],
    ["pid", String(m.pid)],
    ["duration", fmtDur(m.duration_ns)],
    ["events", fmtCount(m.events)],
    ["kernel events", m.kernel_events || "none"],
  ];
  if (m.lost_events) parts.push(["lost events", fmtCount(m.lost_events)]);
  if (m.orphan_exits) parts.push(["exits without entry", fmtCount(m.orphan_exits)]);
  if (m.compensated) parts.push(["durations", "compensated for probe cost"]);
  parts.push(["host", m.host + " (" + m.kernel + ")"]);
  parts.forEach(function (p, i) {
    if (i) facts.appendChild(document.createTextNode(" \u00b7 "));
    facts.appendChild(document.createTextNode(p[0] + " "));
    facts.appendChild(el("b", "", p[1]));
  });
  if (m.warnings && m.warnings.length) {
    const w = document.getElementById("warnings");
    w.hidden = false;
    w.textContent = m.warnings.map(function (s) { return "warning: " + s; }).join("\n");
  }
  document.title = "atrace report: " + (m.command || "pid " + m.pid);
}
