#!/usr/bin/env python3
"""symcmp.py LEAKSNAP FILE N SEED: symbolize N random addresses of FILE's
.text (seeded) with `leaksnap addr2line --json` and with llvm-symbolizer
--output-style=JSON, and compare every frame's FunctionName, FileName,
Line and Column, and the inline depth.  Prints the agreement rate and each
class of difference with examples; exits 1 on any difference.

Two classes are counted apart and not as differences: llvm-symbolizer 14
leaves some valid C++ names mangled (its demangler lacks a few forms), and
it renders Rust legacy symbols as C++ (hash suffix kept, "$LT$" escapes
not decoded); libiberty demangles both.  Such a frame agrees when
everything else does.
"""
import json
import random
import re
import subprocess
import sys


def text_range(path):
    out = subprocess.run(['readelf', '-SW', path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if ' .text ' in line:
            f = line.split(']', 1)[1].split()
            lo = int(f[2], 16)
            return lo, lo + int(f[4], 16)
    raise SystemExit('symcmp: %s has no .text' % path)


def rust_legacy_as_cxx(ref, got):
    """llvm-symbolizer 14 demangles Rust legacy symbols as C++: the hash
    suffix stays ("::h0123456789abcdef") and "$LT$"-style escapes are not
    decoded.  libiberty decodes both.  True when that explains ref != got."""
    r = re.sub(r'::h[0-9a-f]{16}(?= \(|$)', '', ref)
    r = re.sub(r'(^|::)_\$', r'\1$', r)  # a component starting with "$" gets a "_"
    for esc, ch in (('$LT$', '<'), ('$GT$', '>'), ('$u20$', ' '), ('$RF$', '&'), ('$BP$', '*'),
                    ('$C$', ','), ('$u7b$', '{'), ('$u7d$', '}'), ('$u27$', "'"), ('$u5b$', '['),
                    ('$u5d$', ']'), ('$u7e$', '~'), ('$SP$', '@'), ('$LP$', '('),
                    ('$RP$', ')'), ('..', '::')):
        r = r.replace(esc, ch)
    return r != ref and r == got


FIELDS = ('FunctionName', 'FileName', 'Line', 'Column')


def compare(addrs, ref, got):
    """Compare llvm-symbolizer's and leaksnap's JSON lines for @addrs.
    Returns (classes, unmangled, rust_legacy, frames): classes maps the
    sorted names of the differing fields ("depth", "FunctionName,Line", ...)
    to a list of (address, (field, llvm's value, leaksnap's value)); the
    two counts are the frames counted apart (see the module doc); frames
    is the number of llvm-symbolizer frames compared.  Also used by
    bench/symagree.py."""
    classes, unmangled, rust_legacy, frames = {}, 0, 0, 0
    for a, r, g in zip(addrs, ref, got):
        r, g = json.loads(r)['Symbol'], json.loads(g)['Symbol']
        frames += len(r)
        diffs = []
        if len(r) != len(g):
            diffs.append(('depth', len(r), len(g)))
        for fr, fg in zip(r, g):
            for k in FIELDS:
                if fr[k] == fg[k]:
                    continue
                if k == 'FunctionName' and fr[k].startswith('_Z') and not fg[k].startswith('_Z'):
                    unmangled += 1
                    continue
                if k == 'FunctionName' and rust_legacy_as_cxx(fr[k], fg[k]):
                    rust_legacy += 1
                    continue
                diffs.append((k, fr[k], fg[k]))
        if diffs:
            key = ','.join(sorted({d[0] for d in diffs}))
            classes.setdefault(key, []).append((a, diffs[0]))
    return classes, unmangled, rust_legacy, frames


def main():
    leaksnap, path, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    lo, hi = text_range(path)
    rng = random.Random(seed)
    addrs = ['0x%x' % rng.randrange(lo, hi) for _ in range(n)]
    inp = ''.join(a + '\n' for a in addrs)
    ref = subprocess.run(['llvm-symbolizer', '--output-style=JSON', '-e', path], input=inp,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    got = subprocess.run([leaksnap, 'addr2line', '--json', '-e', path], input=inp,
                         capture_output=True, text=True)
    if got.returncode != 0:
        sys.exit('symcmp: leaksnap addr2line failed (%d): %s' % (got.returncode, got.stderr))
    got = got.stdout.splitlines()
    if len(ref) != n or len(got) != n:
        sys.exit('symcmp: %d answers from llvm-symbolizer, %d from leaksnap, expected %d'
                 % (len(ref), len(got), n))
    classes, unmangled, rust_legacy, _ = compare(addrs, ref, got)
    bad = sum(len(v) for v in classes.values())
    print('%s: %d/%d addresses agree (%.3f%%); %d frames named where llvm-symbolizer left '
          'the name mangled; %d Rust legacy names it rendered as C++'
          % (path, n - bad, n, 100.0 * (n - bad) / n, unmangled, rust_legacy))
    for key, v in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print('  %d differ in %s, e.g.' % (len(v), key))
        for a, d in v[:3]:
            print('    %s: %s: llvm-symbolizer %r, leaksnap %r' % (a, d[0], d[1], d[2]))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
