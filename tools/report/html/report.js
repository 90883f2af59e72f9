// SPDX-License-Identifier: Apache-2.0
// ncclscope report.html: draws one `ncclscope report` from the summary.json
// object embedded in the page (<script type="application/json"
// id="ncclscope-summary">), with uPlot (vendored from npm at build time and
// embedded in the page: nothing is fetched when the page is viewed). Runs
// once, in the browser, on load.
//
// One section per question, the figures of summary.json unchanged (the
// tables show them as summary.txt does, each number cell carrying its exact
// value in data-v):
//   header       verdict tiles (hangs, stragglers, ranks, slowest link, peak
//                busbw, recording) and what the recording lost
//   hang         did a collective get stuck? the ranks around it (SVG)
//   mismatch     did a rank post another collective than the others? (table)
//   phases       where each rank's kernel time goes (NCCL 2.31+: initial
//                sync, compute, final sync), one stacked bar per rank (SVG)
//   tags         operations by the application's userTag (table)
//   comms        which communicators: name, id, ranks, hosts
//   busbw, time  how fast per message size: small multiples per function,
//                one line per communicator, legends with the values
//   lateness     which rank arrives late: median (bars) and p99 (dots) per
//                rank on a symmetric log axis, the latest ranks listed
//   links        which link is slow: fitted send links, rank x peer (SVG),
//                blocks of ranks beyond 64 ranks
//   collectives  nccl-tests style table, one block per communicator
//   hosts        the hosts' clocks
// What each section drew is counted in window.NCCLSCOPE_MARKS (section ->
// marks) and body[data-marks], for tests.
"use strict";
(function () {
  const marks = (window.NCCLSCOPE_MARKS = {});
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22"];
  const FONT = "12px system-ui, sans-serif";
  let S = {};
  let dataError = null;
  try {
    const holder = document.getElementById("ncclscope-summary");
    S = JSON.parse(holder ? holder.textContent : "{}") || {};
  } catch (e) {
    dataError = String(e);
  }
  window.NCCLSCOPE_SUMMARY = S;
  const arr = (v) => (Array.isArray(v) ? v : []);
  const num = (v) => (typeof v === "number" && isFinite(v) ? v : null);

  // ---- DOM ----
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
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
  function haveUPlot(s, id) {
    if (typeof uPlot === "function") return true;
    empty(s, id, "charts unavailable: this ncclscope was built without its chart library (npm was missing)");
    return false;
  }

  // ---- numbers ----
  const sig = (v) => String(Number(v.toPrecision(3)));
  const int = (v) => Math.round(v).toLocaleString("en-US");
  function fmtBytes(b) {
    if (num(b) === null) return "–";
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(b) >= 1024 && i < u.length - 1) (b /= 1024), i++;
    return sig(b) + " " + u[i];
  }
  // a time given in microseconds, in the unit that reads best
  function fmtUs(us) {
    if (num(us) === null) return "–";
    const a = Math.abs(us);
    if (a === 0) return "0";
    if (a < 1) return sig(us * 1e3) + " ns";
    if (a < 1e3) return sig(us) + " µs";
    if (a < 1e6) return sig(us / 1e3) + " ms";
    return sig(us / 1e6) + " s";
  }
  // a bandwidth given in GB/s (10^9 bytes per second, as nccl-tests)
  function fmtGBs(g) {
    if (num(g) === null) return "–";
    const a = Math.abs(g);
    if (a === 0) return "0";
    if (a >= 1) return sig(g) + " GB/s";
    if (a >= 1e-3) return sig(g * 1e3) + " MB/s";
    if (a >= 1e-6) return sig(g * 1e6) + " kB/s";
    return sig(g * 1e9) + " B/s";
  }
  const fixed = (v, d) => (num(v) === null ? "" : v.toFixed(d));
  function pow10(e) {
    return Number("1e" + e);
  }
  // ticks of a log10 axis over [lo, hi] (powers of ten; 2 and 5 between them on short ranges)
  function decadeTicks(lo, hi) {
    const a = Math.round(Math.log10(lo)), b = Math.round(Math.log10(hi));
    const out = [];
    for (let e = a; e <= b; e++) {
      out.push(pow10(e));
      if (b - a <= 2 && e < b) out.push(2 * pow10(e), 5 * pow10(e));
    }
    return out;
  }
  // a log10 scale's range: whole decades around the data
  function decadeRange(min, max) {
    let a = Math.floor(Math.log10(min)), b = Math.ceil(Math.log10(max));
    if (b <= a) b = a + 1;
    return [pow10(a), pow10(b)];
  }
  // ticks of a log2 byte axis over [lo, hi]: powers of two, at most `most` of them
  function byteTicks(lo, hi, most) {
    const a = Math.ceil(Math.log2(lo) - 1e-9), b = Math.floor(Math.log2(hi) + 1e-9);
    let step = 1;
    while ((b - a) / step + 1 > most) step++;
    const out = [];
    for (let e = a; e <= b; e += step) out.push(Math.pow(2, e));
    return out;
  }
  // ticks of a symmetric log axis (asinh, linear within 1 µs) over [lo, hi]
  function symlogTicks(lo, hi) {
    const out = [0];
    for (let e = 0; e <= 9; e++) {
      const v = pow10(e);
      if (v <= hi * 1.0001) out.push(v);
      if (-v >= lo * 1.0001) out.unshift(-v);
    }
    return out;
  }
  // an axis's tick labels (uPlot passes null for the ticks it leaves unlabelled)
  const labels = (f) => (u, vs) => vs.map((v) => (v === null || v === undefined ? "" : f(v)));
  // ticks at least minPx apart on scale `key` (keeps the first of a crowded run; 0 always)
  function thin(u, key, ticks, minPx) {
    const out = [];
    let last = null;
    const zero = ticks.indexOf(0) >= 0 ? u.valToPos(0, key) : null;
    for (const v of ticks) {
      const p = u.valToPos(v, key);
      if (v !== 0 && zero !== null && Math.abs(p - zero) < minPx) continue;
      if (last !== null && Math.abs(p - last) < minPx && v !== 0) continue;
      out.push(v);
      last = p;
    }
    return out;
  }
  const keepAll = (u, splits) => splits;
  const measure = document.createElement("canvas").getContext("2d");
  // an axis wide enough for its longest label
  function axisSize(font) {
    return (u, values) => {
      measure.font = font;
      let w = 0;
      for (const v of values || []) w = Math.max(w, measure.measureText(String(v)).width);
      return Math.ceil(w) + 16;
    };
  }

  // ---- communicators ----
  // every communicator summary.json names: id -> {id, name, nranks, ranks, hosts, rows, calls}
  function communicators() {
    const m = new Map();
    const get = (id) => {
      if (!m.has(id)) m.set(id, { id: id, name: "", nranks: 0, ranks: 0, hosts: new Set(), rows: 0, calls: 0,
        cross: null, color: null });
      return m.get(id);
    };
    for (const r of arr(S.collectives)) {
      const c = get(r.commId);
      c.nranks = Math.max(c.nranks, r.nranks || 0);
      c.ranks = Math.max(c.ranks, r.ranks || 0);
      c.rows++;
      c.calls += r.calls || 0;
    }
    for (const l of arr(S.lateness)) {
      const c = get(l.commId);
      if (l.name) c.name = l.name;
      c.nranks = Math.max(c.nranks, l.nranks || 0);
      c.ranks = Math.max(c.ranks, arr(l.ranks).length);
      for (const r of arr(l.ranks)) if (r.host) c.hosts.add(r.host);
    }
    for (const h of arr(S.hangs)) {
      const c = get(h.commId);
      if (h.name) c.name = h.name;
      for (const r of arr(h.ranks)) if (r.host) c.hosts.add(r.host);
    }
    for (const x of arr(S.crossRank)) {
      const c = get(x.commId);
      c.nranks = Math.max(c.nranks, x.nranks || 0);
      c.cross = x;
    }
    const list = Array.from(m.values()).sort((a, b) => b.nranks - a.nranks || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
      (a.id < b.id ? -1 : 1));
    list.forEach((c, i) => (c.color = palette[i % palette.length]));
    return { byId: m, list: list };
  }
  const C = communicators();
  function commLabel(id) {
    const c = C.byId.get(id);
    if (!c) return String(id);
    return (c.name || c.id) + " · " + c.nranks + " ranks";
  }

  // ---- header ----
  function tile(box, title, value, detail, level) {
    const t = el("div", { class: "tile " + (level || "") });
    t.appendChild(el("div", { class: "tile-title" }, title));
    t.appendChild(el("div", { class: "tile-value" }, value));
    if (detail) t.appendChild(el("div", { class: "tile-detail" }, detail));
    box.appendChild(t);
  }
  function fittedLinks() {
    return arr(S.slowestLinks).filter((l) => l.isSend && l.min && l.min.ok && num(l.min.bandwidthGBs) > 0 &&
      l.peer != null && l.peer >= 0 && l.rank != null && l.rank >= 0);
  }
  // what the recording lost: summary.json's "loss" object, else the processes' own counters
  function lossFigures() {
    const L = S.loss && typeof S.loss === "object" ? S.loss : null;
    if (L) {
      const lost = (num(L.eventsDropped) || 0) + (num(L.eventsLostToWriteErrors) || 0) +
        (num(L.eventsLostInDamagedBlocks) || 0);
      return { from: "loss", seen: num(L.eventsSeen), inTrace: num(L.eventsInTrace), lost: lost,
        dropped: num(L.eventsDropped), writeLost: num(L.eventsLostToWriteErrors),
        damagedLost: num(L.eventsLostInDamagedBlocks), bytesLost: num(L.bytesLostToWriteErrors),
        damaged: num(L.blocksDamaged), missing: num(L.blocksMissing), noEnd: num(L.processesWithoutEnd),
        steps: num(L.stepsNotAnalysed), complete: L.complete === true ? true : L.complete === false ? false : null };
    }
    const pc = arr(S.processCounters);
    let seen = 0, dropped = 0, bytesLost = 0, writeErrors = 0, noEnd = 0;
    for (const p of pc) {
      if (p.missing) {
        noEnd++;
        continue;
      }
      seen += num(p.events) || 0;
      dropped += num(p.dropped) || 0;
      bytesLost += num(p.bytesLost) || 0;
      writeErrors += num(p.writeErrors) || 0;
    }
    return { from: "processCounters", seen: seen, dropped: dropped, lost: dropped, bytesLost: bytesLost,
      writeErrors: writeErrors, noEnd: noEnd, steps: num(S.stepsNotAnalysed), processes: pc.length,
      complete: dropped === 0 && bytesLost === 0 && writeErrors === 0 && noEnd === 0 };
  }
  function header() {
    const box = document.getElementById("summary");
    if (dataError) {
      box.appendChild(el("p", { class: "hang" }, "the page's data could not be read: " + dataError));
      return;
    }
    const tiles = el("div", { class: "tiles" });
    box.appendChild(tiles);
    const hs = arr(S.hangs);
    tile(tiles, "Hangs", hs.length ? hs.length + " stuck" : "none",
      hs.length ? hs.map((h) => h.func + " #" + h.seq + " on " + commLabel(h.commId)).join("; ") : "every posted collective completed",
      hs.length ? "bad" : "good");
    const mm = [];
    for (const c of arr(S.mismatches)) for (const r of arr(c.ranks)) mm.push([r, commLabel(c.commId)]);
    tile(tiles, "Mismatches", mm.length ? "rank " + Array.from(new Set(mm.map((x) => x[0].rank))).join(", ") : "none",
      mm.length ? mm.map((x) => "rank " + x[0].rank + " " + x[0].kind + " at #" + x[0].collective + " in " + x[1]).join("; ") :
        "every rank posted the same collectives", mm.length ? "bad" : "good");
    const strag = [];
    for (const l of arr(S.lateness)) for (const r of arr(l.outliers)) strag.push([r, commLabel(l.commId)]);
    tile(tiles, "Stragglers", strag.length ? "rank " + Array.from(new Set(strag.map((x) => x[0]))).join(", ") : "none",
      strag.length ? strag.map((x) => "rank " + x[0] + " in " + x[1]).join("; ") : "no rank arrives late consistently",
      strag.length ? "warn" : "good");
    const maxRanks = C.list.length ? C.list[0].nranks : 0;
    const inc = arr(S.communicatorsIncomplete);
    tile(tiles, "Job", maxRanks + " ranks", C.list.length + " communicator(s), " + arr(S.hosts).length + " host(s)" +
      inc.map((c) => "; no record of rank " + arr(c.ranksWithoutRecord).join(", ") + " in " + commLabel(c.commId)).join(""),
      inc.length ? "warn" : "");
    const fl = fittedLinks();
    if (fl.length) {
      const w = fl.reduce((a, b) => (b.min.bandwidthGBs < a.min.bandwidthGBs ? b : a));
      const fast = Math.max(...fl.map((l) => l.min.bandwidthGBs));
      tile(tiles, "Slowest fitted link", fmtGBs(w.min.bandwidthGBs), "rank " + w.rank + " → " + w.peer + " · channel " +
        w.channel + " · " + commLabel(w.commId) + (w.min.bandwidthGBs < 0.8 * fast ? " · fastest " + fmtGBs(fast) : ""),
        w.min.bandwidthGBs < 0.8 * fast ? "warn" : "");
    } else {
      tile(tiles, "Slowest fitted link", "none", "no send link had enough sizes for a fit");
    }
    let peak = null;
    for (const r of arr(S.collectives)) if (num(r.busbwGBs) !== null && (!peak || r.busbwGBs > peak.busbwGBs)) peak = r;
    if (peak)
      tile(tiles, "Peak bus bandwidth", fmtGBs(peak.busbwGBs), peak.func + " " + fmtBytes(peak.bytes) + ", " + commLabel(peak.commId));
    const L = lossFigures();
    const lostShare = L.seen ? L.lost / L.seen : 0;
    tile(tiles, "Recording", L.complete === false ? (L.seen ? (100 * lostShare).toFixed(lostShare < 0.01 ? 2 : 1) + " % lost" : "incomplete") :
      L.complete === true ? "complete" : "unknown",
      L.noEnd ? L.noEnd + " process(es) without an end" + (L.from === "processCounters" ? " (no counters)" : "") :
      L.seen !== null ? int(L.seen) + " events seen" : "", L.complete === false ? "bad" : L.complete === true ? "good" : "");
    // the loss line
    const p = el("p", { class: "loss", "data-loss": L.from });
    const parts = [];
    if (L.from === "loss") {
      parts.push("events seen " + (L.seen === null ? "?" : int(L.seen)), "in the trace " + (L.inTrace === null ? "?" : int(L.inTrace)),
        "lost " + int(L.lost) + (L.writeLost !== null ? " (dropped " + int(L.dropped || 0) + ", to write errors " + int(L.writeLost) +
          (L.damagedLost ? ", in damaged blocks " + int(L.damagedLost) : "") + ")" : ""),
        "bytes lost to write errors " + (L.bytesLost === null ? "?" : int(L.bytesLost)),
        "blocks damaged " + (L.damaged === null ? "?" : int(L.damaged)) + ", missing " + (L.missing === null ? "?" : int(L.missing)),
        "processes without an end marker " + (L.noEnd === null ? "?" : int(L.noEnd)),
        "ProxySteps not analysed " + (L.steps === null ? "?" : int(L.steps)));
      p.textContent = "Recording: " + parts.join(" · ") + ".";
    } else {
      p.textContent = "Recording (the processes' own counters; this summary.json has no loss figures): events " + int(L.seen) +
        " · dropped " + int(L.dropped) + " · write errors " + int(L.writeErrors) + " · bytes lost " + int(L.bytesLost) +
        " · processes without counters (no clean end) " + int(L.noEnd) + " of " + L.processes + ".";
    }
    box.appendChild(p);
  }

  // ---- stuck collectives ----
  const HANG_ROWS = 64;
  function hangs() {
    const id = "hang";
    const hs = arr(S.hangs);
    const s = section(id, "Stuck collectives",
      hs.length ? "Per rank around the stuck collective, on aligned clocks (0: the first rank to post it): the end of the last collective it completed (grey tick), then waiting in the stuck one (red), never posting it (hatched) or finishing it (green)." : null);
    if (!hs.length) return empty(s, id, "no hang: every collective that was posted was posted by every rank");
    let k = 0;
    const W = 900;
    hs.forEach((h, hi) => {
      s.appendChild(el("p", { class: "hang" }, commLabel(h.commId) + " (" + h.commId + "): " + h.func + " seq " + h.seq +
        "; never posted by rank " + (arr(h.neverPosted).join(", ") || "none") + "; stuck: " + (arr(h.stuck).join(", ") || "none")));
      const order = { neverPosted: 0, stuck: 1 };
      const all = arr(h.ranks).slice().sort((a, b) => (order[a.state] ?? 2) - (order[b.state] ?? 2) || a.rank - b.rank);
      const rows = all.slice(0, HANG_ROWS);
      let lo = 0, hiT = 1;
      for (const r of rows) {
        if (r.lastEndUs != null) lo = Math.min(lo, r.lastEndUs);
        if (r.postedUs != null) hiT = Math.max(hiT, r.postedUs);
      }
      const span = Math.max(hiT - lo, 1), end = hiT + span * 0.3, rowH = 16, left = 220, width = W - left - 10;
      const xOf = (v) => left + ((v - lo) / (end - lo)) * width;
      const svg = svgEl("svg", { width: W, height: 30 + rows.length * rowH + 24, "data-chart": id });
      const defs = svgEl("defs");
      const pat = svgEl("pattern", { id: "hatch" + hi, width: 6, height: 6, patternUnits: "userSpaceOnUse",
        patternTransform: "rotate(45)" });
      pat.appendChild(svgEl("rect", { width: 3, height: 6, fill: "#d62728" }));
      defs.appendChild(pat);
      svg.appendChild(defs);
      svg.appendChild(svgEl("line", { x1: xOf(0), x2: xOf(0), y1: 20, y2: 30 + rows.length * rowH, stroke: "#333",
        "stroke-dasharray": "3,3" }));
      svg.appendChild(svgEl("text", { x: xOf(0) + 3, y: 14, class: "axis" }, "first posted (0 µs)"));
      svg.appendChild(svgEl("text", { x: left, y: 30 + rows.length * rowH + 16, class: "axis" }, fmtUs(lo)));
      svg.appendChild(svgEl("text", { x: xOf(hiT), y: 30 + rows.length * rowH + 16, class: "axis", "text-anchor": "middle" },
        fmtUs(hiT)));
      rows.forEach((r, i) => {
        const y = 30 + i * rowH;
        svg.appendChild(svgEl("text", { x: 0, y: y + 11, class: "axis" }, "rank " + r.rank + " " + (r.host || "") + " " + r.state));
        const from = r.lastEndUs != null ? r.lastEndUs : lo;
        const to = r.postedUs != null ? r.postedUs : end;
        if (r.lastEndUs != null) svg.appendChild(svgEl("rect", { x: xOf(from), y: y, width: 3, height: rowH - 3, fill: "#888" }));
        svg.appendChild(svgEl("rect", { x: xOf(Math.min(from, to)), y: y + 2,
          width: Math.max(2, xOf(to) - xOf(Math.min(from, to))), height: rowH - 7,
          fill: r.state === "neverPosted" ? "url(#hatch" + hi + ")" : "#ccc" }));
        if (r.postedUs != null) {
          const stuckTo = r.state === "finished" ? r.postedUs + span * 0.02 : end;
          svg.appendChild(svgEl("rect", { x: xOf(r.postedUs), y: y, width: Math.max(2, xOf(stuckTo) - xOf(r.postedUs)),
            height: rowH - 3, fill: r.state === "finished" ? "#2ca02c" : "#d62728" }));
        }
        k++;
      });
      s.appendChild(svg);
      if (all.length > rows.length) {
        const rest = {};
        for (const r of all.slice(rows.length)) rest[r.state] = (rest[r.state] || 0) + 1;
        s.appendChild(el("p", { class: "note" }, "and " + (all.length - rows.length) + " more ranks: " +
          Object.keys(rest).map((st) => rest[st] + " " + st).join(", ")));
      }
    });
    marks[id] = k;
  }

  // ---- communicators ----
  function comms() {
    const id = "comms";
    const s = section(id, "Communicators",
      "Each communicator the traces name: its name as NCCL gave it, its id, its size, the ranks traced, the hosts they ran on, and which rank arrived last most often at its collectives.");
    if (!C.list.length) return empty(s, id, "no communicator with a collective");
    const t = el("table", { "data-table": "comms" });
    const tr = el("tr");
    for (const h of ["communicator", "commId", "nranks", "ranks traced", "hosts", "collective rows", "calls", "compared", "last to arrive"])
      tr.appendChild(el("th", {}, h));
    t.appendChild(tr);
    for (const c of C.list) {
      const row = el("tr", { "data-comm": c.id });
      const name = el("td", {});
      name.appendChild(el("span", { class: "swatch", style: "background:" + c.color }));
      name.appendChild(document.createTextNode(c.name || "(unnamed)"));
      row.appendChild(name);
      const x = c.cross;
      for (const v of [c.id, c.nranks, c.ranks, c.hosts.size || "", c.rows, int(c.calls), x ? int(x.compared) : "",
        x && x.lastRank != null && x.lastRank >= 0 ? "rank " + x.lastRank + " (" + Math.round(100 * x.lastShare) + " %)" : ""])
        row.appendChild(el("td", {}, String(v)));
      t.appendChild(row);
    }
    s.appendChild(t);
    marks[id] = C.list.length;
  }

  // ---- the nccl-tests style table ----
  // table cells: summary.json's value, at most 2 decimals (small bandwidths: 2 significant digits)
  function cellUs(v) {
    return num(v) === null ? "" : String(Number(v.toFixed(2)));
  }
  function cellGBs(v) {
    if (num(v) === null) return "";
    return Math.abs(v) >= 0.01 || v === 0 ? v.toFixed(2) : String(Number(v.toPrecision(2)));
  }
  const COLS = [
    ["size (B)", "bytes", (v) => String(v)], ["count", "count", (v) => String(v)], ["type", "dtype", null],
    ["algo", "algo", null], ["proto", "proto", null], ["ranks", "ranks", (v) => String(v)],
    ["calls/rank", null, null], ["warm-up/rank", null, null],
    ["time (µs)", "timeUs", cellUs], ["p50 (µs)", "p50Us", cellUs], ["p99 (µs)", "p99Us", cellUs],
    ["algbw (GB/s)", "algbwGBs", cellGBs], ["busbw (GB/s)", "busbwGBs", cellGBs],
    ["busbw p50", "busbwP50GBs", cellGBs], ["busbw p99", "busbwP99GBs", cellGBs], ["basis", "basis", null],
  ];
  // derived cells (no data-v): calls per rank and warm-up calls per rank, as summary.txt
  function derived(r, head) {
    if (head === "calls/rank")
      return r.callsPerRankMin === r.callsPerRankMax ? String(r.callsPerRankMin) : r.callsPerRankMin + ".." + r.callsPerRankMax;
    return r.ranks ? String(Math.floor((r.warmupCalls || 0) / r.ranks)) : "";
  }
  function collectives() {
    const id = "collectives";
    const s = section(id, "Collectives (nccl-tests style)",
      "One block per communicator; one row per function, size, algorithm and protocol. time: mean over the timed calls (each rank's first min(5, calls/4) calls are warm-up, left out); algbw = size / time, busbw as nccl-tests computes it; busbw p50/p99 from the median and the 99th-percentile time. The same numbers as summary.txt.");
    const rows = arr(S.collectives);
    if (!rows.length) return empty(s, id, "no collective");
    let n = 0;
    for (const c of C.list) {
      const mine = rows.filter((r) => r.commId === c.id).sort((a, b) => (a.func < b.func ? -1 : a.func > b.func ? 1 : 0) ||
        a.bytes - b.bytes || (a.algo < b.algo ? -1 : 1));
      if (!mine.length) continue;
      const h = el("h3", { "data-comm": c.id });
      h.appendChild(el("span", { class: "swatch", style: "background:" + c.color }));
      h.appendChild(document.createTextNode((c.name || "(unnamed)") + " · " + c.nranks + " ranks · " + c.id));
      s.appendChild(h);
      const t = el("table", { class: "nccltests", "data-table": "collectives" });
      const tr = el("tr");
      tr.appendChild(el("th", {}, "collective"));
      for (const col of COLS) tr.appendChild(el("th", {}, col[0]));
      t.appendChild(tr);
      let prev = null;
      for (const r of mine) {
        const row = el("tr", { "data-comm": r.commId, "data-func": r.func, "data-bytes": r.bytes, "data-algo": r.algo,
          "data-proto": r.proto, class: prev !== null && prev !== r.func ? "first" : null });
        prev = r.func;
        row.appendChild(el("td", {}, r.func));
        for (const [head, key, f] of COLS) {
          if (key === null) {
            row.appendChild(el("td", {}, derived(r, head)));
            continue;
          }
          const v = r[key];
          const text = f ? f(v) : key === "dtype" && typeof v === "string" ? v.replace(/^nccl/, "") : String(v ?? "");
          row.appendChild(el("td", f ? { "data-key": key, "data-v": v === null || v === undefined ? "" : String(v) } : {}, text));
        }
        t.appendChild(row);
        n++;
      }
      s.appendChild(t);
    }
    marks[id] = n;
  }

  // ---- per-size small multiples ----
  // rows of one function: comm -> [rows by size] (one per size: the row with the most timed calls)
  function byFunc() {
    const funcs = new Map();
    for (const r of arr(S.collectives)) {
      if (!r.timedCalls || !r.bytes) continue;
      if (!funcs.has(r.func)) funcs.set(r.func, new Map());
      const byComm = funcs.get(r.func);
      if (!byComm.has(r.commId)) byComm.set(r.commId, new Map());
      const bySize = byComm.get(r.commId);
      const prev = bySize.get(r.bytes);
      if (!prev || r.timedCalls > prev.timedCalls) bySize.set(r.bytes, r);
    }
    return new Map(Array.from(funcs.entries()).sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  }

  // A grid of uPlot charts, one per function, sharing the axes' ranges.
  // lines: [[suffix, pick(row) -> value, dash]]; fmt formats the values; unit names the y axis.
  function sizeGrid(id, s, lines, fmt, yLabel) {
    const funcs = byFunc();
    if (!funcs.size) return empty(s, id, "no timed collective with a size");
    if (!haveUPlot(s, id)) return;
    let xmin = Infinity, xmax = 0, ymin = Infinity, ymax = 0;
    for (const byComm of funcs.values())
      for (const bySize of byComm.values())
        for (const [b, r] of bySize) {
          xmin = Math.min(xmin, b);
          xmax = Math.max(xmax, b);
          for (const [, pick] of lines) {
            const v = num(pick(r));
            if (v !== null && v > 0) (ymin = Math.min(ymin, v)), (ymax = Math.max(ymax, v));
          }
        }
    if (!(ymax > 0)) return empty(s, id, "no positive value to draw");
    const xr = [xmin / 1.5, xmax * 1.5], yr = decadeRange(ymin, ymax);
    const grid = el("div", { class: "grid" });
    s.appendChild(grid);
    const width = Math.max(300, Math.floor(((document.getElementById("charts").clientWidth || 1100) - 40) / 3));
    let n = 0;
    for (const [func, byComm] of funcs) {
      const panel = el("div", { class: "panel", "data-func": func });
      grid.appendChild(panel);
      panel.appendChild(el("h4", {}, func));
      const xs = Array.from(new Set([].concat(...Array.from(byComm.values()).map((m) => Array.from(m.keys()))))).sort((a, b) => a - b);
      const data = [xs];
      const series = [{}];
      const legendRows = [];
      const comms = C.list.filter((c) => byComm.has(c.id));
      for (const c of comms) {
        const bySize = byComm.get(c.id);
        for (const [suffix, pick, dash] of lines) {
          const ys = xs.map((b) => (bySize.has(b) ? num(pick(bySize.get(b))) : null)).map((v) => (v !== null && v > 0 ? v : null));
          n += ys.filter((v) => v !== null).length;
          data.push(ys);
          series.push({ label: (c.name || c.id) + suffix, stroke: c.color, width: 1.5, dash: dash, spanGaps: true,
            points: { show: true, size: 5, fill: c.color } });
          legendRows.push({ comm: c, suffix: suffix, ys: ys });
        }
      }
      const div = el("div", { class: "chart", "data-chart": id });
      panel.appendChild(div);
      const legend = el("table", { class: "legend" });
      panel.appendChild(legend);
      const at = el("th", { colspan: 2 });
      const head = el("tr");
      head.appendChild(at);
      legend.appendChild(head);
      const cells = legendRows.map((lr) => {
        const tr = el("tr");
        const name = el("td", {});
        name.appendChild(el("span", { class: "swatch" + (lr.suffix.indexOf("p99") >= 0 ? " dashed" : ""),
          style: "background:" + lr.comm.color }));
        name.appendChild(document.createTextNode((lr.comm.name || lr.comm.id) + " (" + lr.comm.nranks + ")" + lr.suffix));
        tr.appendChild(name);
        const v = el("td", { class: "value" });
        tr.appendChild(v);
        legend.appendChild(tr);
        return v;
      });
      // the legend shows the values at the size under the cursor, else at the largest size
      const show = (i) => {
        if (i === null || i === undefined || i < 0 || i >= xs.length) i = xs.length - 1;
        at.textContent = "at " + fmtBytes(xs[i]);
        legendRows.forEach((lr, k) => (cells[k].textContent = lr.ys[i] === null ? "–" : fmt(lr.ys[i])));
      };
      show(null);
      const yTicks = decadeTicks(yr[0], yr[1]);
      new uPlot({
        width: width, height: 220, legend: { show: false },
        cursor: { drag: { x: false, y: false }, points: { size: 7 } },
        scales: { x: { time: false, distr: 3, log: 2, range: () => xr }, y: { distr: 3, log: 10, range: () => yr } },
        axes: [
          { label: "message size", labelSize: 18, font: FONT, labelFont: FONT, size: 30,
            splits: () => byteTicks(xr[0], xr[1], Math.max(3, Math.floor(width / 70))), filter: keepAll,
            values: labels(fmtBytes) },
          { label: yLabel, labelSize: 18, font: FONT, labelFont: FONT, splits: (u) => thin(u, "y", yTicks, 14), filter: keepAll, values: labels(fmt),
            size: axisSize(FONT) },
        ],
        series: series,
        hooks: { setCursor: [(u) => show(u.cursor.idx)] },
      }, data, div);
    }
    marks[id] = n;
  }

  function bandwidth() {
    const s = section("busbw", "Bus bandwidth by message size",
      "nccl-tests' busBw (from the mean call time) per function, one line per communicator; log axes shared by the panels. The legend gives the values at the size under the cursor (else at the largest size).");
    sizeGrid("busbw", s, [["", (r) => r.busbwGBs, undefined]], fmtGBs, "bus bandwidth");
  }
  function times() {
    const s = section("time", "Collective time by message size",
      "The time of one call per function, p50 (solid) and p99 (dashed) over the timed calls, one colour per communicator; log axes shared by the panels.");
    sizeGrid("time", s, [[" p50", (r) => r.p50Us, undefined], [" p99", (r) => r.p99Us, [5, 4]]], fmtUs, "time per call");
  }

  // ---- lateness ----
  function lateness() {
    const id = "lateness";
    const s = section(id, "Lateness per rank",
      "How late each rank arrives at a communicator's collectives: its arrival minus the collective's median arrival, on clocks aligned across hosts. Bars: the rank's median; dots: its p99 (symmetric log axis: linear within ±1 µs); red: a straggler. The legend gives the rank under the cursor, else the latest one.");
    const comms = arr(S.lateness).filter((c) => arr(c.ranks).length);
    if (!comms.length) return empty(s, id, "no collective was seen by two or more ranks");
    if (!haveUPlot(s, id)) return;
    comms.sort((a, b) => b.nranks - a.nranks || (a.commId < b.commId ? -1 : 1));
    let n = 0;
    const full = Math.max(560, (document.getElementById("charts").clientWidth || 1100) - 360);
    for (const c of comms) {
      const wrap = el("div", { class: "late", "data-comm": c.commId });
      s.appendChild(wrap);
      const out = new Set(arr(c.outliers));
      const h = el("h3", {});
      const ci = C.byId.get(c.commId);
      h.appendChild(el("span", { class: "swatch", style: "background:" + (ci ? ci.color : "#999") }));
      h.appendChild(document.createTextNode(commLabel(c.commId) + " · " + c.collectives + " collectives · " +
        (out.size ? "straggler(s): rank " + Array.from(out).join(", ") : "no straggler")));
      wrap.appendChild(h);
      const rows = arr(c.ranks).slice().sort((a, b) => a.rank - b.rank);
      const x = rows.map((r) => r.rank);
      const med = rows.map((r) => (out.has(r.rank) ? null : num(r.medianUs)));
      const medOut = rows.map((r) => (out.has(r.rank) ? num(r.medianUs) : null));
      const p99 = rows.map((r) => num(r.p99Us));
      let lo = 0, hi = 1;
      for (const r of rows) for (const v of [num(r.medianUs), num(r.p99Us)]) if (v !== null) (lo = Math.min(lo, v)), (hi = Math.max(hi, v));
      const yr = [lo < 0 ? -pow10(Math.ceil(Math.log10(-lo))) : 0, pow10(Math.ceil(Math.log10(hi)))];
      const yTicks = symlogTicks(yr[0], yr[1]);
      const side = el("div", { class: "side" });
      const div = el("div", { class: "chart", "data-chart": id });
      const body = el("div", { class: "row" });
      body.appendChild(div);
      body.appendChild(side);
      wrap.appendChild(body);
      // the legend: the rank under the cursor, else the latest
      const legend = el("table", { class: "legend" });
      side.appendChild(legend);
      const latest = rows.reduce((a, r, i) => (num(r.medianUs) !== null && (a < 0 || r.medianUs > rows[a].medianUs) ? i : a), -1);
      const show = (i) => {
        if (i === null || i === undefined || i < 0 || i >= rows.length) i = latest;
        legend.textContent = "";
        if (i < 0) return;
        const r = rows[i];
        const add = (k, v, color) => {
          const tr = el("tr");
          const td = el("td", {});
          if (color) td.appendChild(el("span", { class: "swatch", style: "background:" + color }));
          td.appendChild(document.createTextNode(k));
          tr.appendChild(td);
          tr.appendChild(el("td", { class: "value" }, v));
          legend.appendChild(tr);
        };
        add("rank", r.rank + (r.host ? " on " + r.host : "") + (out.has(r.rank) ? " (straggler)" : ""));
        add("median", fmtUs(r.medianUs), out.has(r.rank) ? "#d62728" : "#1f77b4");
        add("p99", fmtUs(r.p99Us), "#ff7f0e");
        add("last to arrive", (r.lastCount ?? "?") + " of " + (r.collectives ?? "?"));
      };
      show(null);
      // the latest ranks, for communicators too wide to read rank by rank
      const top = rows.slice().filter((r) => num(r.medianUs) !== null).sort((a, b) => b.medianUs - a.medianUs).slice(0, 8);
      const t = el("table", { class: "top", "data-table": "latest" });
      const tr = el("tr");
      for (const hh of ["latest ranks", "host", "median", "p99"]) tr.appendChild(el("th", {}, hh));
      t.appendChild(tr);
      for (const r of top) {
        const row = el("tr", { class: out.has(r.rank) ? "strag" : null });
        for (const v of [r.rank, r.host || "", fmtUs(r.medianUs), fmtUs(r.p99Us)]) row.appendChild(el("td", {}, String(v)));
        t.appendChild(row);
      }
      side.appendChild(t);
      const bars = uPlot.paths.bars({ size: [0.8, 40, 1] });
      const xr = [x[0] - 0.5, x[x.length - 1] + 0.5];
      new uPlot({
        width: comms.length > 1 && c !== comms[0] ? Math.min(full, 640) : full, height: 260, legend: { show: false },
        cursor: { drag: { x: false, y: false }, points: { show: false } },
        scales: { x: { time: false, range: () => xr }, y: { distr: 4, asinh: 1, range: () => yr } },
        axes: [
          { label: "rank", labelSize: 18, font: FONT, labelFont: FONT, size: 30,
            incrs: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
            values: (u, vs) => vs.map((v) => (Number.isInteger(v) ? String(v) : "")) },
          { label: "arrival − median", labelSize: 18, font: FONT, labelFont: FONT, splits: (u) => thin(u, "y", yTicks, 22),
            filter: keepAll, values: labels(fmtUs), size: axisSize(FONT) },
        ],
        series: [{},
          { label: "median", paths: bars, points: { show: false }, stroke: "#1f77b4", fill: "#1f77b4a0" },
          { label: "straggler median", paths: bars, points: { show: false }, stroke: "#d62728", fill: "#d62728" },
          { label: "p99", paths: () => null, stroke: "#ff7f0e",
            points: { show: true, size: rows.length > 256 ? 3 : 6, fill: "#ff7f0e", stroke: "#ff7f0e" } }],
        hooks: { setCursor: [(u) => show(u.cursor.idx)] },
      }, [x, med, medOut, p99], div);
      n += x.length;
    }
    marks[id] = n;
    marks[id + ".stragglers"] = [].concat(...comms.map((c) => arr(c.outliers))).length;
  }

  // ---- link matrix ----
  const MATRIX_MAX = 64; // beyond: blocks of ranks
  // a colour from slow (red) to fast (green), t in [0, 1]
  const heat = (t) => "hsl(" + Math.round(5 + 125 * t) + ",65%," + Math.round(48 - 8 * t) + "%)";
  function links() {
    const id = "links";
    const fitted = fittedLinks();
    const ranked = num(S.rankedLinks);
    const listed = arr(S.slowestLinks).length, others = arr(S.otherLinks).length;
    const s = section(id, "Link matrix: fitted send links",
      "Each cell: the send link from a rank (row) to a peer (column) of one communicator, coloured by its bandwidth against the fastest one's, fitted in MIN mode (time = latency + size / bandwidth through the fastest step of each size, summary.txt's \"slowest links\"); a pair with several channels shows its slowest. Grey: no fitted send link in summary.json. Receive waits, all-channel aggregates and links without a fit (summary.json otherLinks) are not drawn.");
    s.appendChild(el("p", { class: "note", "data-links-shown": fitted.length },
      "summary.json lists " + listed + (ranked !== null ? " of the " + ranked + " fitted send links" : " fitted send links") +
      (ranked !== null && ranked > listed ? " (the slowest; `ncclscope report --links " + ranked + "` lists them all)" : "") +
      (others ? ", and " + others + " other link rows that are not drawn" : "") + "."));
    if (!fitted.length) return empty(s, id, "no fitted send link: a fit needs steps of 3 sizes seen 4 times each, spanning 4x");
    const byComm = new Map();
    for (const l of fitted) {
      if (!byComm.has(l.commId)) byComm.set(l.commId, []);
      byComm.get(l.commId).push(l);
    }
    let k = 0;
    for (const c of C.list.filter((c) => byComm.has(c.id)).concat(Array.from(byComm.keys()).filter((id) => !C.byId.has(id)).map((id) => ({ id: id, nranks: 0 })))) {
      const ls = byComm.get(c.id);
      let n = c.nranks || 0;
      for (const l of ls) n = Math.max(n, l.rank + 1, l.peer + 1);
      const block = n <= MATRIX_MAX ? 1 : Math.pow(2, Math.ceil(Math.log2(n / MATRIX_MAX)));
      const g = Math.ceil(n / block);
      // one cell per (rank block, peer block): its slowest link
      const cells = new Map();
      for (const l of ls) {
        const key = Math.floor(l.rank / block) + ">" + Math.floor(l.peer / block);
        const cur = cells.get(key);
        if (!cur) cells.set(key, { slow: l, links: [l] });
        else {
          cur.links.push(l);
          if (l.min.bandwidthGBs < cur.slow.min.bandwidthGBs) cur.slow = l;
        }
      }
      const vals = ls.map((l) => l.min.bandwidthGBs), lo = Math.min(...vals), hi = Math.max(...vals);
      const wrap = el("div", { class: "matrix", "data-comm": c.id });
      s.appendChild(wrap);
      wrap.appendChild(el("h3", {}, commLabel(c.id) + " · " + ls.length + " fitted send link(s)" +
        (block > 1 ? " · cells of " + block + " × " + block + " ranks" : "")));
      const size = Math.max(6, Math.min(36, Math.floor(640 / g)));
      const left = 64, top = 56, every = Math.pow(2, Math.ceil(Math.log2(Math.max(1, 24 / size))));
      const svg = svgEl("svg", { width: left + Math.max(g * size, 300) + 20, height: top + g * size + 76, "data-chart": id,
        "data-block": block, "data-n": n });
      svg.appendChild(svgEl("text", { x: left + (g * size) / 2, y: 14, class: "axis title", "text-anchor": "middle" },
        "receiving peer" + (block > 1 ? " (first rank of each block)" : "")));
      svg.appendChild(svgEl("text", { x: 12, y: top + (g * size) / 2, class: "axis title", "text-anchor": "middle",
        transform: "rotate(-90 12 " + (top + (g * size) / 2) + ")" }, "sending rank" + (block > 1 ? " (block)" : "")));
      for (let i = 0; i < g; i += every) {
        const label = String(i * block);
        svg.appendChild(svgEl("text", { x: left + i * size + size / 2, y: top - 6, class: "axis", "text-anchor": "middle" }, label));
        svg.appendChild(svgEl("text", { x: left - 4, y: top + i * size + size / 2 + 4, class: "axis", "text-anchor": "end" }, label));
      }
      svg.appendChild(svgEl("rect", { x: left, y: top, width: g * size, height: g * size, fill: "#f1f1f1" }));
      if (g <= 32)
        for (let i = 0; i <= g; i++) {
          svg.appendChild(svgEl("line", { x1: left, x2: left + g * size, y1: top + i * size, y2: top + i * size, stroke: "#fff" }));
          svg.appendChild(svgEl("line", { y1: top, y2: top + g * size, x1: left + i * size, x2: left + i * size, stroke: "#fff" }));
        }
      for (const [key, cell] of cells) {
        const [rb, pb] = key.split(">").map(Number);
        const v = cell.slow.min.bandwidthGBs;
        const t = Math.max(0, Math.min(1, (v / hi - 0.5) / 0.5));
        const attrs = { x: left + pb * size, y: top + rb * size, width: Math.max(1, size - 1), height: Math.max(1, size - 1),
          fill: heat(t), class: "link", "data-comm": c.id, "data-gbs": String(v), "data-links": cell.links.length,
          "data-rank": cell.slow.rank, "data-peer": cell.slow.peer, "data-channel": cell.slow.channel };
        if (block > 1) {
          attrs["data-rank-block"] = rb * block;
          attrs["data-peer-block"] = pb * block;
        }
        const rect = svgEl("rect", attrs);
        const what = cell.links.map((l) => "rank " + l.rank + " → " + l.peer + " channel " + l.channel + ": " +
          fmtGBs(l.min.bandwidthGBs) + ", latency " + fmtUs(l.min.latencyUs) + ", R² " + fixed(l.min.r2, 3));
        rect.appendChild(svgEl("title", {}, (block > 1 ? "ranks " + rb * block + "–" + (rb * block + block - 1) + " → " +
          pb * block + "–" + (pb * block + block - 1) + ", slowest of " + cell.links.length + ":\n" : "") + what.slice(0, 12).join("\n") +
          (what.length > 12 ? "\n…" : "")));
        svg.appendChild(rect);
        if (size >= 30)
          svg.appendChild(svgEl("text", { x: left + pb * size + size / 2, y: top + rb * size + size / 2 + 4, class: "cell",
            "text-anchor": "middle" }, sig(v)));
        k++;
      }
      // the colour scale
      const sy = top + g * size + 22, sw = Math.max(300, g * size);
      const defs = svgEl("defs");
      const grad = svgEl("linearGradient", { id: "heat-" + k });
      for (let i = 0; i <= 10; i++) grad.appendChild(svgEl("stop", { offset: i * 10 + "%", "stop-color": heat(i / 10) }));
      defs.appendChild(grad);
      svg.appendChild(defs);
      svg.appendChild(svgEl("rect", { x: left, y: sy, width: sw, height: 10, fill: "url(#heat-" + k + ")" }));
      svg.appendChild(svgEl("text", { x: left, y: sy + 24, class: "axis" }, "≤ 50 % of the fastest (" + fmtGBs(hi / 2) + ")"));
      svg.appendChild(svgEl("text", { x: left + sw, y: sy + 24, class: "axis", "text-anchor": "end" }, "fastest " + fmtGBs(hi)));
      svg.appendChild(svgEl("text", { x: left, y: sy + 40, class: "axis" }, "slowest here: " + fmtGBs(lo)));
      const body = el("div", { class: "row" });
      body.appendChild(svg);
      wrap.appendChild(body);
      // the slowest links in numbers
      const t = el("table", { class: "top", "data-table": "links" });
      const tr = el("tr");
      for (const hh of ["rank → peer", "channel", "bandwidth (GB/s)", "latency (µs)", "R²", "sizes", "steps"]) tr.appendChild(el("th", {}, hh));
      t.appendChild(tr);
      for (const l of ls.slice().sort((a, b) => a.min.bandwidthGBs - b.min.bandwidthGBs).slice(0, 12)) {
        const row = el("tr", { "data-comm": c.id, "data-rank": l.rank, "data-peer": l.peer, "data-channel": l.channel });
        row.appendChild(el("td", {}, l.rank + " → " + l.peer));
        row.appendChild(el("td", {}, String(l.channel)));
        row.appendChild(el("td", { "data-key": "bandwidthGBs", "data-v": String(l.min.bandwidthGBs) }, fixed(l.min.bandwidthGBs, 2)));
        row.appendChild(el("td", { "data-key": "latencyUs", "data-v": String(l.min.latencyUs) }, fixed(l.min.latencyUs, 2)));
        row.appendChild(el("td", { "data-key": "r2", "data-v": String(l.min.r2) }, fixed(l.min.r2, 3)));
        row.appendChild(el("td", {}, String(l.min.points)));
        row.appendChild(el("td", {}, int(l.steps || 0)));
        t.appendChild(row);
      }
      body.appendChild(t);
    }
    marks[id] = k;
  }

  // ---- hosts ----
  function hosts() {
    const hs = arr(S.hosts);
    const s = section("hosts", "Hosts",
      "Each host's CLOCK_MONOTONIC placed on one timeline from its CLOCK_REALTIME anchors, refined from the collectives when they agree.");
    const t = el("table", { class: "hosts", "data-table": "hosts" });
    const tr = el("tr");
    for (const h of ["host", "clock − reference (µs)", "refinement (µs)", "taken", "residual (µs)", "collectives"])
      tr.appendChild(el("th", {}, h));
    t.appendChild(tr);
    for (const h of hs) {
      const r = el("tr");
      for (const v of [h.host + (h.reference ? " (reference)" : ""), fixed(h.clockOffsetNs / 1e3, 3), fixed(h.refinedNs / 1e3, 3),
        h.refinementTaken ? "yes" : "no", fixed(h.residualNs / 1e3, 3), h.collectives])
        r.appendChild(el("td", {}, String(v)));
      t.appendChild(r);
    }
    if (hs.length > 12) {
      const d = el("details");
      d.appendChild(el("summary", {}, hs.length + " hosts"));
      d.appendChild(t);
      s.appendChild(d);
    } else {
      s.appendChild(t);
    }
    marks.hosts = hs.length;
  }

  // ---- mismatched collectives ----
  const callText = (c) => !c ? "–" : c.func + " #" + c.seq + " (count " + c.count + ", " +
    String(c.datatype || "").replace(/^nccl/, "") + (c.root ? ", root " + c.root : "") + ")";
  function mismatches() {
    const id = "mismatch";
    const ms = arr(S.mismatches);
    const s = section(id, "Mismatched collectives",
      "Every rank of a communicator must post the same collectives in the same order. Per odd rank, at the first place it differs: what it posted, and what most ranks posted there (call: another call; skipped: it skipped the others' call; extra: it posted one the others did not).");
    if (!ms.length) return empty(s, id, "no mismatch: every rank posted the same collectives in the same order");
    const t = el("table", { "data-table": "mismatches" });
    const head = el("tr");
    for (const h of ["communicator", "rank", "kind", "collective", "it posted", "the others posted", "ranks agreeing"])
      head.appendChild(el("th", {}, h));
    t.appendChild(head);
    let n = 0;
    for (const c of ms) {
      if (!arr(c.ranks).length) {
        const r = el("tr", { "data-comm": c.commId });
        r.appendChild(el("td", {}, commLabel(c.commId)));
        const td = el("td", { colspan: 6 }, c.placesDiffering + " place(s) differ" +
          (c.noMajoritySomewhere ? ", with no majority to tell the odd rank" : ""));
        r.appendChild(td);
        t.appendChild(r);
        continue;
      }
      for (const m of arr(c.ranks)) {
        const r = el("tr", { "data-comm": c.commId, "data-rank": m.rank, class: "mismatch" });
        for (const v of [commLabel(c.commId), String(m.rank), m.kind, "#" + m.collective, callText(m.posted),
          callText(m.othersPosted), m.ranksAgreeing + " of " + m.ranksPosting])
          r.appendChild(el("td", {}, v));
        t.appendChild(r);
        n++;
      }
    }
    s.appendChild(t);
    marks[id] = n;
  }

  // ---- kernel phases ----
  const PHASES = [["initial_syncNs", "initial sync", "#d62728"], ["computeNs", "compute", "#1f77b4"],
    ["final_syncNs", "final sync", "#ff7f0e"]];
  const PHASE_ROWS = 64;
  function phases() {
    const id = "phases";
    const ps = arr(S.kernelPhases);
    const s = section(id, "Kernel phases",
      "NCCL 2.31+: each rank's GPU time in its collectives' kernels, by phase: initial sync (waiting for the peers to reach the collective), compute, final sync. A rank with much more initial sync than the others waits for them; a rank with much less is the one they wait for.");
    if (!ps.length) return empty(s, id, "no KernelPhase events (NCCL before 2.31, or KernelPhase not in the mask)");
    let n = 0;
    for (const c of ps) {
      const ranks = arr(c.ranks).slice(0, PHASE_ROWS);
      const verdict = [];
      if (c.waitsForPeers != null) verdict.push("rank " + c.waitsForPeers + " waits for its peers");
      if (c.waitedFor != null) verdict.push("the others wait for rank " + c.waitedFor);
      s.appendChild(el("h3", { "data-phases": c.commId }, commLabel(c.commId) + " · median initial sync " +
        (num(c.medianInitialSyncShare) === null ? "–" : (100 * c.medianInitialSyncShare).toFixed(1) + " %") +
        (verdict.length ? " · " + verdict.join("; ") : "")));
      const W = 900, left = 90, rowH = 16, width = W - left - 60;
      const svg = svgEl("svg", { width: W, height: 24 + ranks.length * rowH, "data-chart": id });
      PHASES.forEach(([, name, color], i) => {
        svg.appendChild(svgEl("rect", { x: left + i * 130, y: 2, width: 10, height: 10, fill: color }));
        svg.appendChild(svgEl("text", { x: left + i * 130 + 14, y: 11, class: "axis" }, name));
      });
      ranks.forEach((r, i) => {
        const y = 20 + i * rowH;
        const total = PHASES.reduce((a, [k]) => a + (num(r[k]) || 0), 0);
        const named = r.rank === c.waitsForPeers || r.rank === c.waitedFor;
        svg.appendChild(svgEl("text", { x: 0, y: y + 11, class: "axis" }, "rank " + r.rank + (named ? " ◀" : "")));
        let x = left;
        for (const [k, name, color] of PHASES) {
          const w = total > 0 ? ((num(r[k]) || 0) / total) * width : 0;
          const rect = svgEl("rect", { x: x, y: y, width: Math.max(0, w), height: rowH - 3, fill: color, "data-phase": name,
            "data-v": String(r[k]) });
          rect.appendChild(svgEl("title", {}, "rank " + r.rank + " " + name + ": " + fmtUs((num(r[k]) || 0) / 1000) +
            (total > 0 ? " (" + (100 * (r[k] || 0) / total).toFixed(1) + " %)" : "")));
          svg.appendChild(rect);
          x += w;
        }
        svg.appendChild(svgEl("text", { x: left + width + 4, y: y + 11, class: "axis" }, fmtUs(total / 1000)));
        n++;
      });
      s.appendChild(svg);
      if (arr(c.ranks).length > ranks.length)
        s.appendChild(el("p", { class: "note" }, "and " + (arr(c.ranks).length - ranks.length) + " more ranks (summary.json)"));
    }
    marks[id] = n;
  }

  // ---- operations by userTag ----
  function tags() {
    const id = "tags";
    const ts = arr(S.tags);
    const s = section(id, "Operations by userTag",
      "NCCL 2.31+: the application's tag of each call. Per communicator and tag: the ranks, operations, bytes and time of the timed operations (a batched operation's time is its batch's, not counted); a communicator keeps its 256 smallest tags, the rest in other. The same numbers as summary.txt.");
    if (!ts.length) return empty(s, id, "no tagged call");
    const t = el("table", { "data-table": "tags" });
    const head = el("tr");
    for (const h of ["communicator", "tag", "ranks", "ops", "bytes", "timed", "time", "mean"]) head.appendChild(el("th", {}, h));
    t.appendChild(head);
    for (const r of ts) {
      const row = el("tr", { "data-comm": r.commId, "data-tag": r.tag });
      const mean = r.timedOps ? r.totalTimeUs / r.timedOps : null;
      row.appendChild(el("td", {}, commLabel(r.commId)));
      row.appendChild(el("td", {}, String(r.tag)));
      for (const [key, text] of [["ranks", int(r.ranks)], ["ops", int(r.ops)], ["bytes", fmtBytes(r.bytes)],
        ["timedOps", int(r.timedOps)], ["totalTimeUs", fmtUs(r.totalTimeUs)]])
        row.appendChild(el("td", { "data-key": key, "data-v": String(r[key]) }, text));
      row.appendChild(el("td", {}, mean === null ? "–" : fmtUs(mean)));
      t.appendChild(row);
    }
    s.appendChild(t);
    marks[id] = ts.length;
  }

  function main() {
    header();
    if (!dataError) {
      hangs();
      mismatches();
      phases();
      comms();
      bandwidth();
      times();
      lateness();
      links();
      collectives();
      tags();
      hosts();
    }
    window.NCCLSCOPE_DONE = true;
    // what was drawn, readable from the DOM (a headless browser's --dump-dom)
    document.body.setAttribute("data-marks", JSON.stringify(marks));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();
