/* leaksnap report: the history page (leaksnap history --html).  The data is
 * the document `history --json --series KEY` prints, each suspect with its
 * whole stack ("frames", the frame objects of leakdiff's --json).  Labels
 * (the rows' keys, the series' values) and names are untrusted: text nodes
 * and attribute values only, as everywhere in the report. */
'use strict';

const HISTORY_METRICS = [
  {key: 'memory', title: 'Memory', note: 'bytes live at the last snapshot of each run'},
  {key: 'growth', title: 'Growth', note: 'bytes grown from the first snapshot of each run to its last'},
  {key: 'definite', title: 'Definite', note: 'unreachable bytes at the last snapshot of each run'},
];

/* '\u2248' before the figures of a row with a sampled run (they are
 * estimates, as the table says them), '' otherwise. */
function est(r) {
  return 'sample_interval' in r ? '\u2248' : '';
}

/* A row's key as the page shows it. */
function rowKey(r) {
  return r.key === '' ? '(none)' : r.key;
}

function historyPage(app, doc) {
  const rows = doc.rows, by = doc.by, n = rows.length;
  document.title = `leaksnap history: ${n} ${by === 'run' ? 'run' : by}${n === 1 ? '' : 's'}`;
  app.appendChild(el('header', {},
    el('h1', {text: 'leaksnap history'}),
    el('p', {class: 'summary'}, n ? `${n} row${n === 1 ? '' : 's'}, one per ${by}, oldest ` +
      `first; one line per value of the label ${doc.series}.` : 'No run matched.')));
  if (n) {
    const last = rows[n - 1];
    const facts = el('div', {class: 'cards'},
      card(`Newest ${by}`, rowKey(last), `${fmtInt(last.runs)} run${last.runs === 1 ? '' : 's'}`),
      card('Memory', fmtBytes(last.memory), n > 1 ? `${fmtBytes(last.memory - rows[n - 2].memory, true)} ` +
        'from the one before' : 'at the last snapshots'),
      card('Growth', fmtBytes(last.growth, true), n > 1 ? `${fmtBytes(last.growth - rows[n - 2].growth, true)} ` +
        'from the one before' : 'within the runs'),
      card('Definite', fmtBytes(last.definite), 'unreachable at the last snapshots'));
    app.appendChild(facts);
    /* sampled runs: their figures are estimates, said where no reader can miss it */
    const sampled = rows.filter(r => est(r));
    if (sampled.length)
      app.appendChild(el('div', {id: 'sampled', role: 'note', text: 'Values marked \u2248 are ' +
        `estimated: ${sampled.length} of the ${n} rows have runs recorded with sampling ` +
        '(a sampled block of size s stands for s / (1 \u2212 e^(\u2212s/interval)) bytes)' +
        (sampled.some(r => r.sample_interval === null) ? '; some of them at several ' +
          'intervals, each run\'s estimates summed.' : '.')}));
  }

  /* the curves: one line per series value, the metric chosen with the buttons */
  const values = [];
  for (const r of rows) for (const p of r.points || [])
    if (!values.includes(p.value)) values.push(p.value);
  values.sort((a, b) => a < b ? -1 : a > b ? 1 : 0);
  const curve = el('div', {id: 'curve'});
  const controls = el('div', {class: 'controls', id: 'metric', role: 'group',
    'aria-label': 'what the curves show'});
  const note = el('p', {class: 'muted', id: 'metric-note'});
  let metric = HISTORY_METRICS[0];
  const draw = () => {
    for (const b of controls.querySelectorAll('button'))
      b.setAttribute('aria-pressed', b.dataset.metric === metric.key ? 'true' : 'false');
    note.textContent = `${metric.title}: ${metric.note}, summed over the runs of each ` +
      `${by} with that ${doc.series}. Click a point or a ${by} for its suspects.`;
    curve.textContent = '';
    const series = values.map(v => ({
      name: v === '' ? `(no ${doc.series})` : v,
      title: `${doc.series} ${v === '' ? '(none)' : v}`,
      values: rows.map(r => {
        const p = (r.points || []).find(q => q.value === v);
        return p ? p[metric.key] : null;
      })}));
    renderCurve(curve, rows.map(rowKey), rows.map(rowKey), series, null, null,
      {xTitle: by, onPick: openRow});
    curve.firstChild.setAttribute('data-metric', metric.key);
  };
  for (const m of HISTORY_METRICS) {
    const b = el('button', {type: 'button', 'data-metric': m.key, text: m.title});
    b.addEventListener('click', () => { metric = m; draw(); });
    controls.appendChild(b);
  }
  app.appendChild(section('curve', `Across the ${by === 'run' ? 'runs' : by + 's'}`, controls,
    note, curve));

  const table = historyTable(doc);
  app.appendChild(section('builds', by === 'run' ? 'Runs' : `By ${by}`,
    el('p', {class: 'muted', text: 'Click a row for its suspects and their whole stacks, ' +
      'a heading to sort.'}), table));
  draw();

  /* a click on the curve opens the row (once: an open row stays open) */
  function openRow(i) {
    const tr = table.querySelector(`tbody tr[data-index="${i}"]`);
    if (!tr.classList.contains('open')) tr.click();
    tr.scrollIntoView({block: 'nearest'});
  }
}

function historyTable(doc) {
  const columns = [
    {title: doc.by === 'run' ? 'Run' : doc.by, value: r => r.key,
      cell: r => el('span', {class: 'key', text: rowKey(r)})},
    {title: 'Runs', num: true, value: r => r.runs, cell: r => fmtInt(r.runs)},
    {title: 'From', value: r => Number(r.first_time_ns),
      cell: r => r.first_time_ns ? fmtTimeNs(r.first_time_ns) : '?'},
    {title: 'Memory', num: true, value: r => r.memory,
      cell: r => el('span', {title: fmtInt(r.memory) + ' bytes', text: est(r) + fmtBytes(r.memory)})},
    {title: 'Growth', num: true, value: r => r.growth,
      cell: r => el('span', {title: fmtInt(r.growth, true) + ' bytes',
        text: est(r) + fmtBytes(r.growth, true)})},
    {title: 'Definite', num: true, value: r => r.definite,
      cell: r => el('span', {title: fmtInt(r.definite) + ' bytes', text: est(r) + fmtBytes(r.definite)})},
    {title: 'Suspects', value: r => r.suspects.length, cell: r => [
      r.suspects.length ? chainText(r.suspects[0]) : el('span', {class: 'muted', text: 'none'}),
      ...r.suspects.filter(s => s.new).length ? [el('span', {class: 'badge', text:
        `${r.suspects.filter(s => s.new).length} new`})] : [],
      ...r.gone.length ? [el('span', {class: 'badge gone', text: `${r.gone.length} gone`})] : []]},
  ];
  return renderTable('builds', columns, doc.rows, r => buildDetail(r, doc));
}

/* A row's suspects, each with its whole stack, then the row before's that
 * are gone. */
function buildDetail(r, doc) {
  const box = el('div', {class: 'build-detail'});
  box.appendChild(el('div', {class: 'series', text: `${doc.by} ${rowKey(r)}: ` +
    `${fmtInt(r.runs)} run${r.runs === 1 ? '' : 's'}, memory ${est(r)}${fmtInt(r.memory)} bytes, ` +
    `growth ${est(r)}${fmtInt(r.growth, true)}, definite ${est(r)}${fmtInt(r.definite)}` +
    (!est(r) ? '' : r.sample_interval !== null ? ` (sampled every ${fmtInt(r.sample_interval)} bytes)`
      : ` (mixed sampling: ${r.sample_intervals.map(b => b ? fmtInt(b) : 'not sampled').join(', ')})`)}));
  for (const p of r.points || [])
    box.appendChild(el('div', {class: 'series point', text: `${doc.series} ` +
      `${p.value === '' ? '(none)' : p.value}: memory ${fmtInt(p.memory)}, growth ` +
      `${fmtInt(p.growth, true)}, definite ${fmtInt(p.definite)}`}));
  if (!r.suspects.length && !r.gone.length)
    box.appendChild(el('p', {class: 'muted', text: 'Nothing grew within these runs.'}));
  const list = (items, gone) => items.forEach(s => {
    const mark = gone ? el('span', {class: 'badge gone', text: 'gone'})
      : s.new ? el('span', {class: 'badge', text: 'new'}) : null;
    box.appendChild(el('div', {class: 'suspect' + (gone ? ' gone' : '')},
      el('div', {class: 'suspect-head'}, mark, ' ', chainText(s), ' ',
        el('span', {class: 'num', text: gone ? `(${fmtBytes(s.growth, true)} in the ${doc.by} before)`
          : est(r) + fmtBytes(s.growth, true), title: fmtInt(s.growth, true) + ' bytes'})),
      stackView(s.frames || [], siteIndex(s.frames || []), false)));
  });
  list(r.suspects, false);
  list(r.gone, true);
  return box;
}

/* A suspect's function chain, innermost first: "grow < main < …". */
function chainText(s) {
  return el('span', {class: 'fn chain', title: s.chain.join(' < '),
    text: s.chain.map(f => fullNames() ? f : shortName(f)).join(' < ')});
}

/* Nanoseconds since the epoch (a number or a string) as a UTC time. */
function fmtTimeNs(ns) {
  const ms = Math.floor(Number(ns) / 1e6);
  return fmtTime(new Date(ms).toISOString());
}
