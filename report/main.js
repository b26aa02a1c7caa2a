/* leaksnap report: the page.  The data is the document `--json` prints for
 * the same command and options (id leaksnap-data) and the flame graph's
 * stacks (id leaksnap-flame; none on the history page). */
'use strict';

function diffPage(app, doc, flame) {
  const n = doc.snapshots.length, t = doc.totals;
  document.title = `leakdiff: ${t.suspects} suspect${t.suspects === 1 ? '' : 's'}, ` +
    `${fmtBytes(t.suspects_bytes_delta, true)} over ${n} snapshots`;
  const first = doc.snapshots[0], last = doc.snapshots[n - 1];
  app.appendChild(el('header', {},
    el('h1', {text: 'leakdiff report'}),
    el('p', {class: 'summary'},
      `${n} snapshots compared, grouped by ${doc.by}: from `,
      el('span', {class: 'path', text: first.file}), ' to ',
      el('span', {class: 'path', text: last.file}), '.')));
  warningsBox(app, doc);
  sampledBox(app, doc);
  /* sampled snapshots: every byte and count figure is an estimate, marked,
   * with the blocks sampled beside it */
  const e = approxMark(doc);
  const facts = el('div', {class: 'cards'},
    card('Suspects', fmtInt(t.suspects), t.suspects ? `grew by ${e}${fmtBytes(t.suspects_bytes_delta, true)}, ` +
      `${e}${fmtInt(t.suspects_count_delta, true)} allocations` :
      t.stopped ? 'nothing still grew in the last interval' : 'nothing grew'),
    card('All records', e + fmtBytes(t.bytes_delta, true), `${e}${fmtBytes(first.bytes)} \u2192 ` +
      `${e}${fmtBytes(last.bytes)}, ${e}${fmtInt(t.count_delta, true)} allocations` +
      (e ? `; blocks sampled ${fmtInt(first.sampled_count)} \u2192 ${fmtInt(last.sampled_count)}` : '')),
    card('Caches', fmtInt(t.stopped), 'grew, then stopped: not leaks'));
  const r = doc.reachability;
  if (r)
    facts.insertBefore(card('Definite leaks', fmtInt(r.definite),
      (r.one_off ? `and ${fmtInt(r.one_off)} one-off; ` : '') +
      `${e}${fmtBytes(r.unreachable_bytes)} in ${e}${fmtInt(r.unreachable_count)} allocations ` +
      (e ? `(${fmtInt(r.sampled_unreachable_count)} sampled) ` : '') +
      'unreachable in the last snapshot'), facts.firstChild);
  if (t.suppressed_stacks) facts.appendChild(card('Suppressed', fmtInt(t.suppressed_stacks), 'stacks'));
  app.appendChild(facts);

  const curve = el('div', {id: 'curve'});
  app.appendChild(section('curve', 'Memory over the snapshots', curve));
  const series = [{name: 'all records compared', values: doc.snapshots.map(s => s.bytes),
    title: 'the bytes of every record compared'}];
  doc.suspects.slice(0, 10).forEach(g => series.push({name: `#${g.rank} ${siteLabel(g)}`,
    values: g.bytes, title: `suspect #${g.rank}: ${siteLabel(g)}`}));
  renderCurve(curve, doc.snapshots.map((s, i) => String(i + 1)), doc.snapshots.map(s => s.file),
    series, snapshotTimes(doc.snapshots), first.time);

  const fg = el('div', {id: 'flamegraph'});
  app.appendChild(section('flamegraph', 'Growth by stack', flameNote(flame, 'grew'), fg));
  renderFlame(fg, flame, 'growth');

  const shown = doc.suspects.length < t.suspects ? ` (the best ${doc.suspects.length} of ` +
    `${fmtInt(t.suspects)}: --top)` : '';
  app.appendChild(section('suspects', 'Suspects' + shown,
    el('p', {class: 'muted', text: (r ? 'Definite leaks (blocks no pointer reached in the ' +
      'last snapshot) first, then by score: ' : 'Ranked by score: ') + 'growth, weighted by ' +
      'how steadily it grew. Click a row for its whole stack, a heading to sort.'}),
    groupTable('suspects', doc.suspects, doc, true)));
  app.appendChild(section('caches', 'Grew, then stopped (caches, not leaks)',
    groupTable('caches', doc.stopped, doc, false)));
  if (r)
    app.appendChild(section('one-off', 'Unreachable, did not grow (one-off leaks)',
      groupTable('unreachable', doc.unreachable, doc, false)));
  app.appendChild(section('snapshots', 'Snapshots', snapshotsTable(doc)));
  if (doc.suppressions)
    app.appendChild(section('suppressions', 'Suppressions', suppressionsTable(doc.suppressions)));
  if (doc.symbols)
    app.appendChild(section('symbols', 'Symbol files', symbolsTable(doc.symbols)));
}

function symbolizePage(app, doc, flame) {
  document.title = `leaksnap: ${basename(doc.file)}, ${fmtBytes(doc.records_bytes)} live`;
  app.appendChild(el('header', {}, el('h1', {text: 'leaksnap heap snapshot'}),
    el('p', {class: 'summary'}, el('span', {class: 'path', text: doc.file}))));
  const dl = el('dl', {class: 'facts', id: 'facts'});
  const fact = (k, v) => { if (v !== null && v !== undefined && v !== '')
    dl.append(el('dt', {text: k}), el('dd', {text: String(v)})); };
  fact('Format', doc.format + (doc.version !== null ? ' ' + doc.version : ''));
  fact('Pointer size', doc.pointer_size + ' bytes' + (doc.big_endian ? ', big-endian' : ''));
  fact('Backtrace size', doc.backtrace_size ? doc.backtrace_size + ' frames' : null);
  fact('Pid', doc.pid);
  fact('Captured', doc.time ? fmtTime(doc.time) : null);
  /* sampled: the figures of the dump are of the blocks sampled, said so */
  const sampled = doc.sample_interval ? 'sampled ' : '';
  fact('Total memory', `${fmtBytes(doc.total_memory)} (${fmtInt(doc.total_memory)} bytes)` +
    (sampled ? ' in sampled blocks' : ''));
  fact('Records', `${fmtInt(doc.record_count)}, ${fmtInt(doc.allocation_count)} ${sampled}allocations, ` +
    `${fmtBytes(doc.records_bytes)}${sampled ? ' sampled' : ''}`);
  if (doc.zygote && doc.zygote.records)
    fact('App / zygote', `${fmtBytes(doc.app.bytes)} in ${fmtInt(doc.app.allocations)} / ` +
      `${fmtBytes(doc.zygote.bytes)} in ${fmtInt(doc.zygote.allocations)} allocations`);
  fact('Count field', doc.count_is_frames);
  if (doc.unreachable)
    fact('Unreachable', `${fmtBytes(doc.unreachable.bytes)} in ` +
      `${fmtInt(doc.unreachable.allocations)} ${sampled}allocations no pointer reached` +
      (doc.estimated_unreachable ? ` (\u2248${fmtBytes(doc.estimated_unreachable.bytes)} in ` +
        `\u2248${fmtInt(doc.estimated_unreachable.allocations)})` : ''));
  if (doc.sample_interval)
    fact('Estimated', `\u2248${fmtBytes(doc.estimated_bytes)} in ` +
      `\u2248${fmtInt(doc.estimated_count)} allocations`);
  for (const m of doc.metadata || []) fact(m.key, m.value);
  app.appendChild(dl);
  warningsBox(app, doc);
  sampledBox(app, doc);

  const fg = el('div', {id: 'flamegraph'});
  app.appendChild(section('flamegraph', 'Live bytes by stack', flameNote(flame, 'live'), fg));
  renderFlame(fg, flame, 'live');
  const shown = doc.records.length < doc.record_count ? ` (the largest ${fmtInt(doc.records.length)}` +
    ` of ${fmtInt(doc.record_count)}: --top)` : '';
  app.appendChild(section('records', 'Records by bytes' + shown,
    el('p', {class: 'muted', text: 'Click a row for its whole stack, a heading to sort.'}),
    recordsTable(doc)));
  if (doc.symbols)
    app.appendChild(section('symbols', 'Symbol files', symbolsTable(doc.symbols)));
}

/* What the command warned about on standard error (the document's
 * "warnings"), where no reader of the page can miss it: nothing when there
 * was nothing. */
function warningsBox(app, doc) {
  const w = doc.warnings || [];
  if (!w.length) return;
  app.appendChild(el('div', {id: 'warnings', role: 'note'},
    el('div', {class: 'warnings-title', text: w.length === 1 ? 'Warning' : 'Warnings'}),
    el('ul', {}, w.map(t => el('li', {text: t})))));
}

/* The mark of an estimate: U+2248 for a sampled document, else nothing. */
function approxMark(doc) {
  return doc.sample_interval ? '\u2248' : '';
}

/* A sampled snapshot's values are estimates: said where no reader can miss
 * it. */
function sampledBox(app, doc) {
  const b = doc.sample_interval;
  if (!b) return;
  app.appendChild(el('div', {id: 'sampled', role: 'note', text: 'Values are estimated: ' +
    `the ${doc.snapshots ? 'snapshots were' : 'snapshot was'} sampled (one sample point every ` +
    `${fmtInt(b)} bytes on average); a sampled block of size s stands for ` +
    's / (1 \u2212 e^(\u2212s/' + fmtInt(b) + ')) bytes.'}));
}

function card(title, value, note) {
  return el('div', {class: 'card'}, el('div', {class: 'card-title', text: title}),
    el('div', {class: 'card-value', text: value}), el('div', {class: 'muted', text: note}));
}

function flameNote(fd, verb) {
  const kept = fd.stacks.length;
  let text = (verb === 'grew' ? 'Each frame is as wide as the growth of the stacks through it; '
    : 'Each frame is as wide as the live bytes of the stacks through it; ') +
    'the outermost frame is at the top. Hover for details, click to zoom.';
  if (fd.rest_stacks)
    text += ` The ${fmtInt(kept)} largest stacks are drawn; ${fmtInt(fd.rest_stacks)} more ` +
      `(${fmtBytes(fd.rest_bytes)}) are one "other" frame (--html-stacks).`;
  return el('p', {class: 'muted', text});
}

function main() {
  const app = document.getElementById('app');
  try {
    const doc = readData('leaksnap-data');
    const flame = readData('leaksnap-flame') ||
      {what: 'live', total: 0, rest_bytes: 0, rest_stacks: 0, frames: [], stacks: []};
    if (document.body.dataset.kind === 'diff') diffPage(app, doc, flame);
    else if (document.body.dataset.kind === 'history') historyPage(app, doc);
    else symbolizePage(app, doc, flame);
    app.appendChild(el('footer', {class: 'muted', text: 'Written by leaksnap. The data ' +
      'this page shows is in its source, as the JSON the same command prints with --json.'}));
    document.body.setAttribute('data-ready', '1');
    /* from navigation start to drawn, for the benchmark (bench/diff.sh) */
    document.body.setAttribute('data-render-ms', String(Math.round(performance.now())));
  } catch (e) {
    app.appendChild(el('p', {class: 'error', text: 'This report could not be drawn: ' + e}));
    throw e;
  }
}

main();
