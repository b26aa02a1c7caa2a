// make screenshot: open the first suspect's stack before the picture is taken.
await click('#suspects tbody tr');
document.querySelectorAll('#suspects tbody tr.open').length;
