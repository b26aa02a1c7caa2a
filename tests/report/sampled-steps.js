// Run in leakdiff's or symbolize's page for mkfixture's sampled dumps
// (tests/t-sample-readers.sh): the cards, facts, snapshot rows, suspect rows
// and a suspect's detail, as text, to check that every estimate is marked
// and the blocks sampled are beside them.
const q = s => document.querySelector(s);
const qa = (s, root) => Array.from((root || document).querySelectorAll(s));
const out = {ready: document.body.dataset.ready, images: document.images.length,
  note: q('#sampled') ? q('#sampled').textContent : null};
out.cards = qa('.card').map(c => c.querySelector('.card-title').textContent + ': ' +
  c.querySelector('.card-value').textContent + ' | ' + c.querySelector('.muted').textContent);
out.facts = qa('#facts dt').map(d => d.textContent + ': ' + d.nextElementSibling.textContent);
out.snapshotHead = qa('#snapshots thead th').map(t => t.textContent);
out.snapshots = qa('#snapshots tbody tr').map(tr => Array.from(tr.cells).slice(4)
  .map(c => c.textContent));
out.recordsHead = qa('#records thead th').map(t => t.textContent);
out.records = qa('#records tbody tr').filter(tr => !tr.classList.contains('detail-row'))
  .map(tr => Array.from(tr.cells).slice(0, -1).map(c => c.textContent));
out.suspects = qa('#suspects tbody tr').map(tr => Array.from(tr.cells).slice(1, 3)
  .map(c => c.textContent));
if (q('#suspects tbody tr')) {
  await click('#suspects tbody tr');
  out.detail = qa('#suspects tbody tr.detail-row .detail .series').map(d => d.textContent);
}
out;
