#!/usr/bin/env python3
"""The measures of the tree's shape: lines per folder (C sources and
headers, the report's script and style, the protobuf schema) and the
longest functions (from a line '{' in column 0 to the next '}' there,
counted from the first line of their signature).

Usage: python3 scripts/code-stats.py [N]   (N longest functions, default 10)
Run from the top of the tree; tests/, bench/ and build trees are left out
of the function list."""
import os
import re
import sys

TOP_LEFT_OUT = ('tests', 'bench', 'build', 'build-san', 'docs', 'scripts', 'testdata')
KINDS = ('.c', '.h', '.js', '.css', '.proto')


def folders():
    return sorted(d for d in os.listdir('.') if os.path.isdir(d) and not d.startswith('.')
                  and d not in ('build', 'build-san'))


def lines_of(folder):
    n = 0
    for dp, _, files in os.walk(folder):
        for f in files:
            if f.endswith(KINDS):
                with open(os.path.join(dp, f), errors='replace') as fh:
                    n += sum(1 for _ in fh)
    return n


def functions():
    found = []
    for dp, _, files in os.walk('.'):
        top = os.path.relpath(dp, '.').split(os.sep)[0]
        if top in TOP_LEFT_OUT or top.startswith('.'):
            continue
        for f in files:
            if not f.endswith('.c'):
                continue
            path = os.path.relpath(os.path.join(dp, f), '.')
            with open(path, errors='replace') as fh:
                text = fh.read().split('\n')
            i = 0
            while i < len(text):
                if text[i] == '{' and i > 0:
                    j = i - 1
                    while j > 0 and text[j - 1].strip() and \
                            not text[j - 1].startswith(('}', '#', '/*', ' *')) and \
                            not text[j - 1].rstrip().endswith((';', '*/')):
                        j -= 1
                    names = [x for x in re.findall(r'([A-Za-z_]\w*)\s*\(', ' '.join(text[j:i]))
                             if not x.startswith('__')]
                    k = i + 1
                    while k < len(text) and text[k] != '}':
                        k += 1
                    if names:
                        found.append((k - j + 1, names[0], path))
                    i = k
                i += 1
    return sorted(found, reverse=True)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    print('lines per folder:')
    for d in folders():
        count = lines_of(d)
        if count:
            print('  %-12s %6d' % (d + '/', count))
    print('longest functions:')
    for length, name, path in functions()[:n]:
        print('  %5d  %s  %s' % (length, name, path))


if __name__ == '__main__':
    main()
