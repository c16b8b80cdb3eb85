// atrace report --html: the summary table and the flame graph (after
// report_base.js, whose names it uses; see its header).
"use strict";

// ---- summary table -----------------------------------------------------

const MAX_ROWS = 2000;  // a table of more rows than that helps no one

function renderTable() {
  const rows = data.functions.slice();
  const cols = [
    { key: "shown", label: "Function", text: true },
    { key: "module", label: "Module", text: true },
    { key: "calls", label: "Calls", f: fmtCount },
    { key: "total_ns", label: "Total", f: fmtDur },
    { key: "self_ns", label: "Self", f: fmtDur },
    { key: "avg_ns", label: "Avg", f: fmtDur },
    { key: "min_ns", label: "Min", f: fmtDur },
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
        const td = el("td", c.text ? "text" + (c.key === "shown" ? " name" : "") : "");
        td.textContent = c.f ? c.f(r[c.key]) : r[c.key];
        if (c.key === "shown") {
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
        if (c.key === "calls" && r.abandoned) {
          td.textContent += " (" + fmtCount(r.abandoned) + " abandoned)";
        }
        if (c.key === "calls" && r.untimed) {
          td.textContent += " (" + fmtCount(r.untimed) + " not timed: past the kernel's 64 nested return probes)";
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
