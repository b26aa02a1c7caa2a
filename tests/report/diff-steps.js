// Run in leakdiff's page by tests/tools/browser.py (tests/t-report.sh): what
// the page shows, and what it shows after clicks, as one JSON object that the
// test compares with the --json document.
const q = s => document.querySelector(s);
const qa = (s, root) => Array.from((root || document).querySelectorAll(s));
// a site's whole name (the cell's title; its text is the short name)
const site = tr => tr.lastElementChild.querySelector('.fn').title;
const shown = tr => tr.lastElementChild.querySelector('.fn').textContent;
const out = {ready: document.body.dataset.ready, images: document.images.length};
out.curve = qa('#curve g.line').map(g => qa('circle.pt', g).map(c => Number(c.dataset.bytes)));
out.legend = qa('#curve ul.legend li').map(li => li.textContent);
out.suspects = qa('#suspects tbody tr').map(site);
out.suspectsShown = qa('#suspects tbody tr').map(shown);
out.caches = qa('#caches tbody tr').map(site);
out.snapshots = qa('#snapshots tbody tr').map(tr => tr.cells[1].textContent);
out.symbols = qa('#symbols tbody tr').map(tr => tr.cells[0].textContent);
// dumps without the reachability section: nothing is called definite
out.definite = qa('.badge.definite').length;
out.oneOffTable = qa('#unreachable').length;

// a click on the first row shows its whole stack, another closes it
await click('#suspects tbody tr');
out.open = qa('#suspects tbody tr.open').map(tr => tr.dataset.index);
out.openFrames = qa('#suspects tbody tr.detail-row ol.stack > li').map(li => li.querySelector('.fn').textContent);
out.openSite = qa('#suspects tbody tr.detail-row ol.stack > li.site .fn').map(n => n.textContent);
out.openInlined = qa('#suspects tbody tr.detail-row ol.stack .inl .fn').map(n => n.textContent);
await click('#suspects tbody tr');
out.closed = qa('#suspects tbody tr.open').length;

// sorting by bytes delta: descending first, then ascending
const th = qa('#suspects thead th')[1];
await click(th);
out.sortedDown = qa('#suspects tbody tr').map(site);
await click(th);
out.sortedUp = qa('#suspects tbody tr').map(site);

// the flame graph: a click narrows it to the frame, reset widens it again
const svg = q('#flamegraph svg.flame');
out.flameRoot = Number(svg.dataset.zoomBytes);
out.flameNames = qa('#flamegraph g.fr').map(g => g.dataset.name);
await click(qa('#flamegraph g.fr').find(g => g.dataset.name === 'leak_steady'));
out.zoomBytes = Number(svg.dataset.zoomBytes);
const z = qa('#flamegraph g.fr').find(g => g.dataset.name === 'leak_steady');
out.zoomWidth = Number(z.querySelector('rect').getAttribute('width'));
out.zoomFrames = qa('#flamegraph g.fr:not(.anc)').length;
out.zoomText = q('#flame-zoom').textContent;
await click('#flame-reset');
out.resetBytes = Number(svg.dataset.zoomBytes);

// search highlights the matching frames and says their share
const box = q('#flame-search');
box.value = 'leak_';
box.dispatchEvent(new Event('input'));
out.matches = qa('#flamegraph g.fr.match').map(g => g.dataset.name).sort();
out.matchText = q('#flame-match').textContent;

// hover on a curve point shows its value
await hover('#curve g.line circle.pt');
out.tip = q('#tooltip').textContent;

// the hostile names are text
// (the function's whole name is a title: its text is shortened)
out.text = ['</script><img src=x onerror=alert(1)>', '</script><img src=x onerror=alert(3)>.c',
  'grow <img src=x onerror=alert(2)>'].map(s => document.body.textContent.includes(s) ||
  qa('[title]').some(n => n.title.includes(s)));
out;
