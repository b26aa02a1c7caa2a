#!/usr/bin/env python3
"""bench/symagree.py LEAKSNAP LLVM_SYMBOLIZER FILE ADDRS [LABEL]

The agreement half of bench/sym.sh: symbolize the addresses in ADDRS (one
per line) of FILE with `leaksnap addr2line --json` and with
`llvm-symbolizer --output-style=JSON`, and compare every frame's
FunctionName, FileName, Line and Column, and the inline depth, with the
comparison of tests/tools/symcmp.py (its compare()).  Prints the agreement
rate and every class of difference with its count and up to three
examples.  The frames symcmp.py counts apart (names llvm-symbolizer 14
leaves mangled, Rust legacy names it renders as C++) are counted and
reported, not taken as differences.

Exit status: 0 when both tools ran and answered every address (whatever
the agreement), 1 otherwise.  The last line is machine-readable:
`agree N TOTAL`.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'tools'))
from symcmp import compare  # noqa: E402


def run(argv, inp):
    p = subprocess.run(argv, input=inp, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit('symagree: %s failed (status %d): %s'
                 % (' '.join(argv), p.returncode, p.stderr.strip()[:500]))
    return p.stdout.splitlines()


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__.split('\n')[0])
    leaksnap, llvm, path, addr_file = sys.argv[1:5]
    label = sys.argv[5] if len(sys.argv) > 5 else path
    with open(addr_file) as f:
        addrs = [line.strip() for line in f if line.strip()]
    n = len(addrs)
    inp = ''.join(a + '\n' for a in addrs)
    ref = run([llvm, '--output-style=JSON', '-e', path], inp)
    got = run([leaksnap, 'addr2line', '--json', '-e', path], inp)
    if len(ref) != n or len(got) != n:
        sys.exit('symagree: %d answers from llvm-symbolizer, %d from leaksnap, expected %d'
                 % (len(ref), len(got), n))
    classes, unmangled, rust_legacy, frames = compare(addrs, ref, got)
    bad = sum(len(v) for v in classes.values())
    print('%s: %d of %d addresses agree with llvm-symbolizer (%.3f%%), %d frames compared;'
          % (label, n - bad, n, 100.0 * (n - bad) / n, frames))
    print('  %d frames named by leaksnap where llvm-symbolizer left the name mangled, '
          '%d Rust legacy names it rendered as C++ (not counted as differences)'
          % (unmangled, rust_legacy))
    if not classes:
        print('  no differences')
    for key, v in sorted(classes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print('  %d differ in %s (%.3f%%), e.g.' % (len(v), key, 100.0 * len(v) / n))
        for a, (what, rv, gv) in v[:3]:
            print('    %s: %s: llvm-symbolizer %r, leaksnap %r' % (a, what, rv, gv))
    print('agree %d %d' % (n - bad, n))


main()
