#!/usr/bin/env python3
"""Static checks of a leaksnap HTML report (tests/t-report.sh).

  pagecheck.py data PAGE ID   print the JSON of <script type="application/json" id=ID>
  pagecheck.py static PAGE    check the page's structure; print "ok" or the problems

The page is parsed with Python's HTML parser, the way a browser tokenizes it:
a string of the data that escaped its element would show up here as an
element of its own.  "static" checks that the page has exactly the elements
leaksnap writes (one style, two JSON data elements -- one on a history page,
which has no flame graph -- one inline script, one CSP meta), that the Content-Security-Policy names the SHA-256 of exactly that
script and style, and that nothing refers to anything outside the page.
"""
import base64, hashlib, html.parser, json, re, sys  # noqa: E401

EXPECTED_TAGS = {"html", "head", "meta", "title", "style", "body", "noscript", "p", "script",
                 "main"}
# The SVG namespace is a name, not a resource: document.createElementNS needs it.
SVG_NS = "http://www.w3.org/2000/svg"


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self.styles, self.metas = [], [], [], []
        self._cur = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "meta":
            self.metas.append(a)
        if tag in ("script", "style"):
            self._cur = (tag, a, [])

    def handle_endtag(self, tag):
        if self._cur and tag == self._cur[0]:
            tag, a, parts = self._cur
            (self.scripts if tag == "script" else self.styles).append((a, "".join(parts)))
            self._cur = None

    def handle_data(self, data):
        if self._cur:
            self._cur[2].append(data)


def parse(path):
    raw = open(path, "rb").read().decode("utf-8")
    p = Page()
    p.feed(raw)
    p.close()
    return raw, p


def sha(text):
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def static(path):
    raw, p = parse(path)
    bad = []
    tags = [t for t, _ in p.tags]
    unexpected = sorted(set(tags) - EXPECTED_TAGS)
    if unexpected:
        bad.append("unexpected elements: " + ", ".join(unexpected))
    data = [(a, t) for a, t in p.scripts if a.get("type") == "application/json"]
    code = [(a, t) for a, t in p.scripts if "type" not in a]
    body = [a for t, a in p.tags if t == "body"]
    ids = ["leaksnap-data"] if body and body[0].get("data-kind") == "history" \
        else ["leaksnap-data", "leaksnap-flame"]
    if len(p.scripts) != len(ids) + 1 or len(data) != len(ids) or len(code) != 1:
        bad.append(f"{len(p.scripts)} script elements ({len(data)} data, {len(code)} code): "
                   f"expected {len(ids)} data and 1 code")
    if [a.get("id") for a, _ in data] != ids:
        bad.append("data elements: " + repr([a.get("id") for a, _ in data]))
    for a, t in data:
        try:
            json.loads(t)
        except ValueError as e:
            bad.append(f"data {a.get('id')}: not JSON: {e}")
        if "<" in t or ">" in t or "&" in t:
            bad.append(f"data {a.get('id')}: unescaped < > or &")
    if len(p.styles) != 1:
        bad.append(f"{len(p.styles)} style elements")
    if any("src" in a or "href" in a for _, a in p.tags):
        bad.append("an element with src or href")
    csp = [m.get("content", "") for m in p.metas
           if m.get("http-equiv", "").lower() == "content-security-policy"]
    if len(csp) != 1:
        bad.append(f"{len(csp)} Content-Security-Policy metas")
    else:
        rules = dict((r.split(None, 1) + [""])[:2] for r in
                     (x.strip() for x in csp[0].split(";")) if r)
        if rules.get("default-src") != "'none'":
            bad.append("CSP default-src is not 'none'")
        if code and rules.get("script-src") != f"'sha256-{sha(code[0][1])}'":
            bad.append("CSP script-src does not name the script's hash")
        if p.styles and rules.get("style-src") != f"'sha256-{sha(p.styles[0][1])}'":
            bad.append("CSP style-src does not name the style's hash")
    rest = raw.replace(SVG_NS, "")
    for pat in (r"https?:", r"\burl\(", r"@import", r"<link", r"<img", r"<iframe",
                r"\bfetch\(", r"XMLHttpRequest", r"innerHTML", r"outerHTML",
                r"insertAdjacentHTML", r"document\.write", r"\beval\("):
        if re.search(pat, rest):
            bad.append(f"the page contains {pat}")
    if raw.count("</script") != len(ids) + 1:
        bad.append(f"{raw.count('</script')} '</script' in the page, expected {len(ids) + 1}")
    return bad


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "data":
        _, p = parse(sys.argv[2])
        for a, t in p.scripts:
            if a.get("id") == sys.argv[3]:
                print(json.dumps(json.loads(t), sort_keys=True))
                return 0
        print(f"pagecheck: no data element {sys.argv[3]}", file=sys.stderr)
        return 1
    if len(sys.argv) == 3 and sys.argv[1] == "static":
        bad = static(sys.argv[2])
        print("\n".join(bad) if bad else "ok")
        return 1 if bad else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
