// Run in leakdiff's page by tests/tools/browser.py (tests/t-report.sh): the
// chart and an opened stack as wide as the page's content, the chart's x
// axis, the warnings.
const q = s => document.querySelector(s);
const qa = (s, root) => Array.from((root || document).querySelectorAll(s));
const app = q('#app'), cs = getComputedStyle(app);
const out = {content: app.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)};
const svg = q('#curve svg.curve');
out.curve = svg.getBoundingClientRect().width;
out.axis = svg.dataset.axis;
out.axisTitle = q('#curve .axis-title').textContent;
out.xLabels = qa('#curve .x-label').map(t => t.firstChild.textContent); // (not its <title>)
out.xs = qa('circle.pt', qa('#curve g.line')[0]).map(c => Number(c.getAttribute('cx')));
out.plot = [76, svg.viewBox.baseVal.width - 24];
out.warnings = qa('#warnings li').map(li => li.textContent);
out.warningsVisible = q('#warnings') ? q('#warnings').getBoundingClientRect().height > 0 : false;
// an opened stack spans the whole table, not its last cell
if (q('#suspects tbody tr')) {
  await click('#suspects tbody tr');
  const table = q('#suspects').getBoundingClientRect().width;
  out.detail = [q('#suspects tr.detail-row > td').getBoundingClientRect().width, table,
    q('#suspects tbody tr.open').lastElementChild.getBoundingClientRect().width];
  out.detailFrames = qa('#suspects tr.detail-row ol.stack > li').length;
}
out;
