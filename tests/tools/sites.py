#!/usr/bin/env python3
"""Leak sites of a report, independent of addresses, ABI and load paths, so
that reports of the same program from different machines compare with cmp.

  sites.py records SYMBOLIZE.json MODULE...
      `leaksnap symbolize --json`: one line per record made by the listed
      modules' own code (its innermost frame is in one of them):
      SIZE COUNT app|zygote, then its frames in those modules that have a
      source line (not _start's) as FUNCTION FILE:LINE:COLUMN (an inlined
      frame prefixed by "inline ").
  sites.py diff LEAKDIFF.json MODULE...
      `leakdiff --json`: one line per suspect whose innermost frame is in
      one of the modules: BYTES_DELTA COUNT_DELTA new|old TREND, then the
      same frames.
  sites.py status SYMBOLIZE.json
      one line per module: MODULE SYMBOL_FILE BUILD_ID_STATUS, and one per
      frame that has no function name: "unnamed MODULE+REL_PC".

MODULE is a file name (the module's last path component, as the maps name
it: frames of a library run from an APK are `base.apk`'s).  Lines are
sorted.
"""
import json
import sys


def base(module):
    return (module or '').rsplit('/', 1)[-1]


def frames(fs, mods):
    out = []
    for f in fs:
        # (no source file: start-up code linked in from libc, _start)
        if base(f['module']) not in mods or not f['file']:
            continue
        where = '%s:%s:%s' % (f['file'], f['line'], f['column'])
        out.append(('inline ' if f['inlined'] else '') + '%s %s' % (f['function'], where))
    return out


def own(fs, mods):
    return bool(fs) and base(fs[0]['module']) in mods


def main():
    what, path, mods = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    d = json.load(open(path))
    lines = []
    if what == 'records':
        for r in d['records']:
            if own(r['frames'], mods):
                head = '%d %d %s' % (r['size'], r['count'], 'zygote' if r['zygote'] else 'app')
                lines.append(' | '.join([head] + frames(r['frames'], mods)))
    elif what == 'diff':
        for g in d['suspects']:
            if own(g['frames'], mods):
                head = '%d %d %s %s' % (g['bytes_delta'], g['count_delta'],
                                        'new' if g['new'] else 'old', g['trend'])
                lines.append(' | '.join([head] + frames(g['frames'], mods)))
    elif what == 'status':
        for m in d['symbols']:
            lines.append('%s %s %s' % (m['module'], m['symbol_file'], m['build_id_status']))
        for r in d['records']:
            for f in r['frames']:
                if not f['function'] and f['module']:
                    lines.append('unnamed %s+%s' % (f['module'], f['rel_pc']))
    else:
        sys.exit('sites.py: unknown mode %s' % what)
    for line in sorted(set(lines)) if what == 'status' else sorted(lines):
        print(line)


main()
