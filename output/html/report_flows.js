// atrace report --html: the Flows section (docs/flows.md). The graph of
// who hands values, bytes and wake-ups to whom, per function: the two
// groups of the cheapest split in two columns (functions in neither in a
// third between them), each edge a curve from its sender's right side to
// its receiver's left, its width growing with its count, its colour its
// kind; then the edges as a table. Hover a node to see only its edges.

const FLOW_COLORS = { value: "#2f6fd0", bytes: "#2e8b57", wakeup: "#8a8f99" };

function FlowsView() {
  const flows = data.flows || { nodes: [], edges: [], split: null, recorded: {} };
  const canvas = document.getElementById("fl-canvas");
  const note = document.getElementById("fl-note");
  const status = document.getElementById("fl-status");
  const nodes = flows.nodes;
  const edges = flows.edges;

  const missing = [];
  const rec = flows.recorded || {};
  if (!rec.values) missing.push("values (record --retval=F/p, --args=G@auto)");
  if (!rec.bytes) missing.push("messages (record --kernel=+net)");
  if (!rec.wakeups) missing.push("wake-ups (record --kernel=+sched)");
  let text = edges.length + (edges.length === 1 ? " edge" : " edges") + " between " +
    nodes.length + " functions.";
  if (flows.split)
    text += " Cheapest split (" + (flows.split.exact ? "exact" : "approximate") + "): " +
      fmtCount(flows.split.cut) + " hand-offs between the left and the right column" +
      (flows.split.cut_bytes ? " (" + fmtCount(flows.split.cut_bytes) + " bytes)" : "") + ".";
  if (missing.length) text += " Not recorded: " + missing.join(", ") + ".";
  note.textContent = text;

  // Columns: side 0 left, 2 middle, 1 right; busiest first in each.
  const column = [0, 2, 1];
  const cols = [[], [], []];
  nodes.forEach(function (n, i) { cols[column.indexOf(n.side)].push(i); });
  cols.forEach(function (c) { c.sort(function (a, b) { return nodes[b].work_ns - nodes[a].work_ns; }); });
  const used = cols.filter(function (c) { return c.length; }).length;
  const rowH = 34, boxH = 24, pad = 16;
  const rows = Math.max(1, Math.max.apply(null, cols.map(function (c) { return c.length; })));
  const pos = new Array(nodes.length);
  let hover = -1;
  const most = edges.reduce(function (m, e) { return Math.max(m, e.count); }, 1);

  function layout(width) {
    const boxW = Math.min(260, Math.max(120, (width - 2 * pad) / Math.max(used, 1) - 80));
    let x = pad;
    const step = used > 1 ? (width - 2 * pad - boxW) / (used - 1) : 0;
    cols.forEach(function (c) {
      if (!c.length) return;
      c.forEach(function (i, r) { pos[i] = { x: x, y: pad + r * rowH, w: boxW }; });
      x += step;
    });
  }

  function draw() {
    const width = boxWidth(canvas);
    const height = pad * 2 + rows * rowH;
    const ctx = sizeCanvas(canvas, width, nodes.length ? height : 40);
    ctx.clearRect(0, 0, width, height);
    if (!nodes.length) {
      ctx.fillStyle = "#5b6475";
      ctx.font = "13px sans-serif";
      ctx.fillText("No flows between traced calls.", pad, 24);
      return;
    }
    layout(width);
    edges.forEach(function (e) {
      const on = hover < 0 || e.from === hover || e.to === hover;
      const a = pos[e.from], b = pos[e.to];
      const x0 = a.x + a.w, y0 = a.y + boxH / 2, x1 = b.x, y1 = b.y + boxH / 2;
      // Within one column (a function's own values, two functions of one
      // group): an arc on the column's right.
      const same = a.x === b.x;
      ctx.strokeStyle = FLOW_COLORS[e.kind] || "#888";
      ctx.globalAlpha = on ? 0.85 : 0.12;
      ctx.lineWidth = 1 + 5 * Math.log1p(e.count) / Math.log1p(most);
      ctx.setLineDash(e.kind === "wakeup" ? [5, 4] : []);
      ctx.beginPath();
      if (same) {
        // On the right of the column, or on its left where the canvas ends.
        const bulge = 30 + Math.abs(y1 - y0) / 3;
        const right = x0 + bulge < canvas.clientWidth;
        const xs = right ? x0 : a.x, xb = right ? xs + bulge : xs - bulge;
        const yEnd = e.from === e.to ? y0 + 6 : y1;
        ctx.moveTo(xs, e.from === e.to ? y0 - 6 : y0);
        ctx.bezierCurveTo(xb, y0, xb, yEnd, xs, yEnd);
      } else {
        const dx = Math.max(40, Math.abs(x1 - x0) / 2);
        ctx.moveTo(x0, y0);
        ctx.bezierCurveTo(x0 + dx, y0, x1 - dx, y1, x1, y1);
      }
      ctx.stroke();
    });
    ctx.setLineDash([]);
    ctx.globalAlpha = 1;
    ctx.font = "12px sans-serif";
    ctx.textBaseline = "middle";
    nodes.forEach(function (n, i) {
      const p = pos[i];
      ctx.fillStyle = n.side === 0 ? "#c6dbef" : n.side === 1 ? "#fdd0a2" : "#eef0f3";
      ctx.strokeStyle = i === hover ? "#1d2430" : "#9aa3b2";
      ctx.lineWidth = 1;
      ctx.fillRect(p.x, p.y, p.w, boxH);
      ctx.strokeRect(p.x + 0.5, p.y + 0.5, p.w - 1, boxH - 1);
      ctx.fillStyle = "#1d2430";
      let label = n.name;
      while (label.length > 4 && ctx.measureText(label).width > p.w - 8)
        label = label.slice(0, -2);
      if (label !== n.name) label += "…";
      ctx.fillText(label, p.x + 4, p.y + boxH / 2);
    });
  }

  function nodeAt(x, y) {
    for (let i = 0; i < nodes.length; i++) {
      const p = pos[i];
      if (p && x >= p.x && x <= p.x + p.w && y >= p.y && y <= p.y + boxH) return i;
    }
    return -1;
  }
  canvas.addEventListener("mousemove", function (ev) {
    const r = canvas.getBoundingClientRect();
    const i = nodeAt(ev.clientX - r.left, ev.clientY - r.top);
    if (i === hover) return;
    hover = i;
    status.textContent = i < 0 ? "\u00a0" : nodes[i].name + " (" + nodes[i].process + "): " +
      fmtDur(nodes[i].work_ns) + " on CPU";
    draw();
  });
  canvas.addEventListener("mouseleave", function () {
    hover = -1;
    status.textContent = "\u00a0";
    draw();
  });
  window.addEventListener("resize", draw);

  // The table.
  const table = document.getElementById("fl-table");
  const head = el("tr");
  ["Kind", "Count", "Bytes", "Wait", "From", "To"].forEach(function (h, i) {
    head.appendChild(el("th", i === 0 || i > 3 ? "text" : null, h));
  });
  table.tHead.appendChild(head);
  edges.forEach(function (e) {
    const tr = el("tr");
    tr.appendChild(el("td", "text", e.kind));
    tr.appendChild(el("td", null, fmtCount(e.count)));
    tr.appendChild(el("td", null, e.kind === "bytes" ? fmtCount(e.bytes) : "-"));
    tr.appendChild(el("td", null, e.kind === "wakeup" ? fmtDur(e.wait_ns) : "-"));
    tr.appendChild(el("td", "name text", nodes[e.from].name));
    tr.appendChild(el("td", "name text", nodes[e.to].name));
    table.tBodies[0].appendChild(tr);
  });
  draw();
  this.draw = draw;
  this.nodes = nodes.length;
  this.edges = edges.length;
}
