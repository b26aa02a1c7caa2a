/* leaksnap report: shared helpers.  Every string in the data comes from a
 * dump, a maps file or an ELF file and is untrusted: it only ever becomes a
 * text node (createTextNode, textContent) or an attribute value
 * (setAttribute), never markup: nothing here parses a string as HTML. */
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';

/* An element with attributes and children (strings become text nodes). */
function el(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

function svgEl(tag, attrs, ...children) {
  return build(document.createElementNS(SVGNS, tag), attrs, children);
}

function build(node, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'text') node.textContent = String(v);
    else node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  return node;
}

function readData(id) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/* Bytes in human units: 512 B, 1.5 KiB, 12.3 MiB ("+" on request). */
function fmtBytes(n, signed) {
  const sign = n < 0 ? '-' : signed && n > 0 ? '+' : '';
  let v = Math.abs(n), u = 0;
  while (v >= 1024 && u < UNITS.length - 1) { v /= 1024; u++; }
  const digits = u === 0 || v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return sign + v.toFixed(digits) + ' ' + UNITS[u];
}

function fmtInt(n, signed) {
  const s = Math.abs(n).toLocaleString('en-US');
  return (n < 0 ? '-' : signed && n > 0 ? '+' : '') + s;
}

function fmtPct(part, whole) {
  if (!whole) return '0%';
  const p = 100 * part / whole;
  return (p >= 10 ? p.toFixed(0) : p >= 1 ? p.toFixed(1) : p.toFixed(2)) + '%';
}

/* "2026-11-24T05:59:54.520924906Z" as "2026-11-24 05:59:54.520 UTC". */
function fmtTime(t) {
  if (!t) return '?';
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(\.\d{3})?/.exec(t);
  return m ? `${m[1]} ${m[2]}${m[3] || ''} UTC` : t;
}

function basename(path) {
  if (!path) return path;
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(i + 1) : path;
}

/* Function names shortened for reading: the rules of kit/names.c (see
 * kit/kit_names.h), the same cases (tests/unit/names_cases.h, checked by
 * tests/t-report.sh).  Each template argument list and parameter list that
 * is not empty becomes an ellipsis (an operator's template arguments too:
 * std::operator+<…>(…)); the name of a function returning a function
 * pointer stays (void (*std::signal(…))(…)); a name whose brackets do not
 * balance stays whole. */
const OPERATOR_SYMBOLS = ['<<=', '>>=', '<=>', '->*', '()', '[]', '""', '<<', '>>', '<=', '>=',
  '->', '==', '!=', '&&', '||', '++', '--', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<',
  '>', '+', '-', '*', '/', '%', '&', '|', '^', '~', '!', '=', ','];
const OPERATOR_WORDS = [' new[]', ' delete[]', ' new', ' delete'];

function shortName(name) {
  const s = String(name);
  const ident = c => c !== undefined && /[A-Za-z0-9_$]/.test(c) || c > '\x7f';
  /* the end of the operator's name if the word "operator" starts at i */
  const operatorAt = (i, end) => {
    if (!s.startsWith('operator', i) || i + 8 > end || (i > 0 && ident(s[i - 1])) ||
        (i + 8 < end && ident(s[i + 8]))) return -1;
    const q = i + 8;
    for (const o of OPERATOR_SYMBOLS) if (q + o.length <= end && s.startsWith(o, q)) return q + o.length;
    for (const w of OPERATOR_WORDS)
      if (q + w.length <= end && s.startsWith(w, q) && (q + w.length === end || !ident(s[q + w.length])))
        return q + w.length;
    return q;
  };
  const closing = (p, end) => {
    const stack = [];
    for (; p < end; p++) {
      const c = s[p], top = stack.length ? stack[stack.length - 1] : '';
      let after;
      if (top === '<' && (after = operatorAt(p, end)) >= 0) { p = after - 1; continue; }
      if (c === '-' && p + 1 < end && s[p + 1] === '>') { p++; continue; }
      if (c === '(' || c === '[' || c === '{' || (c === '<' && top !== '(' && top !== '[')) {
        if (stack.length === 256) return -1;
        stack.push(c);
        continue;
      }
      const open = {')': '(', ']': '[', '}': '{', '>': '<'}[c];
      if (!open || (c === '>' && top !== '<')) continue;
      if (top !== open) return -1;
      stack.pop();
      if (!stack.length) return p;
    }
    return -1;
  };
  /* whether the parentheses around [p, end) group a declarator (the name
   * of a function returning a pointer to a function or to a member
   * function), not parameters nor a decltype's expression */
  const declaratorGroup = (p, end) => {
    let w = p - 1;
    if (w > 0 && s[w - 1] === ' ') w--;
    if (w >= 8 && s.startsWith('decltype', w - 8) && (w === 8 || !ident(s[w - 9]))) return false;
    let q = p;
    while (q < end && (ident(s[q]) || s[q] === ':' || s[q] === '<')) {
      if (s[q] === '<') {
        const close = closing(q, end);
        if (close < 0) return false;
        q = close + 1;
      } else {
        q++;
      }
    }
    if (q > p && !(q - p >= 2 && s[q - 1] === ':' && s[q - 2] === ':')) return false;
    if (q === end || (s[q] !== '*' && s[q] !== '&')) return false;
    const paren = s.indexOf('(', q);
    return paren >= 0 && paren < end;
  };
  const shorten = (p, end, nest) => {
    if (nest > 64) return null;
    let out = '', opEnd = -1;
    while (p < end) {
      const c = s[p];
      const after = operatorAt(p, end);
      if (after >= 0) { out += s.slice(p, after); p = opEnd = after; continue; }
      if (s.startsWith('(anonymous namespace)', p) && p + 21 <= end) { out += '(anonymous namespace)'; p += 21; continue; }
      if (c !== '(' && c !== '[' && c !== '{' && c !== '<') {
        if (c === ')' || c === ']' || c === '}') return null;
        out += c;
        p++;
        continue;
      }
      const close = closing(p, end);
      if (close < 0) return null;
      const empty = close === p + 1;
      if (c === '[') {
        if (!s.startsWith('[abi:', p)) out += s.slice(p, close + 1);
      } else if ((c === '(' && !declaratorGroup(p + 1, close)) ||
                 (c === '<' && p > 0 && ident(s[p - 1])) ||
                 (c === '<' && opEnd >= 0 && (p === opEnd || (p === opEnd + 1 && s[p - 1] === ' ')))) {
        out += c + (empty ? '' : '\u2026') + s[close];
      } else {
        const inner = shorten(p + 1, close, nest + 1);
        if (inner === null) return null;
        out += c + inner + s[close];
      }
      p = close + 1;
    }
    return out;
  };
  const r = shorten(0, s.length, 0);
  return r === null ? s : r;
}

/* Whether the page shows names whole (--full-names). */
function fullNames() {
  return document.body.dataset.fullNames === '1';
}

/* A frame level's name as the page shows it: shortened unless
 * --full-names; the whole name (frameName) stays its identity. */
function displayName(f) {
  return fullNames() ? frameName(f) : shortName(frameName(f));
}

/* One frame level of the --json document: its name for a label. */
function frameName(f) {
  if (f.function) return f.function;
  if (f.module) return basename(f.module) + '+' + f.rel_pc;
  return f.pc;
}

function fileLine(f, withColumn) {
  if (!f.file) return '';
  let s = f.file;
  if (f.line) s += ':' + f.line;
  if (withColumn && f.line && f.column) s += ':' + f.column;
  return s;
}

/* The --json frames list has one object per inline level, innermost first;
 * a captured frame ends at a level that is not inlined.  Returns the
 * captured frames, each a list of its levels (innermost first). */
function splitFrames(levels) {
  const frames = [];
  let cur = [];
  for (const f of levels || []) {
    cur.push(f);
    if (!f.inlined) { frames.push(cur); cur = []; }
  }
  if (cur.length) frames.push(cur);
  return frames;
}

/* Allocation wrappers, the ones leakdiff's --by site skips (diff/diff.c):
 * the malloc family, operator new, the C++ runtime's namespaces, and the C
 * and C++ runtimes, allocators, the hook and the dynamic linker. */
const WRAPPER_FN = /^(malloc|calloc|realloc|reallocarray|free|memalign|posix_memalign|aligned_alloc|valloc|pvalloc|strdup|strndup)$|^(__libc_|je_|scudo::|operator new|operator delete|std::|__gnu_cxx::|__cxxabiv1::|__cxa_|__libcpp_)/;
const WRAPPER_MOD = /^(libc\.so(\..*)?|libc\+\+\.so(\..*)?|libc\+\+_shared\.so|libstdc\+\+\.so(\..*)?|libleakhook\.so|libc_malloc_debug\.so|libc_malloc_hooks\.so|ld-linux.*\.so.*|ld-android\.so|linker|linker64|libjemalloc\.so.*|libtcmalloc.*\.so.*|libscudo.*\.so)$/;

/* The site: its index in @levels (the --json frames, one per inline
 * level).  leakdiff gives it; for a snapshot's records it is found the same
 * way: the first level outside the allocation wrappers, in a frame whose
 * module is not one.  -1: no frames. */
function siteIndex(levels, given) {
  if (typeof given === 'number') return given;
  let i = 0;
  for (const fr of splitFrames(levels)) {
    const mod = fr[0].module && WRAPPER_MOD.test(basename(fr[0].module));
    for (const f of fr) {
      if (!mod && !(f.function && WRAPPER_FN.test(f.function))) return i;
      i++;
    }
  }
  return levels && levels.length ? 0 : -1;
}

/* A site cell: function, then file:line in a quieter style. */
function siteNodes(f) {
  if (!f) return [el('span', {class: 'muted', text: '(no frames)'})];
  const out = [el('span', {class: 'fn', text: displayName(f), title: frameName(f)})];
  const fl = fileLine(f, false);
  if (fl) out.push(' ', el('span', {class: 'src', text: fl}));
  return out;
}

const BUILD_ID_NOTES = {
  missing: 'no symbol file',
  mismatch: 'symbol file of another build: not used',
  unverified: 'build ID not verified',
};

/* A list of every frame of a stack with its inline chain; the frame
 * holding level @site is marked; @cut: the stack may have been cut (it
 * filled every frame slot of its dump). */
function stackView(levels, site, cut) {
  const frames = splitFrames(levels);
  const list = el('ol', {class: 'stack', start: 0});
  let at = 0;
  frames.forEach(fr => {
    const f = fr[0];
    const where = f.module ? f.module + '+' + f.rel_pc : f.pc + ' (unmapped)';
    const here = site >= at && site < at + fr.length;
    at += fr.length;
    const li = el('li', {class: here ? 'site' : null, title: here ? 'the allocation site' : null},
      el('span', {class: 'pc', text: where}), ' ',
      el('span', {class: 'fn', text: f.function ? displayName(f) : f.module ? '??' : '',
        title: f.function || null}), ' ',
      el('span', {class: 'src', text: fileLine(f, true)}));
    const note = BUILD_ID_NOTES[f.build_id_status];
    if (note && f.module) li.appendChild(el('span', {class: 'bid', text: ' (' + note + ')'}));
    for (let k = 1; k < fr.length; k++)
      li.appendChild(el('div', {class: 'inl'}, 'inlined into ',
        el('span', {class: 'fn', text: displayName(fr[k]), title: frameName(fr[k])}), ' ',
        el('span', {class: 'src', text: fileLine(fr[k], true)})));
    list.appendChild(li);
  });
  if (!frames.length) list.appendChild(el('li', {class: 'muted', text: '(no frames)'}));
  if (cut)
    list.appendChild(el('li', {class: 'cut muted', text: `\u2026 (stack may be cut at ` +
      `${frames.length} frames)`}));
  return list;
}

/* The shared tooltip. */
let tipNode = null;
function tip(ev, lines) {
  if (!tipNode) {
    tipNode = el('div', {id: 'tooltip', role: 'tooltip'});
    document.body.appendChild(tipNode);
  }
  tipNode.textContent = '';
  lines.forEach((l, i) => tipNode.appendChild(el('div', {class: i ? null : 'tip-head', text: l})));
  tipNode.style.display = 'block';
  const pad = 14, w = tipNode.offsetWidth, h = tipNode.offsetHeight;
  let x = ev.clientX + pad, y = ev.clientY + pad;
  if (x + w > window.innerWidth) x = Math.max(0, ev.clientX - w - pad);
  if (y + h > window.innerHeight) y = Math.max(0, ev.clientY - h - pad);
  tipNode.style.left = x + 'px';
  tipNode.style.top = y + 'px';
}

function untip() {
  if (tipNode) tipNode.style.display = 'none';
}

const PALETTE = ['#3366cc', '#dc3912', '#ff9900', '#109618', '#990099', '#0099c6',
  '#dd4477', '#66aa00', '#b82e2e', '#316395', '#994499'];

function section(id, title, ...body) {
  return el('section', {id: id ? id + '-section' : null}, el('h2', {text: title}), ...body);
}
