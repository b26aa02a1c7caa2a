// Run in symbolize's page for mkfixture's reach64le.dump (tests/t-report.sh,
// part 5): the facts say how much no pointer reached, the records table has
// an Unreachable column with a badge where some are.
const qa = s => Array.from(document.querySelectorAll(s));
const head = qa('#records thead th').map(t => t.textContent);
const col = head.indexOf('Unreachable');
({ready: document.body.dataset.ready, images: document.images.length,
  fact: qa('#facts dt').filter(d => d.textContent === 'Unreachable')
    .map(d => d.nextElementSibling.textContent),
  unreachable: qa('#records tbody tr').map(tr => [tr.cells[col].firstChild.textContent,
    tr.cells[col].querySelectorAll('.badge.definite').length])});
