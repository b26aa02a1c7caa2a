/* leaksnap report: the memory curve, one point per snapshot for each line
 * (the bytes of every record compared, then the top suspects), drawn as
 * SVG with axes in human units, a legend, and the values on hover. */
'use strict';

/* Round tick steps for a byte axis: 1, 2 or 5 times a power of ten of the
 * unit the largest value is shown in (KiB, MiB, ...). */
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

/* @series: [{name, values[], title}], one value per snapshot.  @labels:
 * one short label per snapshot, @names: the full name of each. */
function renderCurve(container, labels, names, series) {
  const W = 900, H = 320, L = 76, R = 16, T = 16, B = 40;
  const n = labels.length;
  let max = 0;
  for (const s of series) for (const v of s.values) max = Math.max(max, v);
  const ax = byteTicks(max, 5);
  const top = ax.ticks[ax.ticks.length - 1] || 1;
  const x = i => L + (n > 1 ? i * (W - L - R) / (n - 1) : (W - L - R) / 2);
  const y = v => T + (H - T - B) * (1 - v / top);
  const svg = svgEl('svg', {viewBox: `0 0 ${W} ${H}`, class: 'curve', role: 'img',
    'aria-label': 'bytes in each snapshot'});
  const grid = svgEl('g', {class: 'axis'});
  for (const t of ax.ticks) {
    grid.appendChild(svgEl('line', {x1: L, x2: W - R, y1: y(t), y2: y(t), class: 'grid'}));
    grid.appendChild(svgEl('text', {x: L - 6, y: y(t) + 4, 'text-anchor': 'end',
      text: fmtBytes(t)}));
  }
  for (let i = 0; i < n; i++) {
    const tx = svgEl('text', {x: x(i), y: H - B + 18, 'text-anchor': 'middle', text: labels[i]});
    tx.appendChild(svgEl('title', {text: names[i]}));
    grid.appendChild(tx);
  }
  grid.appendChild(svgEl('text', {x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle',
    class: 'axis-title', text: 'snapshot'}));
  svg.appendChild(grid);

  const legend = el('ul', {class: 'legend'});
  series.forEach((s, si) => {
    const color = PALETTE[si % PALETTE.length];
    const g = svgEl('g', {class: 'line', 'data-series': si});
    const pts = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    g.appendChild(svgEl('polyline', {points: pts, fill: 'none', stroke: color,
      'stroke-width': si === 0 ? 3 : 2}));
    s.values.forEach((v, i) => {
      const c = svgEl('circle', {cx: x(i), cy: y(v), r: 4, fill: color, class: 'pt',
        'data-series': si, 'data-snapshot': i, 'data-bytes': v});
      c.appendChild(svgEl('title', {text: `${s.name}: ${fmtBytes(v)} (${fmtInt(v)} bytes) ` +
        `in snapshot ${i + 1}`}));
      c.addEventListener('mousemove', ev => tip(ev, [s.title || s.name, names[i],
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
