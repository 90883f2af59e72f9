// ncclscope report.html: draws the charts of one `ncclscope report` from the
// summary.json object embedded in the page (window.NCCLSCOPE_SUMMARY), with
// uPlot (vendored from npm at build time, embedded in the page: nothing is
// fetched when the page is viewed). Runs once, in the browser, on load.
//
// Charts: per-rank lateness (bars: median, p99 as a line), collective time
// by size (p50/p90/p99/max per function), bus bandwidth by size beside the
// nccl-tests style table, the link matrix heat map (SVG cells), and the
// timeline of each stuck collective across ranks (SVG bars). What each chart
// drew is counted in window.NCCLSCOPE_MARKS (chart id -> marks), for tests.
"use strict";
(function () {
  const S = window.NCCLSCOPE_SUMMARY || {};
  const marks = (window.NCCLSCOPE_MARKS = {});
  const W = 760, H = 300;
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svgEl(tag, attrs, text) {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function section(id, title, note) {
    const s = el("section", { id: id });
    s.appendChild(el("h2", {}, title));
    if (note) s.appendChild(el("p", { class: "note" }, note));
    document.getElementById("charts").appendChild(s);
    return s;
  }
  function empty(s, id, why) {
    s.appendChild(el("p", { class: "empty" }, why));
    marks[id] = 0;
  }
  function fmtBytes(b) {
    const u = ["B", "KiB", "MiB", "GiB"];
    let i = 0;
    while (b >= 1024 && i < u.length - 1) (b /= 1024), i++;
    return (Math.round(b * 10) / 10) + " " + u[i];
  }
  function haveUPlot(s, id) {
    if (typeof uPlot === "function") return true;
    empty(s, id, "charts unavailable: this ncclscope was built without its chart library (npm was missing)");
    return false;
  }

  // ---- per-rank lateness ----
  function lateness() {
    const id = "lateness";
    const s = section(id, "Lateness per rank",
      "Arrival at each collective minus its median arrival, on clocks aligned across hosts: median (bars) and p99 (line) per rank; stragglers in red.");
    const comms = S.lateness || [];
    if (!comms.length) return empty(s, id, "no collective was seen by two or more ranks");
    if (!haveUPlot(s, id)) return;
    // the communicator with the most ranks
    const c = comms.slice().sort((a, b) => b.nranks - a.nranks)[0];
    const rows = c.ranks.slice().sort((a, b) => a.rank - b.rank);
    s.appendChild(el("p", {}, "communicator " + c.commId + (c.name ? " (" + c.name + ")" : "") + ", " + c.nranks +
      " ranks, " + c.collectives + " collectives: " +
      (c.outliers.length ? "straggler(s): rank " + c.outliers.join(", ") : "no straggler")));
    const x = rows.map((r) => r.rank), med = rows.map((r) => r.medianUs), p99 = rows.map((r) => r.p99Us);
    const out = new Set(c.outliers);
    const bars = uPlot.paths.bars({ size: [0.7, 40] });
    const div = el("div", { class: "chart", "data-chart": id });
    s.appendChild(div);
    new uPlot({
      width: W, height: H, title: "lateness (us) by rank",
      scales: { x: { time: false } },
      axes: [{ label: "rank" }, { label: "us" }],
      series: [{ label: "rank" },
        { label: "median", paths: bars, points: { show: false }, stroke: "#1f77b4",
          fill: (u) => { return "#1f77b480"; } },
        { label: "p99", stroke: "#ff7f0e", points: { show: true, size: 5 } }],
      hooks: { draw: [(u) => {
        // stragglers: a red marker above their bar
        const ctx = u.ctx;
        ctx.save();
        ctx.fillStyle = "#d62728";
        for (let i = 0; i < x.length; i++) {
          if (!out.has(x[i])) continue;
          const cx = u.valToPos(x[i], "x", true), cy = u.valToPos(med[i], "y", true);
          ctx.beginPath();
          ctx.arc(cx, cy - 8, 6, 0, 2 * Math.PI);
          ctx.fill();
        }
        ctx.restore();
      }] },
    }, [x, med, p99], div);
    marks[id] = x.length;
    marks[id + ".stragglers"] = c.outliers.length;
  }

  // ---- collective rows by function ----
  function byFunc() {
    const m = new Map();
    for (const r of S.collectives || []) {
      if (!r.timedCalls || !r.bytes) continue;
      const k = r.func;
      if (!m.has(k)) m.set(k, new Map());
      const bySize = m.get(k);
      // one row per size: the one with the most timed calls (communicators of one size merge badly)
      const prev = bySize.get(r.bytes);
      if (!prev || r.timedCalls > prev.timedCalls) bySize.set(r.bytes, r);
    }
    const sizes = new Set();
    for (const bySize of m.values()) for (const b of bySize.keys()) sizes.add(b);
    const xs = Array.from(sizes).sort((a, b) => a - b);
    return { funcs: m, xs: xs };
  }

  function sizeChart(id, title, note, seriesOf, yLabel) {
    const s = section(id, title, note);
    const { funcs, xs } = byFunc();
    if (!xs.length) return [s, empty(s, id, "no timed collective")];
    if (!haveUPlot(s, id)) return [s];
    const series = [{ label: "bytes", value: (u, v) => (v == null ? "" : fmtBytes(v)) }];
    const data = [xs];
    let n = 0, k = 0;
    for (const [func, bySize] of funcs) {
      for (const [suffix, pick, dash] of seriesOf) {
        const ys = xs.map((b) => (bySize.has(b) ? pick(bySize.get(b)) : null));
        n += ys.filter((v) => v != null).length;
        data.push(ys);
        series.push({ label: func + suffix, stroke: palette[k % palette.length], dash: dash, spanGaps: true,
          points: { show: true, size: 5 } });
      }
      k++;
    }
    const div = el("div", { class: "chart", "data-chart": id });
    s.appendChild(div);
    new uPlot({
      width: W, height: H, title: title,
      scales: { x: { time: false, distr: 3, log: 2 }, y: { distr: 3 } },
      axes: [{ label: "message size", values: (u, vs) => vs.map((v) => (v == null ? "" : fmtBytes(v))) }, { label: yLabel }],
      series: series,
    }, data, div);
    marks[id] = n;
    return [s];
  }

  function times() {
    sizeChart("time", "Collective time by size",
      "Per function and message size: the time of one call, p50 (solid), p90, p99 (dashed) and max, after the warm-up calls.",
      [[" p50", (r) => r.p50Us, undefined], [" p90", (r) => r.p90Us, [6, 3]], [" p99", (r) => r.p99Us, [2, 2]],
       [" max", (r) => r.maxUs, [1, 4]]], "us (log)");
  }

  function bandwidth() {
    const [s] = sizeChart("busbw", "Bus bandwidth by size",
      "nccl-tests' busBw per function and message size (mean call time), beside the nccl-tests style table.",
      [["", (r) => r.busbwGBs, undefined]], "GB/s (log)");
    const rows = (S.collectives || []).slice().sort((a, b) => (a.func < b.func ? -1 : a.func > b.func ? 1 : a.bytes - b.bytes));
    const t = el("table", { class: "nccltests", "data-table": "collectives" });
    const head = ["func", "bytes", "count", "dtype", "algo", "proto", "ranks", "calls", "time(us)", "p50(us)", "p99(us)",
      "algbw(GB/s)", "busbw(GB/s)"];
    const tr = el("tr");
    for (const h of head) tr.appendChild(el("th", {}, h));
    t.appendChild(tr);
    const f = (v, d) => (v == null ? "" : Number(v).toFixed(d));
    for (const r of rows) {
      const row = el("tr");
      for (const v of [r.func, r.bytes, r.count, r.dtype, r.algo, r.proto, r.ranks, r.timedCalls, f(r.timeUs, 2),
        f(r.p50Us, 2), f(r.p99Us, 2), f(r.algbwGBs, 3), f(r.busbwGBs, 3)])
        row.appendChild(el("td", {}, String(v)));
      t.appendChild(row);
    }
    s.appendChild(t);
    marks["busbw.table"] = rows.length;
  }

  // ---- link matrix ----
  function links() {
    const id = "links";
    const s = section(id, "Link matrix",
      "Send links (rank -> peer) by their fitted bandwidth, GB/s (min-per-size fit, else average); grey: no link row.");
    const all = (S.slowestLinks || []).concat(S.otherLinks || []);
    const cell = new Map();
    let maxRank = -1;
    for (const l of all) {
      const fit = l.min && l.min.bandwidthGBs > 0 ? l.min : l.avg && l.avg.bandwidthGBs > 0 ? l.avg : null;
      if (!fit || l.peer == null || l.peer < 0) continue;
      const key = l.rank + ">" + l.peer;
      const v = fit.bandwidthGBs;
      // one value per pair: the slowest of its channels and directions
      if (!cell.has(key) || v < cell.get(key)) cell.set(key, v);
      maxRank = Math.max(maxRank, l.rank, l.peer);
    }
    if (!cell.size) return empty(s, id, "no link row with a bandwidth");
    const n = maxRank + 1, size = Math.max(8, Math.min(40, Math.floor(560 / n)));
    const vals = Array.from(cell.values()), lo = Math.min(...vals), hi = Math.max(...vals);
    const svg = svgEl("svg", { width: 60 + n * size + 20, height: 40 + n * size + 20, "data-chart": id });
    svg.appendChild(svgEl("text", { x: 60, y: 14, class: "axis" }, "peer ->"));
    svg.appendChild(svgEl("text", { x: 0, y: 40 + size, class: "axis" }, "rank"));
    let k = 0;
    for (let r = 0; r < n; r++)
      for (let p = 0; p < n; p++) {
        const v = cell.get(r + ">" + p);
        const t = v === undefined ? null : hi > lo ? (v - lo) / (hi - lo) : 1;
        // slow: red, fast: green
        const color = t === null ? "#eee" : "hsl(" + Math.round(120 * t) + ",70%,50%)";
        const rect = svgEl("rect", { x: 60 + p * size, y: 30 + r * size, width: size - 1, height: size - 1, fill: color,
          class: v === undefined ? "nolink" : "link" });
        if (v !== undefined) {
          rect.appendChild(svgEl("title", {}, "rank " + r + " -> " + p + ": " + v.toFixed(3) + " GB/s"));
          k++;
        }
        svg.appendChild(rect);
      }
    s.appendChild(svg);
    s.appendChild(el("p", { class: "note" }, "min " + lo.toFixed(3) + " GB/s (red) .. max " + hi.toFixed(3) + " GB/s (green)"));
    marks[id] = k;
  }

  // ---- stuck collectives ----
  function hangs() {
    const id = "hang";
    const s = section(id, "Stuck collectives",
      "Per rank around the stuck collective, on aligned clocks (0: the first rank to post it): the end of the last collective it completed (grey), then waiting in the stuck one (red) or never posting it (hatched).");
    const hs = S.hangs || [];
    if (!hs.length) return empty(s, id, "no hang: every collective that was posted was posted by every rank");
    let k = 0;
    for (const h of hs) {
      s.appendChild(el("p", { class: "hang" }, "communicator " + h.commId + (h.name ? " (" + h.name + ")" : "") + ": " +
        h.func + " seq " + h.seq + "; never posted by rank " + (h.neverPosted.join(", ") || "none") +
        "; stuck: " + (h.stuck.join(", ") || "none")));
      const rows = h.ranks;
      let lo = 0, hi = 1;
      for (const r of rows) {
        if (r.lastEndUs != null) lo = Math.min(lo, r.lastEndUs);
        if (r.postedUs != null) hi = Math.max(hi, r.postedUs);
      }
      const span = Math.max(hi - lo, 1), end = hi + span * 0.3, rowH = 16, left = 170, width = W - left - 10;
      const xOf = (v) => left + ((v - lo) / (end - lo)) * width;
      const svg = svgEl("svg", { width: W, height: 30 + rows.length * rowH + 20, "data-chart": id });
      svg.appendChild(svgEl("line", { x1: xOf(0), x2: xOf(0), y1: 20, y2: 30 + rows.length * rowH, stroke: "#333",
        "stroke-dasharray": "3,3" }));
      svg.appendChild(svgEl("text", { x: xOf(0) + 3, y: 14, class: "axis" }, "first posted (0 us)"));
      rows.forEach((r, i) => {
        const y = 30 + i * rowH;
        svg.appendChild(svgEl("text", { x: 0, y: y + 11, class: "axis" }, "rank " + r.rank + " " + (r.host || "") + " " + r.state));
        const from = r.lastEndUs != null ? r.lastEndUs : lo;
        const to = r.postedUs != null ? r.postedUs : end;
        if (r.lastEndUs != null) {
          const g = svgEl("rect", { x: xOf(from), y: y, width: 3, height: rowH - 3, fill: "#888", class: "last" });
          svg.appendChild(g);
        }
        const bar = svgEl("rect", { x: xOf(Math.min(from, to)), y: y + 2, width: Math.max(2, xOf(to) - xOf(Math.min(from, to))),
          height: rowH - 7, fill: r.state === "neverPosted" ? "url(#hatch)" : "#bbb", class: "gap" });
        svg.appendChild(bar);
        if (r.postedUs != null) {
          const stuckTo = r.state === "finished" ? r.postedUs + span * 0.02 : end;
          svg.appendChild(svgEl("rect", { x: xOf(r.postedUs), y: y, width: Math.max(2, xOf(stuckTo) - xOf(r.postedUs)),
            height: rowH - 3, fill: r.state === "finished" ? "#2ca02c" : "#d62728", class: "stuck" }));
        }
        k++;
      });
      const defs = svgEl("defs");
      const pat = svgEl("pattern", { id: "hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse",
        patternTransform: "rotate(45)" });
      pat.appendChild(svgEl("rect", { width: 3, height: 6, fill: "#d62728" }));
      defs.appendChild(pat);
      svg.insertBefore(defs, svg.firstChild);
      s.appendChild(svg);
    }
    marks[id] = k;
  }

  function hosts() {
    const t = el("table", { class: "hosts", "data-table": "hosts" });
    const tr = el("tr");
    for (const h of ["host", "clock - reference (us)", "refinement (us)", "taken", "residual (us)", "collectives"])
      tr.appendChild(el("th", {}, h));
    t.appendChild(tr);
    for (const h of S.hosts || []) {
      const r = el("tr");
      for (const v of [h.host + (h.reference ? " (reference)" : ""), (h.clockOffsetNs / 1e3).toFixed(3),
        (h.refinedNs / 1e3).toFixed(3), h.refinementTaken ? "yes" : "no", (h.residualNs / 1e3).toFixed(3), h.collectives])
        r.appendChild(el("td", {}, String(v)));
      t.appendChild(r);
    }
    const s = section("hosts", "Hosts", "Each host's CLOCK_MONOTONIC placed on one timeline from its CLOCK_REALTIME anchors, refined from the collectives when they agree.");
    s.appendChild(t);
    marks.hosts = (S.hosts || []).length;
  }

  function main() {
    const summary = document.getElementById("summary");
    const nh = (S.hangs || []).length;
    const strag = [].concat(...(S.lateness || []).map((c) => c.outliers));
    summary.textContent = (nh ? nh + " stuck collective(s)" : "no hang") + "; " +
      (strag.length ? "straggler(s): rank " + strag.join(", ") : "no straggler") + "; " +
      (S.hosts || []).length + " host(s), " + (S.collectives || []).length + " collective rows.";
    const L = S.loss;
    if (L) summary.textContent += " Recording " + (L.complete ? "complete" : "INCOMPLETE") + ": " + L.eventsInTrace +
      " of " + L.eventsSeen + " events in the trace (" + L.eventsDropped + " dropped, " + L.eventsLostToWriteErrors +
      " lost to write errors; " + L.bytesLostToWriteErrors + " bytes lost).";
    hangs();
    lateness();
    times();
    bandwidth();
    links();
    hosts();
    window.NCCLSCOPE_DONE = true;
    // what was drawn, readable from the DOM (a headless browser's --dump-dom)
    document.body.setAttribute("data-marks", JSON.stringify(marks));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();
