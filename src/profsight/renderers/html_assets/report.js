/* profsight HTML report: builds every view from the JSON in #profsight-data.
 *
 * Charts: the step breakdown and the timelines are uPlot charts (the library is inlined
 * before this script, see html_assets/README.md): canvas, so their numbers are in the
 * uPlot instances, window.profsight.charts[id], and in the tooltip they show on hover. Bars
 * of names (top operators, kernels, ranks) and the call tree are plain HTML boxes whose
 * widths are shares of the row, so they follow the page's width by themselves.
 *
 * Safety: strings from the trace are only ever set with textContent or setAttribute;
 * nothing here parses markup (no innerHTML, no insertAdjacentHTML), and uPlot is given no
 * string from the trace (its series labels are ours, its legend is off).
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
 *   window.profsight.charts     {id: uPlot} of the uPlot charts below; each one's root is
 *                               div.uplot#<id>; data[0] the x values, data[k] series k,
 *                               series[k].label; tick labels carry their unit (0 ms, 100%);
 *                               an x label that would run into the one before it is blank
 *                               (""), the last one kept; every label lies inside its canvas
 *   #ps-breakdown               uPlot #ps-breakdown-chart: x = one bar per step, then the
 *                               average; one series per phase with time, drawn as bars from
 *                               0 to the running total of the phases before it and its own
 *                               (last phase first, so the bars stack)
 *   #ps-busy, #ps-queue,        uPlot #ps-busy-chart (one series, an area), #ps-queue-chart,
 *   #ps-memory                  table#ps-memory-peak tr[data-memory] td[data-field] (memory,
 *                               op, bytes, blocks): each memory's peak and what held it;
 *                               p.ps-memory-holders[data-memory]: its bytes by holder;
 *                               #ps-memory-chart (a series per memory: "cpu", "device"); each
 *                               profiler step a shaded band, its host range a bar on top
 *   #ps-snapshot (snapshots)    per device: ul.ps-snapshot-facts li, table.ps-snapshot-holders
 *                               tr[data-holder] td[data-field] (holder, bytes, meaning),
 *                               table.ps-snapshot-sites tr[data-site] td[data-field] (site,
 *                               bytes, blocks, holder); the tables of device 0 carry the ids
 *                               #ps-snapshot-holders and #ps-snapshot-sites
 *   #ps-tooltip                 the hover box: .ps-tip-name, tr[data-field] cells; on a
 *                               timeline: time, the series' names, step, step_time,
 *                               host_range, host ("done, ..." once the host left the step)
 *   #ps-roofline                ul#ps-roofline-facts li[data-field] (ceilings, coverage,
 *                               bounds); uPlot #ps-roofline-chart (x FLOP/B, y FLOP/s, both
 *                               logarithmic: a series per roof, then one of points per
 *                               bound); table#ps-roofline-table tr[data-op] td[data-field]
 *   #ps-source-lines            table#ps-source-table tr[data-frame] td[data-field]
 *                               (total_cpu_us, self_cpu_us, total_device_us, self_device_us,
 *                               backward_us, calls); tr.ps-outside: time no frame of yours holds
 *   #ps-tree                    #ps-tree-root (name of the zoomed node), #ps-tree-crumbs
 *                               button.ps-crumb, div#ps-icicle div.ps-node[data-depth]
 *                               [data-name] (depth 0 = the zoomed node; click it to zoom out)
 *   #ps-top-ops, #ps-top-kernels  div#ps-ops-chart / div#ps-kernels-chart .ps-hbar[data-name]
 *                               .ps-bar (width: its share of the largest)
 *   #ps-ranks (jobs)            div#ps-ranks-chart .ps-rank-bar[data-rank] (.ps-straggler on
 *                               the straggler) .ps-seg[data-phase]; table#ps-rank-table
 *                               tr[data-rank] td[data-field]; details.ps-rank[data-rank]
 *   .ps-bar-axis .ps-axis-label  an HTML bar chart's scale: "0 <unit>" and its largest value
 *   #ps-collectives             table#ps-collective-table tr[data-operation] td[data-field]
 *                               (bytes, transfer_us, bus_gbps, meaning): a dash's title says
 *                               why the value is unknown
 *   #ps-launches                ul#ps-launch-facts li[data-field] (short_kernels,
 *                               launch_delay); table#ps-short-launchers tr[data-op];
 *                               table#ps-copy-table tr[data-direction] td[data-field=gbps];
 *                               uPlot #ps-copy-chart (a series per direction, GB/s, a bar
 *                               per slice with copies, null where none ran)
 *   .ps-scroll                  the box a wide table scrolls sideways in (never the page)
 *   #ps-table-section           select#ps-kind-filter, input#ps-text-filter (matches names,
 *                               case-insensitive), #ps-table-count, table#ps-table,
 *                               th[data-key][aria-sort], tbody tr[data-kind] (hidden when
 *                               filtered out), td.ps-kind .ps-tag, td.ps-name[title]
 *                               > span.ps-clamp (three lines of a long name), td.ps-meaning
 *                               (div.ps-from: the user's function the row came from)
 *   .ps-n                       a number with its unit (a duration, a size, a share), kept
 *                               on one line
 */
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("profsight-data").textContent);
  const DEV = D.device || "device";
  /** The device as a sentence names it ("the GPU ran"); DEV is torch's column label (CUDA). */
  const NOUN = D.device === "XPU" ? "XPU" : D.device ? "GPU" : "device";
  const SAFE_CLASS = /^[a-z_]+$/;
  /** Characters past which a table cell may not show a name whole (CSS clamps it to three
   * lines): its title then starts with the name. */
  const LONG_NAME = 120;

  // ---- small helpers -------------------------------------------------------------------

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) setText(e, String(text));
    return e;
  }

  /** A number with its unit (12.3 ms, 1.52 GiB, 56%): one piece that never wraps. */
  const QUANTITY = /(?<![\w.])[−+-]?\d+(?:[.,]\d+)*(?:\s?(?:[GT]FLOP\/s|[KMGT]B\/s|[MGT]FLOP|min|ns|µs|us|ms|[KMGT]B|s|h|B)(?![\w\/])|%)/g;

  /** `text` into `e`, each quantity in it a span.ps-n that CSS keeps on one line, so that
   * "21.9 ms" never breaks into "21 / .9 / ms" in a narrow column; a text that is one
   * quantity (a table cell) takes the class itself. */
  function setText(e, text) {
    const parts = text.split(QUANTITY);
    const found = text.match(QUANTITY);
    if (!found) {
      e.textContent = text;
    } else if (found.length === 1 && found[0] === text) {
      e.textContent = text;
      e.classList.add("ps-n");
    } else {
      e.textContent = "";
      parts.forEach((part, i) => {
        if (part) e.appendChild(document.createTextNode(part));
        if (i < found.length) {
          const n = document.createElement("span");
          n.className = "ps-n";
          n.textContent = found[i];
          e.appendChild(n);
        }
      });
    }
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

  /** Like profsight's short_bytes: IEC units labelled as such (1.20 GiB, 51.0 GiB, 340 KiB),
   *  two decimals under 10, one under 100, none above: the same text in every format. */
  function fmtBytes(n) {
    if (n === null || n === undefined) return "–";
    const a = Math.abs(n);
    for (const [unit, size] of [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]]) {
      if (a >= size) {
        const v = n / size;
        return v.toFixed(Math.abs(v) < 10 ? 2 : Math.abs(v) < 100 ? 1 : 0) + " " + unit;
      }
    }
    return Math.round(n) + " B";
  }

  /** Like profsight's short_rate: 12.3 GB/s, 180 MB/s, 2.71 KB/s. */
  function fmtRate(gbps) {
    if (gbps >= 1e3) return (gbps / 1e3).toPrecision(3) + " TB/s";
    if (gbps >= 1) return gbps.toPrecision(3) + " GB/s";
    if (gbps >= 1e-3) return (gbps * 1e3).toPrecision(3) + " MB/s";
    return (gbps * 1e6).toPrecision(3) + " KB/s";
  }

  function fmtFlopRate(tflops) {
    const f = tflops * 1e12;
    for (const [p, size] of [["P", 1e15], ["T", 1e12], ["G", 1e9], ["M", 1e6], ["k", 1e3]]) {
      if (f >= size) return (f / size).toPrecision(3) + " " + p + "FLOP/s";
    }
    return f.toPrecision(3) + " FLOP/s";
  }

  function fmtPct(x) {
    return x === null || x === undefined ? "–" : x.toFixed(1) + "%";
  }

  function cut(text, chars) {
    if (chars < 2) return "";
    return text.length <= chars ? text : text.slice(0, chars - 1) + "…";
  }

  /** A chart's legend: a swatch of each item's colour (a CSS variable) and its label. */
  function swatchLegend(items) {
    const legend = el("ul", "ps-legend");
    for (const it of items) {
      const li = el("li");
      const sw = el("span", "ps-swatch");
      sw.style.background = "var(" + it.colour + ")";
      li.append(sw, el("span", "", it.label));
      legend.appendChild(li);
    }
    return legend;
  }

  /** A wide table in a box that scrolls sideways by itself, not the page. */
  function scrolling(table) {
    const box = el("div", "ps-scroll");
    box.appendChild(table);
    return box;
  }

  /** A grid table `id` with a header row of `headings`: [table, its tbody]. */
  function grid(id, headings) {
    const table = el("table", "ps-grid");
    if (id) table.id = id;
    const head = el("tr");
    for (const h of headings) head.appendChild(el("th", "", h));
    const thead = el("thead");
    thead.appendChild(head);
    const body = el("tbody");
    table.append(thead, body);
    return [table, body];
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

  // ---- charts: uPlot for steps and timelines, HTML bars for names ----------------------

  /** id -> uPlot instance, for tests and for a reader's console. */
  const charts = {};
  window.profsight = { charts: charts };

  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  /** The background colour report.css gives class `cls` (a canvas takes no CSS). */
  function cssColor(cls) {
    const probe = document.body.appendChild(el("span", cls));
    const colour = getComputedStyle(probe).backgroundColor;
    probe.remove();
    return colour;
  }

  /** Tick labels in the one unit of the largest tick: 0 ms, 50 ms, 100 ms. */
  function unitTicks(units) {
    return (u, splits) => {
      const top = Math.max(0, ...splits.map(Math.abs));
      const [div, unit] = units.find(([d]) => top >= d) || units[units.length - 1];
      const step = splits.length > 1 ? Math.abs(splits[1] - splits[0]) / div : 1;
      let dec = 0;
      while (dec < 3 && Math.abs(step * 10 ** dec - Math.round(step * 10 ** dec)) > 1e-6) dec += 1;
      return splits.map((v) => (v / div).toFixed(dec) + (unit === "%" ? "" : " ") + unit);
    };
  }
  const timeTicks = unitTicks([[1e6, "s"], [1e3, "ms"], [1, "µs"]]);
  const byteTicks = unitTicks([[1024 ** 3, "GiB"], [1024 ** 2, "MiB"], [1024, "KiB"], [1, "B"]]);
  const pctTicks = unitTicks([[0.01, "%"]]);
  /** Tick steps: whole counts; bytes in round KiB, MiB, GiB (1, 2, 5 times a power of ten). */
  const COUNT_INCRS = [1, 10, 100, 1000, 1e4].flatMap((p) => [1, 2, 5].map((m) => m * p));
  const BYTE_INCRS = [1, 1024, 1024 ** 2, 1024 ** 3].flatMap((p) => COUNT_INCRS.slice(0, 9).map((m) => m * p));

  const AXIS_FONT = "11px system-ui, sans-serif";
  /** Pixels kept free between two tick labels side by side. */
  const LABEL_GAP = 6;
  /** A canvas of our own to measure labels on: uPlot caches the font it last set on a
   * chart's canvas, so setting another there would draw its labels in the wrong one. */
  const measure = document.createElement("canvas").getContext("2d");

  function textWidth(text) {
    measure.font = AXIS_FONT;
    return measure.measureText(text).width;
  }

  function axis(values, extra) {
    const line = { stroke: cssVar("--border"), width: 1 };
    return Object.assign({ values: values, stroke: cssVar("--muted"), font: AXIS_FONT,
      grid: line, ticks: Object.assign({ size: 4 }, line) }, extra || {});
  }

  /** The x axis: tick labels centred on their ticks; one that would run into the label
   * before it is left blank, except the last (the breakdown's "average", the roofline's top
   * decade), which blanks the ones it would run into. */
  function xAxis(values, extra) {
    const spaced = (u, splits, axisIdx, space, incr) => {
      const labels = values(u, splits, axisIdx, space, incr);
      const span = labels.map((t, i) => {
        if (!t) return null;
        const x = u.valToPos(splits[i], u.axes[axisIdx].scale);
        const half = textWidth(t) / 2;
        return [x - half, x + half];
      });
      const last = span.map((b) => b !== null).lastIndexOf(true);
      const kept = [];
      span.forEach((b, i) => {
        if (!b) return;
        const clash = () => kept.length && span[kept[kept.length - 1]][1] + LABEL_GAP > b[0];
        if (i !== last && clash()) return;
        while (clash()) kept.pop();
        kept.push(i);
      });
      return labels.map((t, i) => (kept.includes(i) ? t : ""));
    };
    return axis(spaced, extra);
  }

  /** A y axis as wide as its widest tick label and the tick before it (a fixed width cut
   * the launch queue's "1000 items" to "000 items" at the canvas's edge). */
  function yAxis(values, extra) {
    const size = (u, labels, axisIdx) => {
      const a = u.axes[axisIdx];
      const widest = Math.max(0, ...(labels || []).filter(Boolean).map(textWidth));
      return Math.ceil(widest + a.ticks.size + a.gap + 4);
    };
    return axis(values, Object.assign({ size: size }, extra || {}));
  }

  /** Room right of the plot for half the widest x tick label, which is centred on its tick:
   * the last one would otherwise run past the canvas (the roofline's "1000 FLOP/B"). */
  function padRight(u) {
    const labels = (u.axes[0] && u.axes[0]._values) || [];
    return Math.ceil(Math.max(12, ...labels.filter(Boolean).map((t) => textWidth(t) / 2 + 2)));
  }

  /** A uPlot chart `id` in `box`, as wide as the box. `build()` gives [options, data]; it
   * runs again when the theme changes, since a canvas takes its colours once. */
  function plot(box, id, height, build) {
    let u = null;
    const width = () => Math.max(box.clientWidth, 240);
    const make = () => {
      if (u) u.destroy();
      const [opts, data] = build();
      const all = Object.assign({ id: id, width: width(), height: height, legend: { show: false },
        padding: [null, padRight, null, null] }, opts);
      u = new uPlot(all, data, box);
      charts[id] = u;
    };
    make();
    onResize(() => u.setSize({ width: width(), height: height }));
    onTheme(make);
  }

  /** uPlot hooks that show the page's tooltip: hit(u, idx, x, y) gives [name, rows] for the
   * data index and the values under the cursor, or null for none. */
  function plotTip(hit) {
    return {
      setCursor: [(u) => {
        const { idx, left, top } = u.cursor;
        const found = idx === null || idx === undefined || left < 0 ? null
          : hit(u, idx, u.posToVal(left, "x"), u.posToVal(top, "y"));
        if (!found) return hideTip();
        const r = u.over.getBoundingClientRect();
        showTip({ clientX: r.left + left, clientY: r.top + top }, found[0], found[1]);
      }],
    };
  }

  /** A chart of horizontal bars in HTML, each row's segments sized as shares of `max`; `rows`
   * are [row element, label, [[class, µs, name, rows(), attributes], ...], total µs]. */
  function barChart(id, cls, rows, max) {
    const chart = el("div", "ps-bars " + cls);
    chart.id = id;
    for (const [row, label, segs, total] of rows) {
      row.appendChild(el("span", "ps-bar-name", label));
      const track = el("span", "ps-bar-track");
      for (const [segCls, us, name, tipRows, attrs] of segs) {
        const seg = el("span", segCls);
        for (const k in attrs || {}) seg.setAttribute(k, attrs[k]);
        seg.style.width = "calc((100% - 4.5rem) * " + (max > 0 ? us / max : 0) + ")";
        bindTip(seg, name, tipRows);
        track.appendChild(seg);
      }
      track.appendChild(el("span", "ps-value-label", fmtTime(total)));
      row.appendChild(track);
      chart.appendChild(row);
    }
    const scale = el("span", "ps-bar-scale");
    const maxLabel = fmtTime(max);
    scale.append(el("span", "ps-axis-label", maxLabel.replace(/^[\d.]+/, "0")), el("span", "ps-axis-label", maxLabel));
    const axisRow = el("div", "ps-bar-axis");
    axisRow.append(el("span"), scale);
    chart.appendChild(axisRow);
    return chart;
  }

  // ---- header, theme -------------------------------------------------------------------

  function header() {
    const ul = document.getElementById("ps-summary");
    for (const line of D.summary || []) ul.appendChild(el("li", "", line));
    const diag = document.getElementById("ps-diagnostics");
    // each names its own level ("info: ...", "warning: ...")
    for (const line of D.diagnostics || []) diag.appendChild(el("li", "", line));
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
      rethemes.forEach((fn) => fn());
    });
    if (systemDark) {
      systemDark.addEventListener("change", () => {
        label();
        rethemes.forEach((fn) => fn());
      });
    }
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
      why.appendChild(el("span", "", f.explanation));
      body.appendChild(why);
      const fix = el("p", "ps-recommendation");
      fix.appendChild(el("strong", "", "What to change: "));
      fix.appendChild(el("span", "", f.recommendation));
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
    const bars = b.steps.concat([avg]);
    const names = b.steps.map((st) => st.name.replace("ProfilerStep#", "#")).concat(["average"]);
    const phases = b.phases.filter((p) => bars.some((st) => (st.host_us[p.id] || 0) > 0));
    const own = (p, i) => Math.max(bars[i].host_us[p.id] || 0, 0);
    // each phase's bar runs from 0 to the total of the phases up to it; drawn last phase first
    let run = bars.map(() => 0);
    const tops = phases.map((p) => (run = run.map((v, i) => v + own(p, i))));
    const maxWall = Math.max(...bars.map((st) => st.wall_us), ...run, 1e-9);
    const order = phases.map((_, k) => k).reverse();
    const hit = (u, idx, x, y) => {
      const st = bars[idx];
      const k = tops.findIndex((t, j) => y <= t[idx] && own(phases[j], idx) > 0);
      if (k < 0) return [st.name, [["wall", "step wall time", fmtTime(st.wall_us)]]];
      const us = own(phases[k], idx);
      return [st.name + ": " + phases[k].label, [
        ["time", "time", fmtTime(us)],
        ["share", "share of the step", fmtPct(st.wall_us ? (us * 100) / st.wall_us : 0)],
        ["wall", "step wall time", fmtTime(st.wall_us)],
      ]];
    };
    /** A label every so many steps, 44 px apart at least, and the average's. */
    const splits = (u) => {
      const every = Math.ceil((bars.length * 44 * uPlot.pxRatio) / u.bbox.width);
      return bars.map((_, i) => i).filter((i) => i % every === 0 || i === bars.length - 1);
    };
    plot(box, "ps-breakdown-chart", 260, () => [{
      scales: { x: { time: false, range: [-0.5, bars.length - 0.5] }, y: { range: [0, maxWall] } },
      series: [{}].concat(order.map((k) => {
        const colour = cssColor(phaseClass(phases[k].id));
        return { label: phases[k].label, fill: colour, stroke: colour, width: 0, points: { show: false },
          paths: uPlot.paths.bars({ size: [0.7, 160], align: 0 }) };
      })),
      axes: [xAxis((u, ticks) => ticks.map((i) => names[i]), { splits: splits, grid: { show: false } }), yAxis(timeTicks)],
      cursor: { x: false, y: false, points: { show: false }, drag: { x: false, y: false } },
      hooks: plotTip(hit),
    }, [bars.map((_, i) => i)].concat(order.map((k) => tops[k]))]);
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
    const rows = J.ranks.map((r) => {
      const straggler = r.rank === J.straggler;
      const row = el("div", "ps-rank-bar" + (straggler ? " ps-straggler" : ""));
      row.setAttribute("data-rank", String(r.rank));
      const segs = J.phases.filter((p) => (r.phases_us[p.id] || 0) > 0).map((p) => {
        const us = r.phases_us[p.id];
        return ["ps-seg " + phaseClass(p.id), us, "rank " + r.rank + ": " + p.label, () => [
          ["time", "time per step", fmtTime(us)],
          ["share", "share of the step", fmtPct(r.step_us ? (us * 100) / r.step_us : 0)],
          ["wait", "waits for other ranks", fmtTime(r.wait_us)],
        ], { "data-phase": p.id }];
      });
      return [row, "rank " + r.rank + (straggler ? " ⚑" : ""), segs, r.step_us];
    });
    const maxWall = Math.max(...J.ranks.map((r) => r.step_us), 1e-9);
    const chart = barChart("ps-ranks-chart", "ps-rank-bars" + (J.ranks.length > 64 ? " ps-thin" : ""), rows, maxWall);
    s.appendChild(chart);
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
    const known = (v) => v !== null && v !== undefined;
    // [heading, cell text, the data key the cell shows (its data-field)]
    const cols = [
      ["operation", (o) => o.operation],
      ["backend", (o) => o.backend],
      ["per step", (o) => o.calls_per_step.toPrecision(3)],
      ["size per call", (o) => (known(o.bytes) ? fmtBytes(o.bytes) : "–"), "bytes"],
      ["time per call", (o) => fmtTime(o.transfer_us), "transfer_us"],
      ["bus bandwidth", (o) => (known(o.bus_gbps) ? fmtRate(o.bus_gbps) : "–"), "bus_gbps"],
      ["what it does", (o) => o.meaning || "", "meaning"],
    ];
    const [table, body] = grid("ps-collective-table", cols.map((c) => c[0]));
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
      rootLabel.title = focus.n;
      const ROW = 22;
      const chart = el("div");
      chart.id = "ps-icicle";
      let depth = 0;
      const total = size(focus);
      // a box per node, its left and width shares of the row (CSS cuts its name to fit); a
      // node under 1/2000 of the row is left out
      (function place(n, x, w, d) {
        if (w < 5e-4) return;
        depth = Math.max(depth, d);
        const r = el("div", "ps-node " + kindClass(n.k), n.n);
        r.style.left = x * 100 + "%";
        r.style.width = w * 100 + "%";
        r.style.top = d * ROW + "px";
        r.setAttribute("data-depth", d);
        r.setAttribute("data-name", n.n);
        bindTip(r, n.n, () => nodeRows(n));
        r.addEventListener("click", () => zoom(d === 0 ? n.parent || n : n));
        chart.appendChild(r);
        let cx = x;
        const own = size(n);
        for (const c of n.ch) {
          const cw = own > 0 ? (w * size(c)) / own : 0;
          place(c, cx, cw, d + 1);
          cx += cw;
        }
      })(focus, 0, total > 0 ? 1 : 0, 0);
      chart.style.height = (depth + 1) * ROW + "px";
      box.replaceChildren(chart);
    }

    draw();
  }


  // ---- time by source line -------------------------------------------------------------

  function sourceLines() {
    const L = D.source_lines;
    if (!L) return;
    const s = show(document.getElementById("ps-source-lines"));
    const device = L.by === "device";
    s.appendChild(el("p", "ps-muted", L.intro));
    const heads = ["function", "CPU total", "CPU self"];
    if (device) heads.push(DEV + " total", DEV + " self");
    heads.push("of which backward", "calls");
    const [table, body] = grid("ps-source-table", heads);
    const cell = (field, text, cls) => {
      const td = el("td", cls === undefined ? "ps-n" : cls, text);
      td.setAttribute("data-field", field);
      return td;
    };
    for (const r of L.lines) {
      const tr = el("tr");
      tr.setAttribute("data-frame", r.frame);
      tr.append(cell("frame", r.frame, "ps-name"), cell("total_cpu_us", fmtTime(r.total_cpu_us)),
        cell("self_cpu_us", fmtTime(r.self_cpu_us)));
      if (device) {
        tr.append(cell("total_device_us", fmtTime(r.total_device_us)),
          cell("self_device_us", fmtTime(r.self_device_us)));
      }
      tr.append(cell("backward_us", fmtTime(device ? r.backward_device_us : r.backward_cpu_us)),
        cell("calls", String(r.calls)));
      body.appendChild(tr);
    }
    if (L.outside_cpu_us > 0 || L.outside_device_us > 0) {
      const tr = el("tr", "ps-outside");
      tr.append(cell("frame", L.outside_label, "ps-name"), cell("total_cpu_us", ""),
        cell("self_cpu_us", fmtTime(L.outside_cpu_us)));
      if (device) tr.append(cell("total_device_us", ""), cell("self_device_us", fmtTime(L.outside_device_us)));
      tr.append(cell("backward_us", ""), cell("calls", ""));
      body.appendChild(tr);
    }
    s.appendChild(scrolling(table));
  }

  // ---- horizontal bars: top operators, top kernels -------------------------------------

  function hbars(sectionId, chartId, items, valueLabel) {
    if (!items || !items.length) return;
    const s = show(document.getElementById(sectionId));
    const rows = items.map((it) => {
      const row = el("div", "ps-hbar");
      row.setAttribute("data-name", it.name);
      return [row, it.name, [["ps-bar", it.us, it.name, () => [
        ["value", valueLabel, fmtTime(it.us)],
        ["calls", "calls", String(it.calls)],
        ["kind", "kind", it.kind],
        ["meaning", "what it is", it.meaning],
      ]]], it.us];
    });
    s.appendChild(barChart(chartId, "ps-name-bars", rows, Math.max(...items.map((x) => x.us), 1e-9)));
  }

  // ---- timelines -----------------------------------------------------------------------

  /** A timeline chart: `series` are {name, label, values, colour (a CSS variable), fmt}; the
   * y axis runs from 0 to `maxY`, its ticks from `ticks` at steps from `incrs`. */
  function timeline(sectionId, chartId, intro, series, ticks, incrs, maxY, area) {
    const t = D.timelines;
    const s = show(document.getElementById(sectionId));
    s.appendChild(intro);
    const box = el("div", "ps-chart");
    s.appendChild(box);
    const n = Math.max(...series.map((x) => x.values.length));
    const xs = Array.from({ length: n }, (_, i) => (i + 0.5) * t.bucket_us);
    // each step's window on the slower clock, and the host's range in it
    const steps = (t.steps || []).map(([name, a, b, ha, hb]) =>
      ({ name: name, a: a, b: b, ha: ha === undefined ? a : ha, hb: hb === undefined ? b : hb }));
    const hit = (u, idx, x) => {
      const rows = [["time", "slice", fmtTime(xs[idx] - t.bucket_us / 2) + " to " + fmtTime(xs[idx] + t.bucket_us / 2)]];
      series.forEach((ser, k) => rows.push([ser.name, ser.label, ser.fmt(u.data[k + 1][idx])]));
      const st = steps.find((w) => x >= w.a && x < w.b);
      if (st) {
        rows.push(["step", "step", st.name]);
        rows.push(["step_time", "step time", fmtTime(st.b - st.a)]);
        rows.push(["host_range", "host range", fmtTime(st.hb - st.ha)]);
        rows.push(["host", "host", x < st.hb ? "in this step" : "done, the " + NOUN + " catches up"]);
      }
      return ["at " + fmtTime(x), rows];
    };
    const drawSteps = (u) => {
      const ctx = u.ctx;
      const { left, top, width, height } = u.bbox;
      const at = (v) => u.valToPos(v, "x", true);
      ctx.save();
      ctx.beginPath();
      ctx.rect(left, top, width, height);
      ctx.clip();
      steps.forEach((st, i) => {
        ctx.fillStyle = cssVar("--band");
        ctx.globalAlpha = i % 2 ? 0.45 : 1;
        ctx.fillRect(at(st.a), top, Math.max(1, at(st.b) - at(st.a)), height);
        if (st.ha !== st.a || st.hb !== st.b) {
          ctx.fillStyle = cssVar("--muted");
          ctx.globalAlpha = 0.7;
          ctx.fillRect(at(st.ha), top, Math.max(1, at(st.hb) - at(st.ha)), 3 * uPlot.pxRatio);
        }
      });
      ctx.restore();
    };
    plot(box, chartId, 180, () => [{
      scales: { x: { time: false, range: [0, t.bucket_us * n] }, y: { range: [0, maxY] } },
      series: [{}].concat(series.map((ser) => ({ label: ser.label, stroke: cssVar(ser.colour), width: 1.5,
        fill: area ? cssVar("--area") : undefined, points: { show: false } }))),
      axes: [xAxis(timeTicks), yAxis(ticks, { incrs: incrs })],
      cursor: { y: false },
      hooks: Object.assign(plotTip(hit), { drawClear: [drawSteps] }),
    }, [xs].concat(series.map((x) => x.values))]);
    return s;
  }

  function timelines() {
    const t = D.timelines;
    if (!t) return;
    if (t.device_busy && t.device_busy.length) {
      const intro = el("p", "ps-muted", "Share of each time slice (" + fmtTime(t.bucket_us) +
        ") in which the " + NOUN + " ran kernels, copies or memsets; shaded bands are the profiled steps, " +
        "each until the " + NOUN + " finished what the host launched in it; the bar along the top is the host's range. " +
        "Drag to zoom in, double-click to zoom out.");
      const busy = { name: "busy", label: DEV + " busy share", values: t.device_busy, colour: "--bar", fmt: (v) => fmtPct(v * 100) };
      timeline("ps-busy", "ps-busy-chart", intro, [busy], pctTicks, undefined, 1, true);
    }
    if (t.queue_depth && t.queue_depth.length) {
      const maxQ = Math.max(t.queue_limit || 0, ...t.queue_depth, 1);
      const intro = el("p", "ps-muted", "Most launched items waiting on one stream at a launch in each slice: the host " +
        "runs that far ahead of the " + NOUN + "; at " + (t.queue_limit || 1024) + " its launches block until an item ends.");
      const queue = { name: "queue", label: "launched items waiting", values: t.queue_depth, colour: "--bar", fmt: (v) => v + " items" };
      timeline("ps-queue", "ps-queue-chart", intro, [queue], unitTicks([[1, "items"]]), COUNT_INCRS, maxQ, false);
    }
    const mem = t.memory || {};
    const names = Object.keys(mem).filter((k) => mem[k] && mem[k].length);
    if (names.length) {
      const series = names.map((k) => ({ name: k, label: (k === "cpu" ? "CPU" : DEV) + " memory allocated",
        values: mem[k], colour: k === "device" ? "--bar-device" : "--bar", fmt: fmtBytes }));
      const maxY = Math.max(...series.map((x) => Math.max(...x.values)), 1);
      const legend = swatchLegend(series.map((ser) => ({ colour: ser.colour,
        label: ser.label + ", peak " + fmtBytes(Math.max(...ser.values)) })));
      timeline("ps-memory", "ps-memory-chart", legend, series, byteTicks, BYTE_INCRS, maxY, false);
    }
    memoryPeaks();
  }

  /** Under the memory chart: each memory's peak and the ops whose blocks it held. */
  function memoryPeaks() {
    const M = D.memory_peaks;
    if (!M || !M.peaks.length) return;
    const s = document.getElementById("ps-memory");
    if (s.hidden) show(s);
    s.appendChild(el("p", "ps-muted", M.intro));
    const [table, body] = grid("ps-memory-peak", ["memory", "held by", "bytes", "blocks"]);
    const cell = (field, text, cls) => {
      const td = el("td", cls === undefined ? "ps-n" : cls, text);
      td.setAttribute("data-field", field);
      return td;
    };
    for (const p of M.peaks) {
      const label = (p.memory === "cpu" ? "CPU" : DEV) + " peak " + fmtBytes(p.peak_bytes) + " at " + fmtTime(p.at_us);
      const rows = p.blocks_known ? p.held_by.map((h) => [h.op, fmtBytes(h.bytes), String(h.blocks)]) : [[M.no_blocks, "", ""]];
      if (p.blocks_known) rows.push([M.before_window, fmtBytes(p.before_window_bytes), ""]);
      rows.forEach(([op, bytes, blocks], i) => {
        const tr = el("tr");
        tr.setAttribute("data-memory", p.memory);
        tr.append(cell("memory", i === 0 ? label : "", ""), cell("op", op, "ps-name"), cell("bytes", bytes), cell("blocks", blocks));
        body.appendChild(tr);
      });
    }
    s.appendChild(scrolling(table));
    for (const p of M.peaks) {
      if (!p.holders) continue;
      const parts = Object.entries(p.holders).filter(([, b]) => b > 0).map(([h, b]) => h + " " + fmtBytes(b));
      const line = el("p", "ps-muted ps-memory-holders", (p.memory === "cpu" ? "CPU" : DEV) + " peak, " + M.holders + ": " + parts.join(", "));
      line.setAttribute("data-memory", p.memory);
      s.appendChild(line);
    }
  }

  /** A memory snapshot's peaks: what held each device's, by holder and by site. */
  function snapshot() {
    const S = D.snapshot;
    if (!S) return;
    const s = show(document.getElementById("ps-snapshot"));
    s.appendChild(el("p", "ps-muted", S.intro));
    const meaning = {};
    for (const h of S.holders) meaning[h.holder] = h.meaning;
    const cell = (field, text, cls) => {
      const td = el("td", cls === undefined ? "ps-n" : cls, text);
      td.setAttribute("data-field", field);
      return td;
    };
    S.devices.forEach((d, i) => {
      s.appendChild(el("h3", "", "Device " + d.device + ": peak " + fmtBytes(d.peak_bytes)));
      const facts = el("ul", "ps-snapshot-facts");
      facts.appendChild(el("li", "", "Reached " + (d.peak_event >= 0 ? "at allocation " + d.peak_allocation + " of " + d.allocations : "before the first event") +
        (d.peak_at_us === null ? "" : ", " + fmtTime(d.peak_at_us) + " in") + ", made in " + (d.peak_phase === "optimizer" ? "the optimizer's step" : d.peak_phase === "other" ? "none of forward, backward and the step" : "the " + d.peak_phase) + "."));
      facts.appendChild(el("li", "", fmtBytes(d.start_bytes) + " allocated when the recording began; " +
        fmtBytes(d.reserved_bytes) + " reserved from the driver at the end."));
      s.appendChild(facts);
      s.appendChild(el("p", "ps-muted", S.holders_intro));
      const [ht, hb] = grid(i === 0 ? "ps-snapshot-holders" : "", ["held by", "bytes", "what it is"]);
      ht.classList.add("ps-snapshot-holders");
      for (const h of S.holders) {
        const v = d.holders[h.holder];
        if (!v) continue;
        const tr = el("tr");
        tr.setAttribute("data-holder", h.holder);
        tr.append(cell("holder", h.holder, "ps-name"), cell("bytes", fmtBytes(v)), cell("meaning", h.meaning, "ps-meaning"));
        hb.appendChild(tr);
      }
      s.appendChild(scrolling(ht));
      const [st, sb] = grid(i === 0 ? "ps-snapshot-sites" : "", ["site", "bytes", "blocks", "held by"]);
      st.classList.add("ps-snapshot-sites");
      for (const x of d.sites) {
        const tr = el("tr");
        tr.setAttribute("data-site", x.site);
        const name = cell("site", x.site, "ps-name");
        if (x.filename) name.title = x.filename + ":" + x.line;
        tr.append(name, cell("bytes", fmtBytes(x.bytes)), cell("blocks", String(x.blocks)), cell("holder", x.holder, ""));
        sb.appendChild(tr);
      }
      s.appendChild(scrolling(st));
    });
  }

  // ---- launches and copies -------------------------------------------------------------

  const COPY_COLOURS = ["--bar", "--bar-device", "--high", "--low", "--info", "--medium"];

  function launches() {
    const W = D.device_work;
    if (!W) return;
    const s = show(document.getElementById("ps-launches"));
    const facts = el("ul");
    facts.id = "ps-launch-facts";
    const k = W.short_kernels;
    if (k) {
      const li = el("li", "", "Short kernels (each shorter than its launch call): " + k.count + " of " +
        k.kernels + ", " + fmtPct(k.share_pct) + " of the kernel time (" + fmtTime(k.device_us) +
        "); their launches took " + fmtTime(k.launch_us) + " of host time. The " + NOUN +
        " finishes them faster than the host queues the next: fusing them, or a CUDA graph, saves the launches.");
      li.setAttribute("data-field", "short_kernels");
      facts.appendChild(li);
    }
    const d = W.launch_delay;
    if (d) {
      const li = el("li", "", "Launch delay (start less its launch call's end), " + d.items + " items: median " +
        fmtTime(d.median_us) + ", p90 " + fmtTime(d.p90_us) + ", max " + fmtTime(d.max_us) +
        ". Behind earlier work on its stream: median " + fmtTime(d.behind_earlier_work_median_us) +
        "; the rest, its stream free: median " + fmtTime(d.launch_latency_median_us) + ", p90 " +
        fmtTime(d.launch_latency_p90_us) + ".");
      li.setAttribute("data-field", "launch_delay");
      facts.appendChild(li);
    }
    s.appendChild(facts);
    if (k && k.launchers.length) {
      const [table, body] = grid("ps-short-launchers", ["op", "short kernels", DEV + " time"]);
      for (const x of k.launchers) {
        const tr = el("tr");
        tr.setAttribute("data-op", x.op);
        tr.append(el("td", "ps-name", x.op), el("td", "ps-n", String(x.kernels)), el("td", "ps-n", fmtTime(x.device_us)));
        body.appendChild(tr);
      }
      s.appendChild(scrolling(table));
    }
    const copies = W.copies || [];
    if (!copies.length) return;
    const [table, body] = grid("ps-copy-table", ["direction", "copies", "bytes", "busy", "while copying", "median copy"]);
    for (const c of copies) {
      const tr = el("tr");
      tr.setAttribute("data-direction", c.direction);
      const gbps = el("td", "ps-n", fmtRate(c.gbps));
      gbps.setAttribute("data-field", "gbps");
      tr.append(el("td", "", c.direction), el("td", "ps-n", String(c.copies)), el("td", "ps-n", fmtBytes(c.bytes)),
        el("td", "ps-n", fmtTime(c.busy_us)), gbps, el("td", "ps-n", fmtRate(c.median_gbps)));
      body.appendChild(tr);
    }
    s.appendChild(scrolling(table));
    // bandwidth over time: bytes over copying time in each slice, one series a direction
    const xs = Array.from(new Set(copies.flatMap((c) => c.series_ms_gbps.map((p) => p[0])))).sort((a, b) => a - b);
    if (!xs.length) return;
    const series = copies.map((c, i) => {
      const at = new Map(c.series_ms_gbps.map((p) => [p[0], p[1]]));
      return { label: c.direction, colour: COPY_COLOURS[i % COPY_COLOURS.length], values: xs.map((x) => (at.has(x) ? at.get(x) : null)) };
    });
    const legend = swatchLegend(series);
    s.append(el("p", "ps-muted", "Copy bandwidth over the trace: bytes over the time copies ran, a bar per slice " +
      "with copies; no bar where none ran."), legend);
    const box = el("div", "ps-chart");
    s.appendChild(box);
    const rateTicks = unitTicks([[1, "GB/s"]]);
    const hit = (u, idx) => ["at " + xs[idx].toFixed(3) + " ms",
      series.map((ser, j) => [ser.label, ser.label, u.data[j + 1][idx] === null ? "–" : fmtRate(u.data[j + 1][idx])])];
    // a slice's rate is measured only while its copies ran: a bar each, never a line that
    // joins two slices through time no copy ran in; a later direction's bars are narrower,
    // so one drawn over another's at the same slice leaves it in view
    const bars = (j) => uPlot.paths.bars({ size: [0.8 * (1 - j / (series.length + 1)), 8 * (1 - j / (series.length + 1))] });
    // the x range reaches past the first and last slices, so that their bars are whole
    const around = (u, lo, hi) => {
      const pad = (hi - lo) * 0.04 || Math.max(hi * 0.5, 1e-3);
      return [lo - pad, hi + pad];
    };
    const msTicks = unitTicks([[1, "ms"]]);
    plot(box, "ps-copy-chart", 180, () => [{
      scales: { x: { time: false, range: around }, y: { range: [0, Math.max(1, ...series.flatMap((x) => x.values.filter((v) => v !== null)))] } },
      series: [{}].concat(series.map((ser, j) => ({ label: ser.label, stroke: cssVar(ser.colour), fill: cssVar(ser.colour),
        width: 1, paths: bars(j), points: { show: false } }))),
      // nothing runs before the first device item (0 ms): no tick there
      axes: [xAxis((u, splits) => msTicks(u, splits).map((t, i) => (splits[i] < 0 ? "" : t))), yAxis(rateTicks)],
      cursor: { y: false },
      hooks: plotTip(hit),
    }, [xs].concat(series.map((x) => x.values))]);
  }


  const BOUND_COLOURS = { compute: "--high", memory: "--low", latency: "--info", link: "--medium" };

  function roofline() {
    const R = D.roofline;
    if (!R) return;
    const s = show(document.getElementById("ps-roofline"));
    const facts = el("ul");
    facts.id = "ps-roofline-facts";
    const fact = (field, text) => {
      const li = el("li", "", text);
      li.setAttribute("data-field", field);
      facts.appendChild(li);
    };
    const peaks = Object.entries(R.peak_tflops);
    if (R.device) {
      fact("ceilings", R.device + ": " + peaks.map(([p, t]) => p.toUpperCase() + " " + fmtFlopRate(t)).join(", ") +
        "; memory " + fmtRate(R.bandwidth_gbs) + ".");
    } else {
      fact("ceilings", R.no_device);
    }
    fact("coverage", "Ops with a formula: " + fmtPct(R.coverage_pct) + " of the " + NOUN + " time (" +
      fmtTime(R.covered_us) + " of " + fmtTime(R.device_us) + ").");
    const bounds = Object.entries(R.device_us_by_bound).sort((a, b) => b[1] - a[1]);
    if (bounds.length) {
      fact("bounds", "By bound: " + bounds.map(([b, us]) => b + " " + fmtPct(100 * us / (R.covered_us || 1)) +
        " (" + R.bound_meaning[b] + ")").join("; ") + ".");
    }
    s.appendChild(facts);
    const ops = R.ops;
    // the chart: achieved FLOP/s against FLOPs per byte, both logarithmic, under the roofs
    const placed = ops.filter((o) => o.flops > 0 && o.bytes > 0 && o.tflops > 0);
    if (placed.length) {
      const lo = Math.min(...placed.map((o) => o.intensity)) / 4;
      const ridges = peaks.map(([, t]) => (R.bandwidth_gbs ? t * 1e3 / R.bandwidth_gbs : 0)).filter((x) => x > 0);
      const hi = Math.max(...placed.map((o) => o.intensity), ...ridges) * 4;
      const grid_ = [];
      for (let x = lo; x < hi; x *= 1.25) grid_.push(x);
      const xs = Array.from(new Set(grid_.concat(ridges, placed.map((o) => o.intensity)))).sort((a, b) => a - b);
      const roofSeries = R.bandwidth_gbs ? peaks.map(([p, t]) => ({
        label: p.toUpperCase() + " roof", values: xs.map((x) => Math.min(t, x * R.bandwidth_gbs / 1e3)),
      })) : [];
      const byBound = {};
      for (const o of placed) (byBound[o.bound || "rates"] = byBound[o.bound || "rates"] || []).push(o);
      const opAt = new Map();
      const pointSeries = Object.entries(byBound).map(([b, list]) => {
        const values = xs.map(() => null);
        for (const o of list) {
          const i = xs.indexOf(o.intensity);
          if (values[i] === null || o.tflops > values[i]) {
            values[i] = o.tflops;
            opAt.set(i + ":" + b, o);
          }
        }
        return { label: b, bound: b, colour: BOUND_COLOURS[b] || "--bar", values: values };
      });
      const roofs = roofSeries.length
        ? [{ colour: "--muted", label: "roofs: " + roofSeries.map((r) => r.label.replace(" roof", "")).join(", ") }]
        : [];
      const legend = swatchLegend(pointSeries.concat(roofs));
      s.append(el("p", "ps-muted", R.chart_intro), legend);
      const box = el("div", "ps-chart");
      s.appendChild(box);
      const hit = (u, idx) => {
        for (const ser of pointSeries) {
          const o = opAt.get(idx + ":" + ser.bound);
          if (o) return [o.op, roofRows(o)];
        }
        return null;
      };
      plot(box, "ps-roofline-chart", 260, () => [{
        scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
        series: [{}].concat(
          roofSeries.map((r) => ({ label: r.label, stroke: cssVar("--muted"), width: 1.5, points: { show: false } })),
          pointSeries.map((ser) => ({ label: ser.label, stroke: cssVar(ser.colour), fill: cssVar(ser.colour),
            paths: () => null, points: { show: true, size: 8, fill: cssVar(ser.colour) } }))),
        axes: [xAxis((u, splits) => splits.map((v) => (v === null ? "" : fmtIntensity(v)))),
          yAxis((u, splits) => splits.map((v) => (v === null ? "" : fmtFlopRate(v))))],
        cursor: { y: false },
        hooks: plotTip(hit),
      }, [xs].concat(roofSeries.map((r) => r.values), pointSeries.map((p) => p.values))]);
    }
    const [table, body] = grid("ps-roofline-table", ["op", "input dims", "calls", DEV + " time", "FLOP/s", "bytes/s",
      "FLOP/B", "bound", "% of roof"]);
    for (const o of ops) {
      const tr = el("tr");
      tr.setAttribute("data-op", o.op);
      const cell = (field, text, cls) => {
        const td = el("td", cls === undefined ? "ps-n" : cls, text);
        td.setAttribute("data-field", field);
        return td;
      };
      tr.append(cell("op", o.op, "ps-name"), cell("input_dims", tensorDims(o.input_dims), "ps-name"),
        cell("calls", String(o.calls)), cell("device_us", fmtTime(o.device_us)),
        cell("tflops", o.flops ? fmtFlopRate(o.tflops) : "–"), cell("tbps", fmtRate(o.tbps * 1e3)),
        cell("intensity", o.intensity.toPrecision(3)), cell("bound", o.bound || "–", ""),
        cell("roof_pct", roofShare(R, o)));
      body.appendChild(tr);
    }
    s.appendChild(scrolling(table));
  }

  /** FLOPs per byte as a tick label: 0.1 FLOP/B, 1 FLOP/B, 1000 FLOP/B. */
  function fmtIntensity(v) {
    return (v >= 1 ? String(Math.round(v)) : String(Number(v.toPrecision(1)))) + " FLOP/B";
  }

  function roofRows(o) {
    return [["input_dims", "input dims", tensorDims(o.input_dims)], ["calls", "calls", String(o.calls)],
      ["device_us", DEV + " time", fmtTime(o.device_us)], ["tflops", "achieved", fmtFlopRate(o.tflops)],
      ["tbps", "memory traffic", fmtRate(o.tbps * 1e3)], ["intensity", "FLOPs per byte", o.intensity.toPrecision(3)],
      ["bound", "bound", o.bound || "–"], ["roof_pct", "of its roof", roofShare(D.roofline, o)]];
  }

  /** An op's share of its roof; above 100%, what that means (its inputs came from cache). */
  function roofShare(R, o) {
    if (o.roof_pct === null) return "–";
    return o.roof_pct > 100 ? R.above_roof : fmtPct(o.roof_pct);
  }

  /** `Input Dims` without the empty entries of scalars and absent arguments. */
  function tensorDims(text) {
    try {
      const dims = JSON.parse(text).filter((d) => Array.isArray(d) && d.length);
      return dims.map((d) => "[" + d.join(", ") + "]").join(" ") || "[]";
    } catch (e) {
      return text;
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
        } else if (c.key === "name") {
          // CSS shows a long name's first lines; its title holds it whole
          td = el("td", "ps-name");
          td.appendChild(el("span", "ps-clamp", v));
        } else {
          td = el("td", c.key === "meaning" ? "ps-meaning" : "", v);
          if (c.key === "meaning" && row.called_from) {
            // the user's function that holds most of the row's time (with_stack)
            td.appendChild(el("div", "ps-from", "from " + row.called_from));
          }
        }
        if (c.key === "name") {
          const about = row.layer + ": " + row.cells[cols.findIndex((x) => x.key === "meaning")] + (row.reading ? "\n" + row.reading : "");
          td.title = (String(v).length > LONG_NAME ? v + "\n\n" : "") + about;
        }
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

  // ---- resize, theme -------------------------------------------------------------------

  const redraws = [];
  function onResize(fn) {
    redraws.push(fn);
  }
  let pending = 0;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(() => redraws.forEach((fn) => fn()), 150);
  });
  /** Charts to draw again in the other theme's colours. */
  const rethemes = [];
  function onTheme(fn) {
    rethemes.push(fn);
  }

  header();
  theme();
  verdict();
  findings();
  ranks();
  breakdown();
  collectives();
  launches();
  roofline();
  tree();
  sourceLines();
  snapshot();
  hbars("ps-top-ops", "ps-ops-chart", D.top_ops, "self CPU");
  hbars("ps-top-kernels", "ps-kernels-chart", D.top_kernels, "self " + DEV);
  timelines();
  table();
  notes();
})();
