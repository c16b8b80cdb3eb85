// atrace report --html: the page's script (embedded at build time, see
// docs/report-html.md). Reads the JSON in #atrace-data and draws:
//   - the summary table of functions, sortable by any column;
//   - a flame graph of the call tree on a canvas (click to zoom);
//   - a timeline of the threads on a canvas (drag to pan, wheel to zoom):
//     function calls by depth, system calls and off-CPU periods beneath,
//     and grey "busy" bars where short spans were left out of the page.
// Once everything is drawn, <html data-atrace-ready="1">: the integration
// test waits for it in headless Chromium.
"use strict";

(function () {
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

  // ---- summary table -----------------------------------------------------

  const MAX_ROWS = 2000;  // a table of more rows than that helps no one

  function renderTable() {
    const rows = data.functions.slice();
    const cols = [
      { key: "name", label: "Function", text: true },
      { key: "module", label: "Module", text: true },
      { key: "calls", label: "Calls", f: fmtCount },
      { key: "total_ns", label: "Total", f: fmtDur },
      { key: "self_ns", label: "Self", f: fmtDur },
      { key: "avg_ns", label: "Avg", f: fmtDur },
      { key: "max_ns", label: "Max", f: fmtDur },
    ];
    if (data.kernel)
      cols.push(
        { key: "offcpu_ns", label: "Off-CPU", f: fmtDur },
        { key: "syscall_ns", label: "Sys time", f: fmtDur },
        { key: "syscalls", label: "Syscalls", f: fmtCount },
        { key: "faults", label: "Faults", f: fmtCount },
      );
    const table = document.getElementById("fn-table");
    const thead = table.tHead;
    const tbody = table.tBodies[0];
    const note = document.getElementById("fn-note");
    const initial = cols.find(function (c) { return c.key === data.sort; }) || cols[3];
    const state = { col: initial, desc: !initial.text };

    const tr = el("tr");
    cols.forEach(function (c) {
      const th = el("th", c.text ? "text" : "", c.label);
      th.dataset.key = c.key;
      th.addEventListener("click", function () {
        if (state.col === c) state.desc = !state.desc;
        else {
          state.col = c;
          state.desc = !c.text;
        }
        fill();
      });
      c.th = th;
      tr.appendChild(th);
    });
    thead.appendChild(tr);

    function fill() {
      const k = state.col.key;
      const sign = state.desc ? -1 : 1;
      rows.sort(function (a, b) {
        const x = a[k], y = b[k];
        const c = state.col.text ? String(x).localeCompare(String(y)) : x - y;
        if (c) return sign * c;
        return String(a.name).localeCompare(String(b.name));
      });
      cols.forEach(function (c) {
        if (c === state.col) c.th.setAttribute("aria-sort", state.desc ? "descending" : "ascending");
        else c.th.removeAttribute("aria-sort");
      });
      const frag = document.createDocumentFragment();
      rows.slice(0, MAX_ROWS).forEach(function (r) {
        const row = el("tr");
        cols.forEach(function (c) {
          const td = el("td", c.text ? "text" + (c.key === "name" ? " name" : "") : "");
          td.textContent = c.f ? c.f(r[c.key]) : r[c.key];
          if (c.key === "name") {
            td.title = r.name;
            if (r.detached) {
              td.classList.add("detached");
              td.title += " (probes detached by a relevance filter: partial counts)";
            }
            if (r.partial) {
              td.textContent += " (partial)";
              td.title += " (events were lost on a CPU where its thread ran: partial counts)";
            }
          }
          if (c.key === "calls" && r.unfinished) {
            td.textContent += " (" + fmtCount(r.unfinished) + " unfinished)";
          }
          row.appendChild(td);
        });
        frag.appendChild(row);
      });
      tbody.replaceChildren(frag);
    }
    fill();
    if (!rows.length) note.textContent = "No traced function was called.";
    else if (rows.length > MAX_ROWS)
      note.textContent = "Showing " + MAX_ROWS + " of " + fmtCount(rows.length) +
        " functions, in the order chosen.";
  }

  // ---- flame graph -------------------------------------------------------

  function FlameGraph() {
    const f = data.flame;
    const S = f.stride;
    const nodes = f.nodes;
    const n = nodes.length / S;
    const canvas = document.getElementById("fg-canvas");
    const status = document.getElementById("fg-status");
    const note = document.getElementById("fg-note");
    const self = this;
    const ROW = 18;
    const MAX_LEVELS = 1500;  // canvases have a height limit

    const children = new Array(n);
    const depth = new Int32Array(n);
    let maxDepth = 0;
    for (let i = 0; i < n; i++) children[i] = [];
    for (let i = 1; i < n; i++) {
      const p = nodes[i * S];
      children[p].push(i);
      depth[i] = depth[p] + 1;
      if (depth[i] > maxDepth) maxDepth = depth[i];
    }
    const levels = Math.min(maxDepth, MAX_LEVELS) + 1;
    const val = function (i, field) { return nodes[i * S + field]; };
    const name = function (i) { return f.names[val(i, 1)]; };
    const total = function (i) { return val(i, 3); };
    const grand = total(0);

    let focus = 0;
    let hover = -1;
    let rects = [];  // per level: [node, x, w] triples of what was drawn

    const notes = [];
    if (n <= 1) notes.push("No traced calls: nothing to draw.");
    if (f.shown_nodes < f.total_nodes)
      notes.push("Showing the " + fmtCount(f.shown_nodes - 1) + " heaviest of " +
        fmtCount(f.total_nodes - 1) + " call paths; the lighter ones are left out.");
    if (maxDepth > MAX_LEVELS) notes.push("Calls deeper than " + MAX_LEVELS + " levels are not drawn.");
    note.textContent = notes.join(" ");

    function draw() {
      const W = boxWidth(canvas);
      const ctx = sizeCanvas(canvas, W, levels * ROW + 2);
      ctx.font = "11px ui-monospace, 'DejaVu Sans Mono', monospace";
      ctx.textBaseline = "middle";
      rects = [];
      for (let l = 0; l < levels; l++) rects.push([]);
      const box = function (i, x, w, dim) {
        const d = depth[i];
        if (d >= levels) return;
        const y = d * ROW;
        ctx.fillStyle = i === 0 ? "#c9ced8" : callColor(name(i));
        ctx.globalAlpha = dim ? 0.55 : 1;
        ctx.fillRect(x + 0.5, y + 0.5, Math.max(w - 1, 0.5), ROW - 1);
        ctx.globalAlpha = 1;
        if (i === hover) {
          ctx.strokeStyle = "#1d2430";
          ctx.lineWidth = 1.5;
          ctx.strokeRect(x + 1, y + 1, Math.max(w - 2, 1), ROW - 2);
        }
        const label = fitText(i === 0 ? name(i) + " (" + fmtDur(grand) + ")" : name(i), w);
        if (label) {
          ctx.fillStyle = COLORS.text;
          ctx.fillText(label, x + 4, y + ROW / 2 + 0.5);
        }
        rects[d].push(i, x, w);
      };
      // The focus's ancestors, full width (dimmed): clicking one zooms out.
      for (let a = focus; ; a = val(a, 0)) {
        if (a !== focus) box(a, 0, W, true);
        if (a === 0) break;
      }
      // The focus and its descendants, by inclusive time.
      const scale = W / Math.max(1, total(focus));
      const stack = [[focus, 0]];
      while (stack.length) {
        const top = stack.pop();
        const i = top[0], x = top[1];
        const w = total(i) * scale;
        box(i, x, i === focus ? W : w, false);
        let cx = x;
        const kids = children[i];
        for (let k = 0; k < kids.length; k++) {
          const c = kids[k];
          const cw = total(c) * scale;
          if (cw >= 0.3) stack.push([c, cx]);
          cx += cw;
        }
      }
    }
    const redraw = rafDraw(draw);

    function at(ev) {
      const r = canvas.getBoundingClientRect();
      const x = ev.clientX - r.left, y = ev.clientY - r.top;
      const l = Math.floor(y / ROW);
      if (l < 0 || l >= rects.length) return -1;
      const list = rects[l];
      for (let k = 0; k < list.length; k += 3)
        if (x >= list[k + 1] && x < list[k + 1] + Math.max(list[k + 2], 1)) return list[k];
      return -1;
    }
    function describe(i) {
      if (i < 0) return "\u00a0";
      const t = total(i);
      let s = (i === 0 ? "all traced calls" : name(i)) + " \u2014 total " + fmtDur(t) +
        " (" + fmtPct(t, grand) + " of all)";
      if (i !== 0) s += ", self " + fmtDur(val(i, 4));
      s += ", " + fmtCount(val(i, 2)) + (val(i, 2) === 1 ? " call" : " calls");
      if (f.kernel)
        s += ", off-CPU " + fmtDur(val(i, 5)) + ", " + fmtCount(val(i, 7)) + " syscalls (" +
          fmtDur(val(i, 6)) + "), " + fmtCount(val(i, 8)) + " faults";
      return s;
    }
    canvas.addEventListener("mousemove", function (ev) {
      const i = at(ev);
      if (i !== hover) {
        hover = i;
        status.textContent = describe(i);
        redraw();
      }
    });
    canvas.addEventListener("mouseleave", function () {
      hover = -1;
      status.textContent = "\u00a0";
      redraw();
    });
    canvas.addEventListener("click", function (ev) {
      const i = at(ev);
      if (i < 0) return;
      // Clicking the zoomed frame itself goes up one level.
      focus = i === focus && i !== 0 ? val(i, 0) : i;
      redraw();
    });
    document.getElementById("fg-reset").addEventListener("click", function () {
      focus = 0;
      redraw();
    });
    window.addEventListener("resize", redraw);
    draw();
    status.textContent = describe(0);
    // For a console or a test: redraw zoomed into frame i.
    self.draw = draw;
    self.zoomTo = function (i) {
      focus = i >= 0 && i < n ? i : 0;
      draw();
    };
  }

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
      " (unfinished: thread exited)", " (unfinished: recording ended)"];
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
              (r.kind === KIND_CALL ? ", depth " + r.depth : "") + (HOW[spans[o + 6]] || "");
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
  window.atraceReport = { flame: new FlameGraph(), timeline: new TimelineView() };
  document.documentElement.setAttribute("data-atrace-ready", "1");
}());
