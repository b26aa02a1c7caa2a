// Run in leakdiff's page for the reach-diff fixtures (tests/t-report.sh,
// part 5): the definite leaks are marked in the suspects table and in a
// row's detail, the one-off leaks have their own table, the snapshots table
// has the unreachable bytes.
const q = s => document.querySelector(s);
const qa = (s, root) => Array.from((root || document).querySelectorAll(s));
const site = tr => tr.lastElementChild.querySelector('.fn, .pc, .path').textContent;
const out = {ready: document.body.dataset.ready, images: document.images.length};
out.cards = qa('.card').map(c => c.querySelector('.card-title').textContent + ': ' +
  c.querySelector('.card-value').textContent);
out.suspects = qa('#suspects tbody tr').map(tr => [tr.cells[0].textContent, site(tr),
  tr.querySelectorAll('.badge.definite').length]);
out.badge = q('#suspects tbody tr .badge.definite').textContent;
const bs = getComputedStyle(q('#suspects tbody tr .badge.definite'));
out.badgeVisible = bs.display !== 'none' && bs.visibility !== 'hidden' &&
  q('#suspects tbody tr .badge.definite').getBoundingClientRect().width > 0;
out.caches = qa('#caches tbody tr').map(tr => tr.querySelectorAll('.badge.definite').length);
out.unreachable = qa('#unreachable tbody tr').map(tr => [site(tr),
  tr.querySelectorAll('.badge.definite').length]);
out.snapshotUnreachable = qa('#snapshots tbody tr').map(tr => tr.lastElementChild.textContent);
await click('#suspects tbody tr');
out.detailNote = q('#suspects tbody tr.detail-row .detail .definite-note').textContent;
out.detailSeries = qa('#suspects tbody tr.detail-row .detail .series').map(d => d.textContent);
out;
