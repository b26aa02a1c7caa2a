/* leaksnap report: the memory curve, one point per snapshot for each line
 * (the bytes of every record compared, then the top suspects), drawn as
 * SVG as wide as the page with axes in human units, a legend, and the
 * values on hover.  The x axis is the capture time, as time since the first
 * snapshot, when every snapshot has one and they were taken in the order
 * given over some time; else the snapshot's number. */
'use strict';

/* Round tick steps for a byte axis: 1, 2 or 5 times a power of ten of the
 * unit the largest value is shown in (KiB, MiB, ...). */
/* Seconds as "12.345 s", "2 min 5 s", "1 h 2 min". */
function fmtSeconds(t) {
  if (t < 60) return `${+t.toFixed(3)} s`;
  if (t < 3600) return `${Math.floor(t / 60)} min ${Math.round(t % 60)} s`;
  return `${Math.floor(t / 3600)} h ${Math.round((t % 3600) / 60)} min`;
}

function byteTicks(max, count) {
  if (max <= 0) return {step: 1, unit: 1, ticks: [0, 1]};
  let unit = 1;
  while (max / unit >= 1024 && unit < Math.pow(1024, 4)) unit *= 1024;
  const raw = max / unit / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  let step = mag;
  for (const m of [1, 2, 5, 10]) { step = m * mag; if (step >= raw) break; }
  step *= unit;
  const ticks = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(v);
  if (ticks[ticks.length - 1] < max) ticks.push(ticks[ticks.length - 1] + step);
  return {step, unit, ticks};
}

/* A time axis for @secs (seconds since the first snapshot, rising): the
 * unit that reads best for the span, round ticks in it, their labels. */
const TIME_UNITS = [[0.001, 'ms'], [1, 's'], [60, 'min'], [3600, 'h'], [86400, 'd']];
function timeTicks(span, count) {
  let u = 0;
  while (u + 1 < TIME_UNITS.length && span >= 2 * TIME_UNITS[u + 1][0]) u++;
  const [unit, name] = TIME_UNITS[u];
  const raw = span / unit / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  let step = mag;
  for (const m of [1, 2, 5, 10]) { step = m * mag; if (step >= raw) break; }
  const ticks = [];
  for (let v = 0; v <= span / unit + step * 1e-9; v += step) {
    const digits = step >= 1 ? 0 : Math.min(3, Math.ceil(-Math.log10(step)));
    ticks.push({at: v * unit, label: `${+v.toFixed(digits)} ${name}`});
  }
  return ticks;
}

/* The seconds since the first snapshot of each of @snaps (the document's
 * snapshots), or null when the axis is the snapshot number: a snapshot
 * without a time, times that go back, or no time between first and last. */
function snapshotTimes(snaps) {
  if (!snaps.length || snaps.some(s => s.time_ns === null || s.time_ns === undefined))
    return null;
  /* (as numbers, ns since the epoch keep about a quarter of a microsecond) */
  const t = snaps.map(s => (Number(s.time_ns) - Number(snaps[0].time_ns)) / 1e9);
  for (let i = 1; i < t.length; i++) if (t[i] < t[i - 1]) return null;
  return t[t.length - 1] > 0 ? t : null;
}

/* @series: [{name, values[], title}], one value per snapshot.  @labels:
 * one short label per snapshot, @names: the full name of each; @times:
 * seconds since the first snapshot (snapshotTimes), or null; @first: the
 * first snapshot's capture time, shown with the axis.  @opts (may be
 * absent), for curves over other things than snapshots (history's builds):
 * xTitle, what a point of the x axis is ("build"); onPick(i), called when
 * a point or an x label is clicked.  A value may then be null (no point:
 * the line has a gap) or negative (the y axis goes below 0). */
function renderCurve(container, labels, names, series, times, first, opts) {
  const draw = () => { container.textContent = ''; drawCurve(container, labels, names, series, times, first, opts || {}); };
  draw();
  /* as wide as the page, again when the window's width changes */
  let width = container.clientWidth, pending = 0;
  window.addEventListener('resize', () => {
    if (container.clientWidth === width) return;
    clearTimeout(pending);
    pending = setTimeout(() => { width = container.clientWidth; draw(); }, 100);
  });
}

/* Byte ticks from @min (0 or below) to @max: byteTicks' step over the
 * larger side, its multiples either side of 0. */
function byteTicksBoth(min, max, count) {
  if (min >= 0) return byteTicks(max, count);
  const ax = byteTicks(Math.max(max, -min), count);
  const ticks = [];
  for (let v = -Math.ceil(-min / ax.step - 1e-9) * ax.step; v <= max + ax.step * 1e-9; v += ax.step)
    ticks.push(v);
  if (ticks[ticks.length - 1] < max) ticks.push(ticks[ticks.length - 1] + ax.step);
  if (ticks.length < 2) ticks.push(ticks[0] + ax.step);
  return {step: ax.step, unit: ax.unit, ticks};
}

function drawCurve(container, labels, names, series, times, first, opts) {
  const W = Math.max(320, Math.floor(container.clientWidth) || 900), H = 320, L = 76, R = 24,
    T = 16, B = 40;
  const n = labels.length;
  let max = 0, min = 0;
  for (const s of series) for (const v of s.values) if (v !== null) {
    max = Math.max(max, v);
    min = Math.min(min, v);
  }
  const ax = byteTicksBoth(min, max, 5);
  const top = ax.ticks[ax.ticks.length - 1] || 1, bottom = Math.min(0, ax.ticks[0]);
  const span = times ? times[n - 1] : 0;
  const xt = t => L + t * (W - L - R) / span;
  const x = i => times ? xt(times[i]) : L + (n > 1 ? i * (W - L - R) / (n - 1) : (W - L - R) / 2);
  const y = v => T + (H - T - B) * (1 - (v - bottom) / (top - bottom));
  const where = i => opts.xTitle ? `${opts.xTitle} ${names[i]}` : `snapshot ${i + 1}`;
  const pick = (node, i) => {
    if (!opts.onPick) return;
    node.classList.add('pick');
    node.addEventListener('click', () => opts.onPick(i));
  };
  const svg = svgEl('svg', {viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'curve',
    role: 'img', 'aria-label': 'bytes in each snapshot', 'data-axis': times ? 'time' : 'snapshot'});
  const grid = svgEl('g', {class: 'axis'});
  for (const t of ax.ticks) {
    grid.appendChild(svgEl('line', {x1: L, x2: W - R, y1: y(t), y2: y(t), class: 'grid'}));
    grid.appendChild(svgEl('text', {x: L - 6, y: y(t) + 4, 'text-anchor': 'end',
      text: fmtBytes(t)}));
  }
  if (times) {
    for (const t of timeTicks(span, Math.max(2, Math.min(10, Math.floor((W - L - R) / 110))))) {
      grid.appendChild(svgEl('line', {x1: xt(t.at), x2: xt(t.at), y1: H - B, y2: H - B + 5,
        class: 'tick'}));
      grid.appendChild(svgEl('text', {x: xt(t.at), y: H - B + 18, 'text-anchor': 'middle',
        class: 'x-label', text: t.label}));
    }
  } else {
    /* (over builds: as many labels as fit, the ends kept inside the chart;
     * every point keeps its own title) */
    const longest = Math.max(1, ...labels.map(l => String(l).length));
    const every = opts.xTitle ? Math.max(1, Math.ceil(n * Math.min(longest * 7 + 12, 160) /
      Math.max(1, W - L - R))) : 1;
    for (let i = 0; i < n; i++) {
      if (i !== n - 1 && (i % every || n - 1 - i < every)) continue;
      const anchor = opts.xTitle && n > 1 && i === 0 ? 'start'
        : opts.xTitle && n > 1 && i === n - 1 ? 'end' : 'middle';
      const tx = svgEl('text', {x: x(i), y: H - B + 18, 'text-anchor': anchor,
        class: 'x-label', text: labels[i], 'data-index': i});
      tx.appendChild(svgEl('title', {text: names[i]}));
      pick(tx, i);
      grid.appendChild(tx);
    }
  }
  grid.appendChild(svgEl('text', {x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle',
    class: 'axis-title', text: times ? `time since the first snapshot (${fmtTime(first)})`
      : opts.xTitle || 'snapshot'}));
  svg.appendChild(grid);

  const legend = el('ul', {class: 'legend'});
  series.forEach((s, si) => {
    const color = PALETTE[si % PALETTE.length];
    const g = svgEl('g', {class: 'line', 'data-series': si});
    /* one polyline per run of values without a gap */
    let run = [];
    const flush = () => {
      if (run.length) g.appendChild(svgEl('polyline', {points: run.join(' '), fill: 'none',
        stroke: color, 'stroke-width': si === 0 && !opts.xTitle ? 3 : 2}));
      run = [];
    };
    s.values.forEach((v, i) => { if (v === null) flush(); else run.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`); });
    flush();
    s.values.forEach((v, i) => {
      if (v === null) return;
      const c = svgEl('circle', {cx: x(i), cy: y(v), r: 4, fill: color, class: 'pt',
        'data-series': si, 'data-snapshot': i, 'data-bytes': v});
      c.appendChild(svgEl('title', {text: `${s.name}: ${fmtBytes(v)} (${fmtInt(v)} bytes) ` +
        `in ${where(i)}`}));
      pick(c, i);
      c.addEventListener('mousemove', ev => tip(ev, [s.title || s.name, opts.xTitle ? where(i) : names[i],
        ...(times ? [`snapshot ${i + 1}, ${fmtSeconds(times[i])} after the first`] : []),
        `${fmtBytes(v)} (${fmtInt(v)} bytes)`]));
      c.addEventListener('mouseleave', untip);
      g.appendChild(c);
    });
    svg.appendChild(g);
    const sw = el('span', {class: 'swatch'});
    sw.style.background = color;
    legend.appendChild(el('li', {'data-series': si, title: s.title || s.name}, sw, s.name));
  });
  container.appendChild(svg);
  container.appendChild(legend);
}
