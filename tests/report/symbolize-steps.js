// Run in symbolize's page by tests/tools/browser.py (tests/t-report.sh).
const q = s => document.querySelector(s);
const qa = s => Array.from(document.querySelectorAll(s));
const out = {ready: document.body.dataset.ready, images: document.images.length};
out.flameRoot = Number(q('#flamegraph svg.flame').dataset.zoomBytes);
// each row's exact bytes (the cell's title: "9,000 bytes")
out.records = qa('#records tbody tr').map(tr => tr.cells[1].firstChild.title.replace(/[^0-9]/g, ''));
await click('#records tbody tr');
out.openFrames = qa('#records tbody tr.detail-row ol.stack > li').map(li => li.querySelector('.fn').textContent);
out.openSite = qa('#records tbody tr.detail-row ol.stack > li.site .inl .fn').map(n => n.textContent);
out;
