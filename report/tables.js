/* leaksnap report: tables.  Each has one tbody row per item, in the order
 * the data gives (rank order); a click on a column heading sorts by it
 * (again: the other way); a click on a row opens its details (the whole
 * stack) in a row of their own under it, as wide as the table, and closes
 * them again. */
'use strict';

/* @columns: [{title, num, value(item) -> sort key, cell(item) -> nodes}];
 * @detail(item) -> a node shown when the row is opened, or null. */
function renderTable(id, columns, items, detail) {
  const table = el('table', {id, class: 'grid' + (detail ? ' openable' : '')});
  const head = el('tr');
  const body = el('tbody');
  let sorted = -1, dir = 1;
  const details = new Map(); /* an open row: the row of its details */
  columns.forEach((c, ci) => {
    const th = el('th', {scope: 'col', class: c.num ? 'num' : null, tabindex: 0,
      title: 'sort by ' + c.title.toLowerCase(), 'aria-sort': 'none'}, c.title);
    const sort = () => {
      dir = sorted === ci ? -dir : c.num ? -1 : 1;
      sorted = ci;
      head.querySelectorAll('th').forEach(h => h.setAttribute('aria-sort', 'none'));
      th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
      const rows = Array.from(body.rows).filter(r => r.dataset.index !== undefined);
      rows.sort((a, b) => {
        const x = c.value(items[a.dataset.index]), y = c.value(items[b.dataset.index]);
        const r = x < y ? -1 : x > y ? 1 : 0;
        return r * dir || a.dataset.index - b.dataset.index;
      });
      for (const r of rows) {
        body.appendChild(r);
        if (details.has(r)) body.appendChild(details.get(r)); /* an open row's details follow it */
      }
    };
    th.addEventListener('click', sort);
    th.addEventListener('keydown', ev => { if (ev.key === 'Enter') sort(); });
    head.appendChild(th);
  });
  table.appendChild(el('thead', {}, head));
  items.forEach((item, i) => {
    const tr = el('tr', {'data-index': i});
    columns.forEach(c => tr.appendChild(el('td', {class: c.num ? 'num' : null}, c.cell(item))));
    if (detail) {
      tr.addEventListener('click', () => {
        const open = details.get(tr);
        if (open) {
          open.remove();
          details.delete(tr);
          tr.classList.remove('open');
        } else {
          const row = el('tr', {class: 'detail-row'}, el('td', {colspan: columns.length},
            el('div', {class: 'detail'}, detail(item))));
          tr.after(row);
          details.set(tr, row);
          tr.classList.add('open');
        }
      });
    }
    body.appendChild(tr);
  });
  table.appendChild(body);
  if (!items.length) {
    const td = el('td', {colspan: columns.length, class: 'muted', text: 'none'});
    table.appendChild(el('tfoot', {}, el('tr', {}, td)));
  }
  return table;
}

/* A small line of a series of values, scaled to its own maximum. */
function sparkline(values) {
  const W = 100, H = 22, max = Math.max(1, ...values);
  const n = values.length;
  const pts = values.map((v, i) => `${(n > 1 ? i * (W - 4) / (n - 1) + 2 : W / 2).toFixed(1)},` +
    `${(H - 2 - (H - 4) * v / max).toFixed(1)}`).join(' ');
  const svg = svgEl('svg', {class: 'spark', viewBox: `0 0 ${W} ${H}`, width: W, height: H});
  svg.appendChild(svgEl('polyline', {points: pts, fill: 'none'}));
  svg.appendChild(svgEl('title', {text: values.map(v => fmtBytes(v)).join(' \u2192 ')}));
  return svg;
}

const TREND_TEXT = {
  grew: 'grew',
  steady: 'grew in every interval',
  growing: 'growing',
  stopped: 'stopped growing',
};

function trendText(g, intervals) {
  if (!g.grew_intervals) /* a one-off leak */
    return g.shrank_intervals ? `shrank in ${g.shrank_intervals} of ${intervals}` : 'did not grow';
  let t = TREND_TEXT[g.trend] || g.trend;
  if (g.trend === 'growing' || g.trend === 'stopped')
    t = `grew in ${g.grew_intervals} of ${intervals}` +
      (g.shrank_intervals ? `, shrank in ${g.shrank_intervals}` : '') +
      (g.trend === 'stopped' ? ', not in the last' : '');
  return t;
}

/* The groups of a leakdiff document (suspects, stopped caches, one-off leaks). */
function groupTable(id, groups, doc, ranked) {
  const intervals = doc.snapshots.length - 1;
  const e = approxMark(doc); /* sampled: estimates, marked */
  const columns = [];
  if (ranked) columns.push({title: 'Rank', num: true, value: g => g.rank, cell: g => String(g.rank)});
  columns.push(
    {title: 'Bytes \u0394', num: true, value: g => g.bytes_delta,
      cell: g => el('span', {title: e + fmtInt(g.bytes_delta, true) + ' bytes',
        text: e + fmtBytes(g.bytes_delta, true)})},
    {title: 'Count \u0394', num: true, value: g => g.count_delta,
      cell: g => e + fmtInt(g.count_delta, true)},
    {title: 'Trend', value: g => g.trend, cell: g => [definiteBadge(g), trendText(g, intervals),
      g.new ? el('span', {class: 'badge', text: 'new'}) : null]},
    {title: 'Bytes over the snapshots', num: true, value: g => g.bytes[g.bytes.length - 1],
      cell: g => sparkline(g.bytes)},
    {title: 'Site', value: g => siteLabel(g), cell: g => [
      ...siteNodes(g.frames[siteIndex(g.frames, g.site)]),
      g.module ? el('div', {class: 'src', text: g.module}) : null]});
  return renderTable(id, columns, groups, g => groupDetail(g));
}

/* A group holding unreachable blocks in the last snapshot is a leak, not a
 * suspect: it says so first in its row and in its detail. */
function definiteBadge(g) {
  if (!g.definite) return null;
  const n = g.unreachable_bytes.length - 1;
  return el('span', {class: 'badge definite', text: 'definite leak',
    title: `${fmtInt(g.unreachable_bytes[n])} bytes in ${fmtInt(g.unreachable_counts[n])} ` +
      'allocations no pointer reached in the last snapshot'});
}

/* A per-snapshot series where a snapshot may not say (null): '?'. */
function seriesText(values) {
  return values.map(v => v === null ? '?' : fmtInt(v)).join(' \u2192 ');
}

function siteLabel(g) {
  const f = g.frames[siteIndex(g.frames, g.site)];
  return f ? displayName(f) : '(no site)';
}

function groupDetail(g) {
  const box = el('div');
  const est = g.sampled_counts ? ' (estimated)' : ''; /* a sampled diff's group */
  box.appendChild(el('div', {class: 'series', text: `bytes${est}: ` +
    g.bytes.map(v => fmtInt(v)).join(' \u2192 ')}));
  box.appendChild(el('div', {class: 'series', text: `count${est}: ` +
    g.counts.map(v => fmtInt(v)).join(' \u2192 ')}));
  if (g.sampled_counts)
    box.appendChild(el('div', {class: 'series', text: 'sampled: ' +
      g.sampled_counts.map(v => fmtInt(v)).join(' \u2192 ')}));
  if (g.definite) {
    const n = g.unreachable_bytes.length - 1;
    box.insertBefore(el('div', {class: 'definite-note'}, definiteBadge(g),
      ` ${fmtBytes(g.unreachable_bytes[n])} in ${fmtInt(g.unreachable_counts[n])} ` +
      'allocations no pointer reached in the last snapshot'), box.firstChild);
  }
  if (g.unreachable_bytes && g.unreachable_bytes.some(v => v !== null)) {
    box.appendChild(el('div', {class: 'series', text: `unreachable bytes${est}: ` +
      seriesText(g.unreachable_bytes)}));
    box.appendChild(el('div', {class: 'series', text: `unreachable count${est}: ` +
      seriesText(g.unreachable_counts)}));
    if (g.sampled_unreachable_counts)
      box.appendChild(el('div', {class: 'series', text: 'unreachable sampled: ' +
        seriesText(g.sampled_unreachable_counts)}));
  }
  if (g.stacks > 1)
    box.appendChild(el('div', {class: 'muted', text: `the one of its ${fmtInt(g.stacks)} stacks that grew most:`}));
  box.appendChild(stackView(g.frames, siteIndex(g.frames, g.site), g.truncated));
  return box;
}

function snapshotsTable(doc) {
  const rows = doc.snapshots.map((s, i) => Object.assign({n: i + 1}, s));
  const e = approxMark(doc); /* sampled: estimates, marked */
  const columns = [
    {title: '#', num: true, value: s => s.n, cell: s => String(s.n)},
    {title: 'File', value: s => s.file, cell: s => el('span', {class: 'path', text: s.file})},
    {title: 'Pid', num: true, value: s => s.pid === null ? -1 : s.pid,
      cell: s => s.pid === null ? '?' : String(s.pid)},
    {title: 'Time', value: s => s.time_ns || 0, cell: s => fmtTime(s.time)},
    {title: 'Allocations', num: true, value: s => s.count, cell: s => e + fmtInt(s.count)},
    {title: 'Bytes', num: true, value: s => s.bytes, cell: s => el('span',
      {title: e + fmtInt(s.bytes) + ' bytes', text: e + fmtBytes(s.bytes)})},
    {title: 'Left out (zygote)', num: true, value: s => s.left_out_bytes,
      cell: s => s.left_out_count ? `${e}${fmtBytes(s.left_out_bytes)} in ${e}${fmtInt(s.left_out_count)}` : ''},
  ];
  if (e)
    columns.push({title: 'Sampled', num: true, value: s => s.sampled_count,
      cell: s => el('span', {title: `${fmtInt(s.sampled_bytes)} bytes sampled`,
        text: fmtInt(s.sampled_count)})});
  if (rows.some(s => s.unreachable_bytes !== null && s.unreachable_bytes !== undefined))
    columns.push({title: 'Unreachable', num: true, value: s => s.unreachable_bytes === null ? -1
      : s.unreachable_bytes, cell: s => s.unreachable_bytes === null ? '?' : el('span',
      {title: `${e}${fmtInt(s.unreachable_bytes)} bytes in ${e}${fmtInt(s.unreachable_count)} allocations` +
        (e ? ` (${fmtInt(s.sampled_unreachable_count)} sampled)` : ''),
        text: e + fmtBytes(s.unreachable_bytes)})});
  return renderTable('snapshots', columns, rows, null);
}

function suppressionsTable(list) {
  return renderTable('suppressions', [
    {title: 'Pattern', value: p => p.pattern, cell: p => el('code', {text: 'leak:' + p.pattern})},
    {title: 'Stacks suppressed', num: true, value: p => p.stacks, cell: p => fmtInt(p.stacks)},
  ], list, null);
}

const SYMBOL_STATUS = {
  match: 'found, build ID matches',
  unverified: 'found (no build ID to check)',
  mismatch: 'stale: another build, not used',
  missing: 'missing',
};

function symbolsTable(list) {
  return renderTable('symbols', [
    {title: 'Module', value: m => m.module, cell: m => el('span', {class: 'path', text: m.module})},
    {title: 'Status', value: m => m.build_id_status, cell: m => el('span',
      {class: 'status-' + m.build_id_status, text: SYMBOL_STATUS[m.build_id_status] ||
        m.build_id_status})},
    {title: 'Symbol file', value: m => m.symbol_file || '', cell: m => [
      el('span', {class: 'path', text: m.symbol_file || '\u2014'}),
      m.error ? el('div', {class: 'error', text: m.error}) : null]},
  ], list, null);
}

/* symbolize's records: the top records of one snapshot. */
function recordsTable(doc) {
  const rows = doc.records.map((r, i) => Object.assign({n: i + 1, site: siteIndex(r.frames)}, r));
  const columns = [
    {title: '#', num: true, value: r => r.n, cell: r => String(r.n)},
    {title: 'Bytes', num: true, value: r => r.total_bytes, cell: r => el('span',
      {title: fmtInt(r.total_bytes) + ' bytes', text: fmtBytes(r.total_bytes)})},
    {title: 'Size', num: true, value: r => r.size, cell: r => fmtInt(r.size)},
    {title: 'Count', num: true, value: r => r.count, cell: r => [fmtInt(r.count),
      r.zygote ? el('span', {class: 'badge', text: 'zygote'}) : null]},
  ];
  if (doc.sample_interval) { /* sampled: the estimates lead, the sampled counts stay */
    columns[1] = {title: 'Bytes (estimated)', num: true, value: r => r.estimated_bytes,
      cell: r => el('span', {title: fmtInt(r.estimated_bytes) + ' bytes',
        text: '\u2248' + fmtBytes(r.estimated_bytes)})};
    columns[3].title = 'Sampled';
    columns.splice(3, 0, {title: 'Count (estimated)', num: true, value: r => r.estimated_count,
      cell: r => '\u2248' + fmtInt(r.estimated_count)});
  }
  const leak = n => n ? el('span', {class: 'badge definite', text: 'leak'}) : null;
  if (doc.unreachable && doc.sample_interval) { /* sampled: the estimate, then the sampled count */
    columns.push({title: 'Unreachable (estimated)', num: true,
      value: r => r.estimated_unreachable_count,
      cell: r => '\u2248' + fmtInt(r.estimated_unreachable_count)});
    columns.push({title: 'Unreachable sampled', num: true, value: r => r.unreachable_count,
      cell: r => [fmtInt(r.unreachable_count), leak(r.unreachable_count)]});
  } else if (doc.unreachable) { /* the dump says which blocks no pointer reached */
    columns.push({title: 'Unreachable', num: true, value: r => r.unreachable_count,
      cell: r => [fmtInt(r.unreachable_count), leak(r.unreachable_count)]});
  }
  columns.push({title: 'Site', value: r => r.site >= 0 ? displayName(r.frames[r.site]) : '',
    cell: r => siteNodes(r.frames[r.site])});
  return renderTable('records', columns, rows, r => stackView(r.frames, r.site, r.truncated));
}
