// Run in a page of tests/report/names.cc's dumps (tests/t-report.sh): the
// names the tables, the stacks and the flame graph show, the [truncated]
// root, and the page's copy of the name rules against every case of
// tests/unit/names_cases.h (CASES, put first by the test).
const q = s => document.querySelector(s);
const qa = (s, root) => Array.from((root || document).querySelectorAll(s));
const out = {full: document.body.dataset.fullNames === '1'};
out.sites = qa('#suspects tbody tr').map(tr => {
  const fn = tr.lastElementChild.querySelector('.fn');
  return [fn.textContent, fn.title];
});
out.roots = qa('#flamegraph g.fr').filter(g => g.dataset.depth === '1').map(g => g.dataset.name).sort();
out.truncClass = qa('#flamegraph g.fr.trunc').map(g => g.dataset.name);
// the cut stack's detail ends with the note
const deep = qa('#suspects tbody tr').find(tr => tr.lastElementChild.textContent.startsWith('deep'));
await click(deep);
out.cut = qa('#suspects tr.detail-row ol.stack > li.cut').map(li => li.textContent);
out.mismatches = CASES.filter(([full, short]) => shortName(full) !== short)
  .map(([full, short]) => [full, shortName(full), short]);
out.cases = CASES.length;
out;
