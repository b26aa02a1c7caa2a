// Run in leaksnap history's page of sampled runs by tests/tools/browser.py
// (tests/t-history.sh): the note that values are estimated, the table's
// figures marked, and a build's detail after a click on its row.
const q = s => document.querySelector(s);
const qa = (s, root) => Array.from((root || document).querySelectorAll(s));
const out = {ready: document.body.dataset.ready, images: document.images.length};
out.note = q('#sampled') ? q('#sampled').textContent : null;
out.cells = qa('#builds tbody tr[data-index]').map(tr => Array.from(tr.cells).slice(3, 6).map(c => c.textContent));
await click(qa('#builds tbody tr[data-index]')[1]);
out.detail = qa('#builds tr.detail-row .series').map(d => d.textContent);
out.heads = qa('#builds tr.detail-row .suspect-head .num').map(d => d.textContent);
out;
