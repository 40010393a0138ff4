/* profsight HTML report: builds every view from the JSON in #profsight-data.
 *
 * Safety: strings from the trace are only ever set with textContent, setAttribute or as
 * SVG <title> text; nothing here parses markup (no innerHTML, no insertAdjacentHTML).
 *
 * Stable ids and classes (tests and users rely on them):
 *   html[data-theme]            "light" / "dark" once the toggle was used; CSS var --bg etc.
 *   #ps-theme-toggle            the theme button
 *   #ps-summary li              one summary line each;  #ps-diagnostics li: input notes
 *   #ps-verdict                 .ps-verdict-summary, .ps-badge, .ps-verdict-evidence li
 *   #ps-findings                details.ps-finding[data-category] > summary (.ps-sev-*),
 *                               .ps-evidence tr (one per evidence item; a run of items under
 *                               one label shows td.ps-evidence-label once), .ps-explanation,
 *                               .ps-recommendation
 *   #ps-breakdown               svg#ps-breakdown-chart, g.ps-step-bar[data-step] (one per
 *                               step, then g.ps-step-bar.ps-average), rect.ps-seg[data-phase]
 *   #ps-tree                    #ps-tree-root (name of the zoomed node), #ps-tree-crumbs
 *                               button.ps-crumb, svg#ps-icicle rect.ps-node[data-depth]
 *                               [data-name] (depth 0 = the zoomed node; click it to zoom out),
 *                               text.ps-node-label
 *   #ps-tooltip                 the hover box: .ps-tip-name, tr[data-field] cells
 *   #ps-top-ops, #ps-top-kernels  svg#ps-ops-chart / svg#ps-kernels-chart, g.ps-hbar[data-name]
 *                               rect.ps-bar
 *   #ps-busy, #ps-memory        svg#ps-busy-chart (path.ps-area, path.ps-line),
 *                               svg#ps-memory-chart (path.ps-line.ps-series-cpu|device),
 *                               rect.ps-band per profiler step
 *   #ps-ranks (jobs)            svg#ps-ranks-chart g.ps-rank-bar[data-rank] (.ps-straggler on the
 *                               straggler) rect.ps-seg[data-phase]; table#ps-rank-table
 *                               tr[data-rank] td[data-field]; details.ps-rank[data-rank]
 *   #ps-collectives             table#ps-collective-table tr[data-operation] td[data-field]
 *                               (bytes, transfer_us, bus_gbps, meaning): a dash's title says
 *                               why the value is unknown
 *   .ps-scroll                  the box a wide table scrolls sideways in (never the page)
 *   text.ps-axis-label          an axis's numbers, each with its unit (0 ms, 100%, 204.83 MB)
 *   #ps-table-section           select#ps-kind-filter, input#ps-text-filter (matches names,
 *                               case-insensitive), #ps-table-count, table#ps-table,
 *                               th[data-key][aria-sort], tbody tr[data-kind] (hidden when
 *                               filtered out), td.ps-kind .ps-tag, td.ps-name[title],
 *                               td.ps-meaning
 */
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  const D = JSON.parse(document.getElementById("profsight-data").textContent);
  const DEV = D.device || "device";
  const SAFE_CLASS = /^[a-z_]+$/;

  // ---- small helpers -------------------------------------------------------------------

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function svg(tag, attrs) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const k in attrs || {}) e.setAttribute(k, String(attrs[k]));
    return e;
  }

  function svgText(x, y, text, attrs) {
    const t = svg("text", Object.assign({ x: x, y: y }, attrs || {}));
    t.textContent = text;
    return t;
  }

  function kindClass(kind) {
    return SAFE_CLASS.test(kind || "") ? "ps-kind-" + kind : "ps-kind-other";
  }

  /** Like profsight's short_time: 812 µs, 12.3 ms, 1.52 s. */
  function fmtTime(us) {
    if (us === null || us === undefined) return "–";
    if (us >= 1e6) return (us / 1e6).toFixed(2) + " s";
    if (us >= 1e4) return (us / 1000).toFixed(1) + " ms";
    if (us >= 1000) return (us / 1000).toFixed(2) + " ms";
    return us >= 10 ? us.toFixed(0) + " µs" : us.toFixed(1) + " µs";
  }

  function fmtBytes(n) {
    if (n === null || n === undefined) return "–";
    const a = Math.abs(n);
    if (a >= 1024 ** 3) return (n / 1024 ** 3).toFixed(2) + " GB";
    if (a >= 1024 ** 2) return (n / 1024 ** 2).toFixed(2) + " MB";
    if (a >= 1024) return (n / 1024).toFixed(2) + " KB";
    return n + " B";
  }

  /** Decimal units, as bandwidths are quoted (and as profsight's text prints sizes). */
  function fmtDecimalBytes(n) {
    if (n >= 1e9) return (n / 1e9).toPrecision(3) + " GB";
    if (n >= 1e6) return (n / 1e6).toPrecision(3) + " MB";
    if (n >= 1e3) return (n / 1e3).toPrecision(3) + " KB";
    return n + " B";
  }

  /** Like profsight's short_rate: 12.3 GB/s, 180 MB/s, 2.71 KB/s. */
  function fmtRate(gbps) {
    if (gbps >= 1) return gbps.toPrecision(3) + " GB/s";
    if (gbps >= 1e-3) return (gbps * 1e3).toPrecision(3) + " MB/s";
    return (gbps * 1e6).toPrecision(3) + " KB/s";
  }

  function fmtPct(x) {
    return x === null || x === undefined ? "–" : x.toFixed(1) + "%";
  }

  function cut(text, chars) {
    if (chars < 2) return "";
    return text.length <= chars ? text : text.slice(0, chars - 1) + "…";
  }

  function widthOf(node, fallback) {
    return Math.max(node.clientWidth || 0, 320) || fallback;
  }

  /** A wide table in a box that scrolls sideways by itself, not the page. */
  function scrolling(table) {
    const box = el("div", "ps-scroll");
    box.appendChild(table);
    return box;
  }

  /** The unit of an axis label ("ms" of "224.9 ms", "%" of "100%"). */
  function unitOf(label) {
    const m = /^[-−]?[\d.]+\s*(\S.*)?$/.exec(label);
    return m && m[1] ? m[1] : "";
  }

  /** Zero in the unit of `label`: "0 ms" beside "224.9 ms", "0%" beside "100%". */
  function zeroLike(label) {
    const unit = unitOf(label);
    return "0" + (unit === "%" || !unit ? unit : " " + unit);
  }

  /** A value axis along the bottom of a chart: a line from x0 to x1 at y, "0 <unit>" at
   * its start and `maxLabel` at its end. */
  function bottomAxis(chart, x0, x1, y, maxLabel) {
    chart.appendChild(svg("line", { class: "ps-axis", x1: x0, y1: y, x2: x1, y2: y }));
    chart.appendChild(svgText(x0, y + 13, zeroLike(maxLabel), { class: "ps-axis-label" }));
    chart.appendChild(svgText(x1, y + 13, maxLabel, { "text-anchor": "end", class: "ps-axis-label" }));
  }

  function show(section) {
    section.hidden = false;
    const nav = document.getElementById("ps-nav");
    const a = el("a", "", section.querySelector("h2").textContent);
    a.setAttribute("href", "#" + section.id);
    nav.appendChild(a);
    return section;
  }

  // ---- tooltip -------------------------------------------------------------------------

  const tip = document.getElementById("ps-tooltip");

  /** rows: [[field, label, value], ...] */
  function showTip(event, name, rows) {
    const table = el("table");
    for (const [field, label, value] of rows) {
      const tr = el("tr");
      tr.setAttribute("data-field", field);
      tr.appendChild(el("td", "", label));
      tr.appendChild(el("td", "", value));
      table.appendChild(tr);
    }
    tip.replaceChildren(el("div", "ps-tip-name", name), table);
    tip.hidden = false;
    moveTip(event);
  }

  function moveTip(event) {
    const pad = 14;
    let x = event.clientX + pad;
    let y = event.clientY + pad;
    const r = tip.getBoundingClientRect();
    if (x + r.width > window.innerWidth) x = Math.max(0, event.clientX - r.width - pad);
    if (y + r.height > window.innerHeight) y = Math.max(0, event.clientY - r.height - pad);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  function hideTip() {
    tip.hidden = true;
  }

  function bindTip(target, name, rowsFn) {
    target.addEventListener("mouseenter", (e) => showTip(e, name, rowsFn()));
    target.addEventListener("mousemove", moveTip);
    target.addEventListener("mouseleave", hideTip);
  }

  // ---- header, theme -------------------------------------------------------------------

  function header() {
    const ul = document.getElementById("ps-summary");
    for (const line of D.summary || []) ul.appendChild(el("li", "", line));
    const diag = document.getElementById("ps-diagnostics");
    for (const line of D.diagnostics || []) diag.appendChild(el("li", "", "note: " + line));
    diag.hidden = !(D.diagnostics || []).length;
  }

  function theme() {
    const root = document.documentElement;
    const button = document.getElementById("ps-theme-toggle");
    const systemDark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)");
    const current = () =>
      root.getAttribute("data-theme") || (systemDark && systemDark.matches ? "dark" : "light");
    const label = () => {
      button.textContent = current() === "dark" ? "Light theme" : "Dark theme";
    };
    button.addEventListener("click", () => {
      root.setAttribute("data-theme", current() === "dark" ? "light" : "dark");
      label();
    });
    label();
  }

  // ---- verdict and findings ------------------------------------------------------------

  function verdict() {
    const v = D.verdict;
    if (!v) return;
    const s = show(document.getElementById("ps-verdict"));
    s.appendChild(el("p", "ps-verdict-summary", v.summary));
    const badges = el("div", "ps-badges");
    badges.appendChild(el("span", "ps-badge", "bound: " + v.bound));
    badges.appendChild(el("span", "ps-badge", v.judgement.replace(/_/g, " ")));
    badges.appendChild(el("span", "ps-badge", "step " + fmtTime(v.step_us)));
    if (v.device_busy_pct !== null) {
      badges.appendChild(el("span", "ps-badge", "device busy " + fmtPct(v.device_busy_pct)));
    }
    badges.appendChild(el("span", "ps-badge", "data wait " + fmtPct(v.data_wait_pct)));
    if (v.mfu_pct !== null) badges.appendChild(el("span", "ps-badge", "MFU " + fmtPct(v.mfu_pct)));
    s.appendChild(badges);
    const ul = el("ul", "ps-verdict-evidence");
    for (const line of v.evidence || []) ul.appendChild(el("li", "", line));
    s.appendChild(ul);
  }

  function findings() {
    const list = D.findings || [];
    if (!list.length) return;
    const s = show(document.getElementById("ps-findings"));
    list.forEach((f, i) => {
      const d = el("details", "ps-finding");
      d.setAttribute("data-category", f.category);
      if (i === 0) d.open = true;
      const sum = el("summary");
      const sev = SAFE_CLASS.test(f.severity) ? f.severity : "info";
      sum.appendChild(el("span", "ps-sev ps-sev-" + sev, f.severity));
      sum.appendChild(el("span", "ps-finding-title", f.title));
      let meta = " (" + f.category;
      if (f.could_save) meta += ", " + f.could_save;
      sum.appendChild(el("span", "ps-muted", meta + ")"));
      d.appendChild(sum);
      const body = el("div", "ps-finding-body");
      const ev = el("table", "ps-evidence");
      const items = f.evidence || [];
      items.forEach((item, k) => {
        const tr = el("tr");
        // a run of items under one label ("measured", ...) shows the label once
        if (k === 0 || items[k - 1].label !== item.label) {
          let run = 1;
          while (k + run < items.length && items[k + run].label === item.label) run += 1;
          const label = el("td", "ps-evidence-label", item.label);
          if (run > 1) label.rowSpan = run;
          if (item.title) label.setAttribute("title", item.title);
          tr.appendChild(label);
        }
        tr.appendChild(el("td", "ps-evidence-value", item.value));
        const rowsText = (item.rows || []).join(", ");
        const rowsCell = el("td", "ps-mono ps-muted", cut(rowsText, 100));
        if (rowsText.length > 100) rowsCell.setAttribute("title", rowsText);
        tr.appendChild(rowsCell);
        ev.appendChild(tr);
      });
      if (items.length) body.appendChild(scrolling(ev));
      const why = el("p", "ps-explanation");
      why.appendChild(el("strong", "", "Why: "));
      why.appendChild(document.createTextNode(f.explanation));
      body.appendChild(why);
      const fix = el("p", "ps-recommendation");
      fix.appendChild(el("strong", "", "What to change: "));
      fix.appendChild(document.createTextNode(f.recommendation));
      body.appendChild(fix);
      if (f.confidence) body.appendChild(el("p", "ps-trigger", "Note: " + f.confidence));
      if (f.trigger) body.appendChild(el("p", "ps-trigger", "Rule: " + f.trigger));
      d.appendChild(body);
      s.appendChild(d);
    });
  }

  // ---- step-time breakdown: one stacked column per step, then the average --------------

  function breakdown() {
    const b = D.breakdown;
    if (!b || !b.steps || !b.steps.length) return;
    const s = show(document.getElementById("ps-breakdown"));
    const avg = b.average;
    let intro = (b.scope || b.steps.length + " " + b.windows) + ", average " + fmtTime(avg.wall_us);
    intro += " on " + b.thread;
    if (avg.device_busy_us !== null && avg.device_busy_us !== undefined && avg.wall_us) {
      intro += "; " + DEV + " busy " + fmtPct((avg.device_busy_us * 100) / avg.wall_us);
    }
    s.appendChild(el("p", "ps-muted", intro));
    const legend = el("ul", "ps-legend");
    for (const p of b.phases) {
      const us = avg.host_us[p.id] || 0;
      if (!us) continue;
      const li = el("li");
      li.appendChild(el("span", "ps-swatch " + phaseClass(p.id)));
      const pct = avg.wall_us ? (us * 100) / avg.wall_us : 0;
      li.appendChild(el("span", "", p.label + ": " + fmtTime(us) + " (" + fmtPct(pct) + ")"));
      legend.appendChild(li);
    }
    s.appendChild(legend);
    const box = el("div", "ps-chart");
    s.appendChild(box);
    const bars = b.steps.map((st) => ({ step: st, average: false }));
    bars.push({ step: avg, average: true });
    const draw = () => {
      const W = widthOf(box, 900);
      const H = 260;
      const left = 60;
      const bottom = 24;
      const top = 8;
      const maxWall = Math.max(...bars.map((x) => x.step.wall_us), 1e-9);
      const slot = (W - left - 8) / (bars.length + 0.5); // +0.5: a gap before the average
      const barW = Math.max(1, slot * 0.8);
      const chart = svg("svg", { id: "ps-breakdown-chart", width: W, height: H });
      chart.appendChild(svg("line", { class: "ps-axis", x1: left, y1: H - bottom, x2: W, y2: H - bottom }));
      chart.appendChild(svgText(left - 6, top + 10, fmtTime(maxWall), { "text-anchor": "end", class: "ps-axis-label" }));
      chart.appendChild(svgText(left - 6, H - bottom, zeroLike(fmtTime(maxWall)), { "text-anchor": "end", class: "ps-axis-label" }));
      const scale = (H - bottom - top) / maxWall;
      bars.forEach((bar, i) => {
        const st = bar.step;
        const x = left + slot * (i + (bar.average ? 0.5 : 0)) + (slot - barW) / 2;
        const g = svg("g", { class: "ps-step-bar" + (bar.average ? " ps-average" : "") });
        g.setAttribute("data-step", st.name);
        let y = H - bottom;
        for (const p of b.phases) {
          const us = st.host_us[p.id] || 0;
          if (us <= 0) continue;
          const h = us * scale;
          y -= h;
          const r = svg("rect", { class: "ps-seg " + phaseClass(p.id), x: x, y: y, width: barW, height: Math.max(h, 0) });
          r.setAttribute("data-phase", p.id);
          const pct = st.wall_us ? (us * 100) / st.wall_us : 0;
          bindTip(r, st.name + ": " + p.label, () => [
            ["time", "time", fmtTime(us)],
            ["share", "share of the step", fmtPct(pct)],
            ["wall", "step wall time", fmtTime(st.wall_us)],
          ]);
          g.appendChild(r);
        }
        if (slot >= 28 || bar.average) {
          const label = bar.average ? "average" : st.name.replace("ProfilerStep#", "#");
          g.appendChild(svgText(x + barW / 2, H - 8, cut(label, Math.floor(slot / 6) + 1), { "text-anchor": "middle" }));
        }
        chart.appendChild(g);
      });
      box.replaceChildren(chart);
    };
    draw();
    onResize(draw);
  }

  function phaseClass(id) {
    return SAFE_CLASS.test(id) ? "ps-phase-" + id : "ps-phase-other";
  }

  // ---- a job: one horizontal stacked bar per rank, a table, each rank's top rows --------

  function ranks() {
    const J = D.ranks;
    if (!J || !J.ranks || !J.ranks.length) return;
    const s = show(document.getElementById("ps-ranks"));
    s.appendChild(el("p", "ps-muted",
      "Average of the " + J.steps + " step(s) every rank profiled. Each bar is one rank's step: " +
      "the collectives segment is time waiting for collectives (for the transfer, or for a " +
      "slower rank)." + (J.straggler !== null ? " Rank " + J.straggler + " is the straggler." : "")));
    const legend = el("ul", "ps-legend");
    for (const p of J.phases) {
      if (!J.ranks.some((r) => (r.phases_us[p.id] || 0) > 0)) continue;
      const li = el("li");
      li.appendChild(el("span", "ps-swatch " + phaseClass(p.id)));
      li.appendChild(el("span", "", p.label));
      legend.appendChild(li);
    }
    s.appendChild(legend);
    const box = el("div", "ps-chart");
    s.appendChild(box);
    const draw = () => {
      const W = widthOf(box, 900);
      const left = 110;
      const rowH = J.ranks.length > 64 ? 6 : 22;
      const H = J.ranks.length * rowH + 26;
      const maxWall = Math.max(...J.ranks.map((r) => r.step_us), 1e-9);
      const scale = (W - left - 70) / maxWall;
      const chart = svg("svg", { id: "ps-ranks-chart", width: W, height: H });
      J.ranks.forEach((r, i) => {
        const g = svg("g", { class: "ps-rank-bar" + (r.rank === J.straggler ? " ps-straggler" : "") });
        g.setAttribute("data-rank", String(r.rank));
        const y = i * rowH + 4;
        if (rowH >= 12) {
          const label = "rank " + r.rank + (r.rank === J.straggler ? " ⚑" : "");
          g.appendChild(svgText(left - 8, y + rowH * 0.65, label, { "text-anchor": "end" }));
        }
        let x = left;
        for (const p of J.phases) {
          const us = r.phases_us[p.id] || 0;
          if (us <= 0) continue;
          const w = us * scale;
          const rect = svg("rect", { class: "ps-seg " + phaseClass(p.id), x: x, y: y, width: Math.max(w, 0), height: rowH - 4 });
          rect.setAttribute("data-phase", p.id);
          bindTip(rect, "rank " + r.rank + ": " + p.label, () => [
            ["time", "time per step", fmtTime(us)],
            ["share", "share of the step", fmtPct(r.step_us ? (us * 100) / r.step_us : 0)],
            ["wait", "waits for other ranks", fmtTime(r.wait_us)],
          ]);
          g.appendChild(rect);
          x += w;
        }
        if (rowH >= 12) g.appendChild(svgText(x + 6, y + rowH * 0.65, fmtTime(r.step_us), { class: "ps-value-label" }));
        chart.appendChild(g);
      });
      bottomAxis(chart, left, left + maxWall * scale, J.ranks.length * rowH + 6, fmtTime(maxWall));
      box.replaceChildren(chart);
    };
    draw();
    onResize(draw);
    const cols = [
      ["rank", "rank", (r) => String(r.rank) + (r.rank === J.straggler ? " (straggler)" : "")],
      ["step", "step", (r) => fmtTime(r.step_us)],
      ["wait", "waits for others", (r) => fmtTime(r.wait_us)],
      ["busy", "own work", (r) => fmtTime(r.busy_us)],
      ["exposed", "exposed comm", (r) => fmtTime(r.comm_exposed_us)],
      ["hidden", "comm hidden by compute", (r) => fmtTime(r.comm_overlapped_us)],
      ["device", DEV + " busy", (r) => fmtTime(r.device_busy_us)],
      ["last", "arrives last at", (r) => String(r.last_at)],
      ["offset", "clock offset", (r) => (r.clock_offset_us < 0 ? "−" : "+") + fmtTime(Math.abs(r.clock_offset_us))],
      ["role", "in the job", (r) => r.role || "–"],
      ["finding", "its top finding", (r) => r.top_finding || "–"],
    ];
    const table = el("table", "ps-grid");
    table.id = "ps-rank-table";
    const head = el("tr");
    for (const c of cols) head.appendChild(el("th", "", c[1]));
    const thead = el("thead");
    thead.appendChild(head);
    table.appendChild(thead);
    const body = el("tbody");
    for (const r of J.ranks) {
      const tr = el("tr");
      tr.setAttribute("data-rank", String(r.rank));
      for (const c of cols) {
        const td = el("td", "", c[2](r));
        td.setAttribute("data-field", c[0]);
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    table.appendChild(body);
    s.appendChild(scrolling(table));
    for (const r of J.ranks) {
      const d = el("details", "ps-rank");
      d.setAttribute("data-rank", String(r.rank));
      d.appendChild(el("summary", "", "rank " + r.rank + ": " + r.path));
      const ul = el("ul");
      for (const row of r.top_rows || []) {
        ul.appendChild(el("li", "", fmtTime(row.self_us) + (row.on_device ? " " + DEV : " self CPU") +
          " per step · " + row.kind + " · " + row.name));
      }
      d.appendChild(ul);
      s.appendChild(d);
    }
  }

  function collectives() {
    const ops = D.collectives || [];
    if (!ops.length) return;
    const s = show(document.getElementById("ps-collectives"));
    if (D.collectives_note) s.appendChild(el("p", "ps-muted", D.collectives_note));
    const table = el("table", "ps-grid");
    table.id = "ps-collective-table";
    const known = (v) => v !== null && v !== undefined;
    // [heading, cell text, the data key the cell shows (its data-field)]
    const cols = [
      ["operation", (o) => o.operation],
      ["backend", (o) => o.backend],
      ["per step", (o) => o.calls_per_step.toPrecision(3)],
      ["size per call", (o) => (known(o.bytes) ? fmtDecimalBytes(o.bytes) : "–"), "bytes"],
      ["time per call", (o) => fmtTime(o.transfer_us), "transfer_us"],
      ["bus bandwidth", (o) => (known(o.bus_gbps) ? fmtRate(o.bus_gbps) : "–"), "bus_gbps"],
      ["what it does", (o) => o.meaning || "", "meaning"],
    ];
    const head = el("tr");
    for (const c of cols) head.appendChild(el("th", "", c[0]));
    const thead = el("thead");
    thead.appendChild(head);
    table.appendChild(thead);
    const body = el("tbody");
    for (const o of ops) {
      const tr = el("tr");
      tr.setAttribute("data-operation", o.operation);
      for (const c of cols) {
        const td = el("td", "", c[1](o));
        if (c[2]) td.setAttribute("data-field", c[2]);
        if (c[2] && !known(o[c[2]]) && o.why && o.why[c[2]]) td.setAttribute("title", o.why[c[2]]);
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    table.appendChild(body);
    s.appendChild(scrolling(table));
  }

  // ---- call tree as an icicle ----------------------------------------------------------

  function tree() {
    if (!D.tree) return;
    const s = show(document.getElementById("ps-tree"));
    const rootData = D.tree;
    (function link(n, parent) {
      n.parent = parent;
      for (const c of n.ch) link(c, n);
    })(rootData, null);
    const size = rootData.ct > 0 ? (n) => n.ct : (n) => n.dt;
    const sizeName = rootData.ct > 0 ? "CPU total" : DEV + " total";
    s.appendChild(el("p", "ps-muted",
      "Width: " + sizeName + ". Hover a box for its numbers; click to zoom in, click the top " +
      "box or a breadcrumb to zoom out. Small nodes are pruned from this view."));
    const crumbs = el("div");
    crumbs.id = "ps-tree-crumbs";
    const rootLabel = el("div");
    rootLabel.id = "ps-tree-root";
    const box = el("div", "ps-chart");
    s.appendChild(crumbs);
    s.appendChild(rootLabel);
    s.appendChild(box);
    let focus = rootData;

    function zoom(node) {
      focus = node;
      hideTip();
      draw();
    }

    function nodeRows(n) {
      const rows = [
        ["calls", "calls", String(n.c)],
        ["cpu_self", "self CPU", fmtTime(n.cs)],
        ["cpu_total", "CPU total", fmtTime(n.ct)],
      ];
      if (D.has_device || n.dt) {
        rows.push(["device_self", "self " + DEV, fmtTime(n.ds)]);
        rows.push(["device_total", DEV + " total", fmtTime(n.dt)]);
      }
      const whole = size(rootData);
      if (whole > 0) rows.push(["share", "share of the run", fmtPct((size(n) * 100) / whole)]);
      rows.push(["kind", "kind", n.k]);
      return rows;
    }

    function draw() {
      const path = [];
      for (let n = focus; n; n = n.parent) path.unshift(n);
      crumbs.replaceChildren();
      path.forEach((n, i) => {
        const btn = el("button", "ps-crumb", cut(n.n, 40));
        btn.type = "button";
        btn.title = n.n;
        if (i === path.length - 1) btn.disabled = true;
        btn.addEventListener("click", () => zoom(n));
        crumbs.appendChild(btn);
      });
      rootLabel.textContent = focus.n;
      const W = widthOf(box, 900);
      const ROW = 22;
      let depth = 0;
      (function measure(n, d) {
        depth = Math.max(depth, d);
        for (const c of n.ch) measure(c, d + 1);
      })(focus, 0);
      const chart = svg("svg", { id: "ps-icicle", width: W, height: (depth + 1) * ROW });
      const total = size(focus);
      (function place(n, x, w, d) {
        if (w < 0.5) return;
        const r = svg("rect", { class: "ps-node " + kindClass(n.k), x: x, y: d * ROW, width: w, height: ROW - 1 });
        r.setAttribute("data-depth", d);
        r.setAttribute("data-name", n.n);
        bindTip(r, n.n, () => nodeRows(n));
        r.addEventListener("click", () => zoom(d === 0 ? n.parent || n : n));
        chart.appendChild(r);
        if (w > 34) {
          const label = svgText(x + 4, d * ROW + 15, cut(n.n, Math.floor((w - 8) / 6.5)), { class: "ps-node-label" });
          chart.appendChild(label);
        }
        let cx = x;
        const own = size(n);
        for (const c of n.ch) {
          const cw = own > 0 ? (w * size(c)) / own : 0;
          place(c, cx, cw, d + 1);
          cx += cw;
        }
      })(focus, 0, total > 0 ? W : 0, 0);
      box.replaceChildren(chart);
    }

    draw();
    onResize(draw);
  }

  // ---- horizontal bars: top operators, top kernels -------------------------------------

  function hbars(sectionId, chartId, items, valueLabel) {
    if (!items || !items.length) return;
    const s = show(document.getElementById(sectionId));
    const box = el("div", "ps-chart");
    s.appendChild(box);
    const draw = () => {
      const W = widthOf(box, 900);
      const ROW = 22;
      const labelW = Math.min(380, W * 0.42);
      const valueW = 70;
      const max = Math.max(...items.map((x) => x.us), 1e-9);
      const chart = svg("svg", { id: chartId, width: W, height: items.length * ROW + 24 });
      items.forEach((it, i) => {
        const g = svg("g", { class: "ps-hbar" });
        g.setAttribute("data-name", it.name);
        const y = i * ROW + 2;
        g.appendChild(svgText(0, y + 14, cut(it.name, Math.floor(labelW / 6.5))));
        const w = Math.max(1, ((W - labelW - valueW) * it.us) / max);
        const r = svg("rect", { class: "ps-bar", x: labelW, y: y + 2, width: w, height: ROW - 6 });
        bindTip(r, it.name, () => [
          ["value", valueLabel, fmtTime(it.us)],
          ["calls", "calls", String(it.calls)],
          ["kind", "kind", it.kind],
          ["meaning", "what it is", it.meaning],
        ]);
        g.appendChild(r);
        g.appendChild(svgText(labelW + w + 4, y + 14, fmtTime(it.us), { class: "ps-value-label" }));
        chart.appendChild(g);
      });
      bottomAxis(chart, labelW, W - valueW, items.length * ROW + 6, fmtTime(max));
      box.replaceChildren(chart);
    };
    draw();
    onResize(draw);
  }

  // ---- timelines -----------------------------------------------------------------------

  function timeline(sectionId, chartId, series, fmtY, maxY, area) {
    const t = D.timelines;
    const s = show(document.getElementById(sectionId));
    const box = el("div", "ps-chart");
    s.appendChild(box);
    const n = Math.max(...series.map((x) => x.values.length));
    const spanUs = t.bucket_us * n;
    const draw = () => {
      const W = widthOf(box, 900);
      const H = 180;
      const left = 72; // room for "204.83 MB"
      const bottom = 22;
      const top = 8;
      const plotW = W - left - 8;
      const plotH = H - bottom - top;
      const chart = svg("svg", { id: chartId, width: W, height: H });
      const xOf = (us) => left + (spanUs > 0 ? (us / spanUs) * plotW : 0);
      // each step's window on the slower clock, and its host range as a bar along the top
      (t.steps || []).forEach(([name, a, b, ha, hb], i) => {
        const cls = "ps-band" + (i % 2 ? " ps-band-alt" : "");
        const band = svg("rect", { class: cls, x: xOf(a), y: top, width: Math.max(1, xOf(b) - xOf(a)), height: plotH });
        const title = svg("title");
        const host = hb !== undefined ? hb - ha : b - a;
        title.textContent = name + ": step " + fmtTime(b - a) + ", host range " + fmtTime(host);
        band.appendChild(title);
        chart.appendChild(band);
        if (ha !== undefined && (ha !== a || hb !== b)) {
          const bar = svg("rect", { class: "ps-host-range", x: xOf(ha), y: top, width: Math.max(1, xOf(hb) - xOf(ha)), height: 3 });
          const tip = svg("title");
          tip.textContent = name + ": the host's range, " + fmtTime(host);
          bar.appendChild(tip);
          chart.appendChild(bar);
        }
      });
      chart.appendChild(svg("line", { class: "ps-axis", x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH }));
      chart.appendChild(svgText(left - 6, top + 10, fmtY(maxY), { "text-anchor": "end", class: "ps-axis-label" }));
      chart.appendChild(svgText(left - 6, top + plotH, zeroLike(fmtY(maxY)), { "text-anchor": "end", class: "ps-axis-label" }));
      chart.appendChild(svgText(left, H - 6, zeroLike(fmtTime(spanUs)), { class: "ps-axis-label" }));
      chart.appendChild(svgText(left + plotW, H - 6, fmtTime(spanUs), { "text-anchor": "end", class: "ps-axis-label" }));
      for (const ser of series) {
        const pts = ser.values.map((v, i) => [
          xOf((i + 0.5) * t.bucket_us),
          top + plotH - (maxY > 0 ? (Math.max(v, 0) / maxY) * plotH : 0),
        ]);
        const line = pts.map((p, i) => (i ? "L" : "M") + p[0].toFixed(1) + " " + p[1].toFixed(1)).join("");
        if (area && pts.length) {
          const base = (top + plotH).toFixed(1);
          const d = line + "L" + pts[pts.length - 1][0].toFixed(1) + " " + base + "L" + pts[0][0].toFixed(1) + " " + base + "Z";
          chart.appendChild(svg("path", { class: "ps-area", d: d }));
        }
        const path = svg("path", { class: "ps-line ps-series-" + (SAFE_CLASS.test(ser.name) ? ser.name : "other"), d: line });
        const title = svg("title");
        title.textContent = ser.label;
        path.appendChild(title);
        chart.appendChild(path);
      }
      box.replaceChildren(chart);
    };
    draw();
    onResize(draw);
    return s;
  }

  function timelines() {
    const t = D.timelines;
    if (!t) return;
    if (t.device_busy && t.device_busy.length) {
      const s = timeline("ps-busy", "ps-busy-chart", [{ name: "busy", label: DEV + " busy share", values: t.device_busy }],
        (v) => (v * 100).toFixed(0) + "%", 1, true);
      s.insertBefore(el("p", "ps-muted", "Share of each time slice (" + fmtTime(t.bucket_us) +
        ") in which the " + DEV + " ran kernels, copies or memsets; shaded bands are the profiled steps, " +
        "each until the " + DEV + " finished what the host launched in it; the bar along the top is the host's range."),
        s.children[1]);
    }
    if (t.queue_depth && t.queue_depth.length) {
      const maxQ = Math.max(t.queue_limit || 0, ...t.queue_depth, 1);
      const s = timeline("ps-queue", "ps-queue-chart", [{ name: "queue", label: "launched items waiting", values: t.queue_depth }],
        (v) => v.toFixed(0) + " items", maxQ, false);
      s.insertBefore(el("p", "ps-muted", "Most launched items waiting on one stream at a launch in each slice: the host " +
        "runs that far ahead of the " + DEV + "; at " + (t.queue_limit || 1024) + " its launches block until an item ends."),
        s.children[1]);
    }
    const mem = t.memory || {};
    const names = Object.keys(mem).filter((k) => mem[k] && mem[k].length);
    if (names.length) {
      const series = names.map((k) => ({ name: k, label: (k === "cpu" ? "CPU" : DEV) + " memory allocated", values: mem[k] }));
      const maxY = Math.max(...series.map((x) => Math.max(...x.values)), 1);
      const s = timeline("ps-memory", "ps-memory-chart", series, fmtBytes, maxY, false);
      const legend = el("ul", "ps-legend");
      for (const ser of series) {
        const li = el("li");
        const sw = el("span", "ps-swatch");
        sw.style.background = ser.name === "device" ? "var(--bar-device)" : "var(--bar)";
        li.appendChild(sw);
        li.appendChild(el("span", "", ser.label + ", peak " + fmtBytes(Math.max(...ser.values))));
        legend.appendChild(li);
      }
      s.insertBefore(legend, s.children[1]);
    }
  }

  // ---- the profiler table --------------------------------------------------------------

  function table() {
    const T = D.table;
    if (!T || !T.rows.length) return;
    const s = show(document.getElementById("ps-table-section"));
    const cols = T.columns;
    const kindCol = cols.findIndex((c) => c.key === "kind");
    const nameCol = cols.findIndex((c) => c.key === "name");
    const controls = el("div", "ps-table-controls");
    const kindSel = el("select");
    kindSel.id = "ps-kind-filter";
    kindSel.setAttribute("aria-label", "Filter by kind");
    kindSel.appendChild(new Option("all kinds", ""));
    const kinds = [...new Set(T.rows.map((r) => r.cells[kindCol]))].sort();
    for (const k of kinds) kindSel.appendChild(new Option(k, k));
    const text = el("input");
    text.id = "ps-text-filter";
    text.type = "search";
    text.placeholder = "Filter by name…";
    text.setAttribute("aria-label", "Filter by name");
    const count = el("span", "ps-muted");
    count.id = "ps-table-count";
    controls.append(kindSel, text, count);
    s.appendChild(controls);
    if (T.rows.length < T.total_rows) {
      s.appendChild(el("p", "ps-muted", "The " + T.rows.length + " largest rows of " + T.total_rows +
        " (by CPU or " + DEV + " total); `profsight table` lists them all."));
    }
    const wrap = el("div", "ps-table-wrap");
    const tbl = el("table");
    tbl.id = "ps-table";
    const thead = el("thead");
    const htr = el("tr");
    const ths = cols.map((c, i) => {
      const th = el("th", isNum(c) ? "ps-num" : "", c.label.replace(/device/i, DEV));
      th.setAttribute("data-key", c.key);
      th.setAttribute("aria-sort", "none");
      th.addEventListener("click", () => sortBy(i));
      htr.appendChild(th);
      return th;
    });
    thead.appendChild(htr);
    tbl.appendChild(thead);
    const tbody = el("tbody");
    const items = T.rows.map((row) => {
      const tr = el("tr");
      tr.setAttribute("data-kind", row.cells[kindCol]);
      cols.forEach((c, i) => {
        const v = row.cells[i];
        let td;
        if (c.type === "tag") {
          td = el("td", "ps-kind");
          const tag = el("span", "ps-tag " + kindClass(v), v);
          tag.title = row.layer;
          td.appendChild(tag);
        } else if (c.type === "time") {
          td = el("td", "ps-num", fmtTime(v));
        } else if (c.type === "bytes") {
          td = el("td", "ps-num", fmtBytes(v));
        } else if (c.type === "count") {
          td = el("td", "ps-num", v);
        } else {
          td = el("td", c.key === "name" ? "ps-name" : c.key === "meaning" ? "ps-meaning" : "", v);
        }
        if (c.key === "name") td.title = row.layer + ": " + row.cells[cols.findIndex((x) => x.key === "meaning")] + (row.reading ? "\n" + row.reading : "");
        if (c.key === "meaning" && row.reading) td.title = row.reading;
        tr.appendChild(td);
      });
      return { row: row, tr: tr, name: String(row.cells[nameCol]).toLowerCase() };
    });
    tbl.appendChild(tbody);
    wrap.appendChild(tbl);
    s.appendChild(wrap);

    let order = items.slice();
    let sortCol = -1;
    let sortDir = 0;

    function isNum(c) {
      return c.type === "time" || c.type === "bytes" || c.type === "count";
    }

    function sortBy(i) {
      const c = cols[i];
      // numbers: largest first on the first click; text: A to Z first
      sortDir = sortCol === i ? -sortDir : isNum(c) ? -1 : 1;
      sortCol = i;
      order = items.slice().sort((a, b) => {
        const x = a.row.cells[i];
        const y = b.row.cells[i];
        const cmp = isNum(c) ? (x || 0) - (y || 0) : String(x).localeCompare(String(y));
        return cmp * sortDir;
      });
      ths.forEach((th, j) => {
        th.setAttribute("aria-sort", j !== i ? "none" : sortDir > 0 ? "ascending" : "descending");
      });
      render();
    }

    function render() {
      const kind = kindSel.value;
      const needle = text.value.trim().toLowerCase();
      const frag = document.createDocumentFragment();
      let shown = 0;
      for (const it of order) {
        const visible = (!kind || it.row.cells[kindCol] === kind) && (!needle || it.name.includes(needle));
        it.tr.hidden = !visible;
        if (visible) shown += 1;
        frag.appendChild(it.tr);
      }
      tbody.replaceChildren(frag);
      count.textContent = shown + " of " + items.length + " rows";
    }

    kindSel.addEventListener("change", render);
    text.addEventListener("input", render);
    const initial = cols.findIndex((c) => c.key === (D.has_device ? "device_total_us" : "cpu_total_us"));
    if (initial >= 0) sortBy(initial);
    else render();
  }

  function notes() {
    if (!(D.notes || []).length && !(D.walkthrough || []).length) return;
    const s = show(document.getElementById("ps-notes"));
    if ((D.walkthrough || []).length) {
      const ol = el("ol", "ps-walkthrough");
      for (const t of D.walkthrough) ol.appendChild(el("li", "", t));
      s.appendChild(ol);
    }
    const ul = el("ul");
    for (const n of D.notes) ul.appendChild(el("li", "", n));
    s.appendChild(ul);
  }

  // ---- resize --------------------------------------------------------------------------

  const redraws = [];
  function onResize(fn) {
    redraws.push(fn);
  }
  let pending = 0;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(() => redraws.forEach((fn) => fn()), 150);
  });

  header();
  theme();
  verdict();
  findings();
  ranks();
  breakdown();
  collectives();
  tree();
  hbars("ps-top-ops", "ps-ops-chart", D.top_ops, "self CPU");
  hbars("ps-top-kernels", "ps-kernels-chart", D.top_kernels, "self " + DEV);
  timelines();
  table();
  notes();
})();
