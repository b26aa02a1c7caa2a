// Run in leaksnap history's page by tests/tools/browser.py
// (tests/t-history.sh): what the page shows, and what it shows after a
// click on a build and on the metric buttons, as one JSON object.
const q = s => document.querySelector(s);
const qa = (s, root) => Array.from((root || document).querySelectorAll(s));
const points = () => qa('#curve g.line').map(g => qa('circle.pt', g).map(c => Number(c.dataset.bytes)));
const out = {ready: document.body.dataset.ready, images: document.images.length,
  title: document.title};
out.metric = q('#curve svg.curve').dataset.metric;
out.memory = points();
out.legend = qa('#curve ul.legend li').map(li => li.textContent);
out.x = qa('#curve .x-label').map(t => t.firstChild.textContent);
out.axisTitle = q('#curve .axis-title').textContent;
out.yLabels = qa('#curve .axis text:not(.x-label):not(.axis-title)').map(t => t.textContent);
out.rows = qa('#builds tbody tr').map(tr => tr.cells[0].textContent);
// a click on the last build's label opens its row: suspects, marks, stacks
await click(qa('#curve .x-label').pop());
out.open = qa('#builds tbody tr.open').map(tr => tr.dataset.index);
out.heads = qa('#builds tr.detail-row .suspect-head').map(d => d.textContent);
out.marks = qa('#builds tr.detail-row .suspect-head .badge').map(b => b.textContent);
out.stackFns = qa('#builds tr.detail-row .suspect').map(s =>
  qa('ol.stack > li > .fn', s).map(n => n.title || n.textContent));
out.stackSrc = qa('#builds tr.detail-row .suspect').map(s =>
  qa('ol.stack > li > .src', s).map(n => n.textContent));
out.stackPc = qa('#builds tr.detail-row .suspect').map(s =>
  qa('ol.stack > li > .pc', s).map(n => n.textContent));
out.inlined = qa('#builds tr.detail-row ol.stack .inl .fn').map(n => n.title || n.textContent);
// a click on the first point of the last line (alpha's) opens that row too
await click(qa('circle.pt', qa('#curve g.line').pop())[0]);
out.openAfterPoint = qa('#builds tbody tr.open').map(tr => tr.dataset.index);
await click('#metric button[data-metric="growth"]');
out.growthMetric = [q('#curve svg.curve').dataset.metric, q('#metric button[aria-pressed="true"]').textContent];
out.growth = points();
await click('#metric button[data-metric="definite"]');
out.definite = points();
out;
