// atrace report --html: the timeline, then the page drawn (after
// report_base.js and report_flame.js, whose names it uses).
"use strict";

// ---- timeline ----------------------------------------------------------

function TimelineView() {
  const t = data.timeline;
  const SS = t.span_stride, CS = t.cell_stride;
  const spans = Float64Array.from(t.spans);
  const cells = Float64Array.from(t.cells);
  const range = Math.max(1, t.t1 - t.t0);
  const canvas = document.getElementById("tl-canvas");
  const status = document.getElementById("tl-status");
  const note = document.getElementById("tl-note");
  const GUTTER = 150, AXIS = 22, RIGHT = 8;

  // Rows: per thread, a band with its name, its call depths, then its
  // system calls and off-CPU periods. Spans and cells come sorted by
  // (thread, kind, depth, start|bucket): each row is one slice of each.
  const rowKey = function (th, kind, d) { return (th * 3 + kind) * 65536 + Math.min(d, 65535); };
  const rowsByKey = new Map();
  const rows = [];
  const bands = [];
  const callH = 14, kernH = 12, bandH = 16, gap = 6;
  let y = AXIS;
  t.threads.forEach(function (th, ti) {
    const band = { thread: th, y: y };
    bands.push(band);
    y += bandH;
    const add = function (kind, d, h, label) {
      const r = { thread: ti, kind: kind, depth: d, y: y, h: h, label: label,
        lo: 0, hi: 0, clo: 0, chi: 0 };
      rows.push(r);
      rowsByKey.set(rowKey(ti, kind, d), r);
      y += h;
    };
    for (let d = 0; d < th.depth; d++) add(KIND_CALL, d, callH, "depth " + d);
    if (th.syscalls) add(KIND_SYSCALL, 0, kernH, "system calls");
    if (th.offcpu) add(KIND_OFFCPU, 0, kernH, "off-CPU");
    y += gap;
  });
  const height = Math.max(y, AXIS + 30);
  function slices(arr, stride, loKey, hiKey) {
    const count = arr.length / stride;
    let i = 0;
    while (i < count) {
      const key = rowKey(arr[i * stride], arr[i * stride + 1], arr[i * stride + 2]);
      let j = i + 1;
      while (j < count && rowKey(arr[j * stride], arr[j * stride + 1], arr[j * stride + 2]) === key) j++;
      const r = rowsByKey.get(key);
      if (r) {
        r[loKey] = i;
        r[hiKey] = j;
      }
      i = j;
    }
  }
  slices(spans, SS, "lo", "hi");
  slices(cells, CS, "clo", "chi");

  // The note: what the page holds and what it left out.
  const kept = t.total_spans - t.dropped_spans;
  let msg = fmtCount(kept) + " spans drawn";
  if (t.dropped_spans)
    msg += "; " + fmtCount(t.dropped_spans) + " shorter ones (" + fmtDur(t.dropped_below_ns) +
      " or less) were left out of the page (at most " + fmtCount(t.max_spans) +
      " spans are kept, the longest): grey bars show how busy they kept each row, per " +
      fmtDur(t.bucket_ns) + " (their count is in the status line)";
  if (!t.total_spans) msg = "No calls, system calls or off-CPU periods to draw.";
  note.textContent = msg + ". ";
  [["calls", "hsl(30,80%,60%)"], ["system calls", COLORS.syscall],
    ["off-CPU (blocked)", COLORS.blocked], ["off-CPU (runnable)", COLORS.runnable],
    ["short spans left out", "rgb(" + COLORS.busy + ")"]].forEach(function (l) {
    const s = el("span", "legend");
    const sw = el("i");
    sw.style.background = l[1];
    s.appendChild(sw);
    s.appendChild(document.createTextNode(l[0]));
    note.appendChild(s);
  });

  let v0 = 0, v1 = range;  // the view, ns from t0
  let plotW = 100;
  const MIN_SPAN = 50;  // ns: the deepest zoom

  function xOf(ns) { return GUTTER + ((ns - v0) / (v1 - v0)) * plotW; }

  // A time on the axis, in the unit of the view's end, with as many
  // decimals as `step` needs ("700.5 ms" beside "701.0 ms").
  function fmtAt(ns, step) {
    const u = v1 >= 1e9 ? [1e9, "s"] : v1 >= 1e6 ? [1e6, "ms"] : v1 >= 1e3 ? [1e3, "us"] : [1, "ns"];
    const dec = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / u[0]) - 1e-9)));
    return (ns / u[0]).toFixed(dec) + " " + u[1];
  }

  function niceStep(rough) {
    const p = Math.pow(10, Math.floor(Math.log10(rough)));
    const m = rough / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  function drawAxis(ctx, W) {
    const step = niceStep(((v1 - v0) / plotW) * 90);
    ctx.fillStyle = COLORS.axis;
    ctx.font = "11px system-ui, 'DejaVu Sans', sans-serif";
    ctx.textBaseline = "middle";
    ctx.textAlign = "left";
    for (let s = Math.ceil(v0 / step) * step; s <= v1; s += step) {
      const x = xOf(s);
      ctx.fillStyle = COLORS.grid;
      ctx.fillRect(Math.round(x), AXIS, 1, height - AXIS);
      ctx.fillStyle = COLORS.axis;
      ctx.fillRect(Math.round(x), AXIS - 5, 1, 5);
      if (x < W - 60) ctx.fillText(fmtAt(s, step), x + 3, AXIS / 2);
    }
    ctx.fillStyle = COLORS.axis;
    ctx.fillText("+ from the start", 4, AXIS / 2);
    ctx.fillRect(GUTTER, AXIS - 1, W - GUTTER - RIGHT, 1);
  }

  function drawRow(ctx, r) {
    const scale = plotW / (v1 - v0);
    const left = GUTTER, right = GUTTER + plotW;
    // Busy cells first: the kept spans go on top.
    if (r.chi > r.clo) {
      const bw = t.bucket_ns;
      let k = upperBound(cells, CS, 3, r.clo, r.chi, Math.floor(v0 / bw) - 1);
      for (; k < r.chi; k++) {
        const b = cells[k * CS + 3];
        const s = b * bw;
        if (s > v1) break;
        let x0 = Math.max(left, xOf(s)), x1 = Math.min(right, xOf(s + bw));
        if (x1 <= x0) continue;
        if (x1 - x0 < 1) x1 = x0 + 1;
        const busy = Math.min(1, cells[k * CS + 4] / bw);
        ctx.fillStyle = "rgba(" + COLORS.busy + "," + (0.25 + 0.75 * busy).toFixed(2) + ")";
        ctx.fillRect(x0, r.y + 1, x1 - x0, r.h - 2);
      }
    }
    if (r.hi <= r.lo) return;
    // Spans of one row never overlap: the last one starting before v0 is
    // the only earlier one that can reach into the view.
    let i = Math.max(r.lo, upperBound(spans, SS, 3, r.lo, r.hi, v0) - 1);
    let lastPx = -1;
    let lastColor = "";
    ctx.font = "10px ui-monospace, 'DejaVu Sans Mono', monospace";
    for (; i < r.hi; i++) {
      const o = i * SS;
      const s = spans[o + 3];
      if (s > v1) break;
      const e = s + spans[o + 4];
      if (e < v0) continue;
      let x0 = left + (s - v0) * scale;
      let x1 = left + (e - v0) * scale;
      if (x0 < left) x0 = left;
      if (x1 > right) x1 = right;
      if (x1 - x0 < 1) {
        // Sub-pixel spans: one rectangle per pixel column is enough.
        const px = Math.floor(x0);
        if (px === lastPx) continue;
        lastPx = px;
        x0 = px;
        x1 = px + 1;
      }
      const name = t.names[spans[o + 5]];
      const color = spanColor(r.kind, name);
      if (color !== lastColor) {
        ctx.fillStyle = color;
        lastColor = color;
      }
      ctx.fillRect(x0, r.y + 1, x1 - x0, r.h - 2);
      if (r.kind === KIND_CALL && x1 - x0 > 40) {
        const label = fitText(name, x1 - x0);
        if (label) {
          ctx.fillStyle = COLORS.text;
          ctx.fillText(label, x0 + 3, r.y + r.h / 2 + 0.5);
          lastColor = "";
        }
      }
    }
  }

  function draw() {
    const W = boxWidth(canvas);
    plotW = Math.max(50, W - GUTTER - RIGHT);
    const ctx = sizeCanvas(canvas, W, height);
    ctx.textBaseline = "middle";
    drawAxis(ctx, W);
    bands.forEach(function (b) {
      ctx.fillStyle = COLORS.band;
      ctx.fillRect(0, b.y, W, bandH);
      ctx.fillStyle = COLORS.text;
      ctx.font = "bold 11px system-ui, 'DejaVu Sans', sans-serif";
      const th = b.thread;
      ctx.fillText((th.name || "thread") + "  tid " + th.tid + "  \u00b7  pid " + th.pid +
        (th.process ? " (" + th.process + ")" : ""), 4, b.y + bandH / 2);
    });
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, AXIS, plotW, height - AXIS);
    ctx.clip();
    rows.forEach(function (r) { drawRow(ctx, r); });
    ctx.restore();
    ctx.font = "10px system-ui, 'DejaVu Sans', sans-serif";
    ctx.fillStyle = COLORS.axis;
    rows.forEach(function (r) { ctx.fillText(r.label, 8, r.y + r.h / 2); });
  }
  const redraw = rafDraw(draw);

  function rowAt(yy) {
    for (let k = 0; k < rows.length; k++)
      if (yy >= rows[k].y && yy < rows[k].y + rows[k].h) return rows[k];
    return null;
  }
  const HOW = ["", " (left by a caller's exit)", " (its end was not recorded)",
    " (unfinished: thread exited)", " (unfinished: recording ended)", " (abandoned: left by longjmp)",
    " (not timed: past the kernel's 64 nested return probes; ends where its thread was seen below it)"];
  function viewLine() {
    const step = (v1 - v0) / 1000;
    return "view: +" + fmtAt(v0, step) + " to +" + fmtAt(v1, step) + " (" + fmtDur(v1 - v0) + " of " +
      fmtDur(range) + "); hover over a span for its details";
  }
  function describe(x, yy) {
    const r = rowAt(yy);
    if (!r || x < GUTTER) return viewLine();
    const th = t.threads[r.thread];
    const who = (th.name || "thread") + " " + th.tid;
    const ns = v0 + ((x - GUTTER) / plotW) * (v1 - v0);
    const px = (v1 - v0) / plotW;  // ns per pixel
    const tol = 2 * px;
    if (r.hi > r.lo) {
      const i = upperBound(spans, SS, 3, r.lo, r.hi, ns + tol) - 1;
      if (i >= r.lo) {
        const o = i * SS;
        const s = spans[o + 3], d = spans[o + 4];
        if (s + d >= ns - tol)
          return t.names[spans[o + 5]] + " \u2014 " + fmtDur(d) + ", from +" + fmtAt(s, px) +
            " to +" + fmtAt(s + d, px) + " on " + who +
            (r.kind === KIND_CALL ? ", depth " + r.depth : "") + (HOW[spans[o + 6]] || "") +
            (t.values && spans[o + 7] ? " \u2014 " + t.values[spans[o + 7]] : "");
      }
    }
    if (r.chi > r.clo) {
      const b = Math.floor(ns / t.bucket_ns);
      const k = upperBound(cells, CS, 3, r.clo, r.chi, b) - 1;
      if (k >= r.clo && cells[k * CS + 3] === b)
        return fmtCount(cells[k * CS + 5]) + " short " +
          (r.kind === KIND_CALL ? "calls" : r.kind === KIND_SYSCALL ? "system calls" : "off-CPU periods") +
          " left out here: busy " + fmtDur(cells[k * CS + 4]) + " of " + fmtDur(t.bucket_ns) +
          " from +" + fmtAt(b * t.bucket_ns, px) + " on " + who;
    }
    return "+" + fmtAt(ns, px) + " on " + who + " (" + r.label + ")";
  }

  function clampView() {
    let span = v1 - v0;
    if (span > range) span = range;
    if (span < MIN_SPAN) span = MIN_SPAN;
    if (v0 < 0) v0 = 0;
    if (v0 + span > range) v0 = Math.max(0, range - span);
    v1 = v0 + span;
    status.textContent = viewLine();
  }

  let drag = null;
  canvas.addEventListener("mousedown", function (ev) {
    drag = { x: ev.clientX, v0: v0, v1: v1 };
    canvas.classList.add("dragging");
    ev.preventDefault();
  });
  window.addEventListener("mouseup", function () {
    drag = null;
    canvas.classList.remove("dragging");
  });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    const dt = ((ev.clientX - drag.x) / plotW) * (drag.v1 - drag.v0);
    v0 = drag.v0 - dt;
    v1 = drag.v1 - dt;
    clampView();
    redraw();
  });
  canvas.addEventListener("mousemove", function (ev) {
    if (drag) return;
    const r = canvas.getBoundingClientRect();
    status.textContent = describe(ev.clientX - r.left, ev.clientY - r.top);
  });
  canvas.addEventListener("mouseleave", function () { status.textContent = viewLine(); });
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    const frac = Math.min(1, Math.max(0, (ev.clientX - r.left - GUTTER) / plotW));
    const at = v0 + frac * (v1 - v0);
    const delta = ev.deltaMode === 1 ? ev.deltaY * 30 : ev.deltaY;
    const span = (v1 - v0) * Math.exp(delta * 0.002);
    v0 = at - frac * span;
    v1 = v0 + span;
    clampView();
    redraw();
  }, { passive: false });
  function reset() {
    v0 = 0;
    v1 = range;
    clampView();
    redraw();
  }
  canvas.addEventListener("dblclick", reset);
  document.getElementById("tl-reset").addEventListener("click", reset);
  window.addEventListener("resize", redraw);
  draw();
  status.textContent = viewLine();
  // For a console or a test: show [from, to] (ns from the start) now.
  this.draw = draw;
  this.range = range;
  this.setView = function (from, to) {
    v0 = from;
    v1 = to;
    clampView();
    draw();
  };
}

renderFacts();
renderTable();
window.atraceReport = { flame: new FlameGraph(), timeline: new TimelineView(), flows: new FlowsView() };
document.documentElement.setAttribute("data-atrace-ready", "1");
