/* leaksnap report: the flame graph (drawn as an icicle: the outermost frame
 * at the top, callees below, each frame as wide as its bytes).  Every
 * inline level is its own frame.  Frames narrower than 0.1% of the whole
 * are merged into one "other" frame per caller; stacks the page does not
 * carry (--html-stacks) are one "other" frame under the root.  Hover shows
 * a frame's function, file:line, module and bytes; a click zooms into it;
 * the reset button zooms out; the search box highlights matching frames. */
'use strict';

const FLAME_MIN_SHARE = 0.001;

function flameNode(name, frame, parent) {
  return {name, frame, bytes: 0, kids: new Map(), parent, depth: parent ? parent.depth + 1 : 0,
    other: false, list: []};
}

/* The tree of the flame data: children merged by function name and module
 * under the same caller. */
function buildFlameTree(fd, rootName) {
  const root = flameNode(rootName, null, null);
  root.bytes = fd.total;
  for (const [bytes, ids] of fd.stacks) {
    let node = root;
    for (const id of ids) {
      const f = fd.frames[id];
      const key = frameName(f) + '\u0000' + (f.module || '');
      let c = node.kids.get(key);
      if (!c) {
        c = flameNode(displayName(f), f, node);
        node.kids.set(key, c);
      }
      c.bytes += bytes;
      node = c;
    }
  }
  if (fd.rest_bytes > 0) {
    const rest = flameNode(`other: ${fmtInt(fd.rest_stacks)} smaller stacks`, null, root);
    rest.bytes = fd.rest_bytes;
    rest.other = true;
    root.kids.set('\u0000rest', rest);
  }
  const min = fd.total * FLAME_MIN_SHARE;
  (function finish(node) {
    let small = null;
    for (const c of node.kids.values()) {
      if (c.bytes < min && !c.other) {
        if (!small) {
          small = flameNode('', null, node);
          small.other = true;
          small.merged = 0;
        }
        small.bytes += c.bytes;
        small.merged++;
        continue;
      }
      node.list.push(c);
      finish(c);
    }
    if (small) {
      small.name = `other: ${small.merged} frame${small.merged === 1 ? '' : 's'} under 0.1%`;
      node.list.push(small);
    }
    node.list.sort((a, b) => (a.other - b.other) || (b.bytes - a.bytes) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    node.kids = null;
  })(root);
  return root;
}

function nodeMatches(node, q) {
  if (!q || node.other) return false;
  const f = node.frame || {};
  return [node.name, f.function, f.file, f.module].some(s => s && s.toLowerCase().includes(q));
}

function renderFlame(container, fd, what) {
  const total = fd.total;
  const root = buildFlameTree(fd, what === 'growth' ? 'all growth' : 'all live bytes');
  const W = 1200, ROW = 18;
  let zoom = root, query = '';

  const search = el('input', {type: 'search', id: 'flame-search', placeholder: 'search frames',
    'aria-label': 'search frames'});
  const reset = el('button', {type: 'button', id: 'flame-reset', text: 'Reset zoom'});
  const match = el('span', {id: 'flame-match', class: 'muted'});
  const crumb = el('span', {id: 'flame-zoom', class: 'muted'});
  container.appendChild(el('div', {class: 'controls'}, search, reset, match, crumb));
  const svg = svgEl('svg', {class: 'flame', width: '100%'});
  container.appendChild(svg);
  if (!fd.stacks.length && !fd.rest_bytes) {
    container.appendChild(el('p', {class: 'muted', text: what === 'growth'
      ? 'No stack grew: nothing to draw.' : 'No records: nothing to draw.'}));
  }

  function describe(node) {
    const lines = [node.name];
    const f = node.frame;
    if (f && f.function && f.function !== node.name) lines.push(f.function);
    if (f && f.truncated)
      lines.push('stacks that filled every frame slot of their dump: they may have been cut');
    if (f) {
      const fl = fileLine(f, true);
      if (fl) lines.push(fl);
      if (f.inlined) lines.push('(inlined)');
      if (f.module) lines.push(f.module + '+' + f.rel_pc);
    }
    lines.push(`${fmtBytes(node.bytes)} (${fmtInt(node.bytes)} bytes), ` +
      `${fmtPct(node.bytes, total)} of ${what === 'growth' ? 'the growth' : 'all'}` +
      (zoom !== root ? `, ${fmtPct(node.bytes, zoom.bytes)} of the zoomed frame` : ''));
    return lines;
  }

  function draw() {
    svg.textContent = '';
    let depth = 0;
    const frames = [];
    /* the zoomed frame's callers, full width and dimmed */
    for (let a = zoom; a; a = a.parent) frames.push({node: a, x: 0, w: W, anc: a !== zoom});
    (function lay(node, x, w) {
      let cx = x;
      for (const c of node.list) {
        const cw = w * c.bytes / (node.bytes || 1);
        if (cw >= 0.3) {
          frames.push({node: c, x: cx, w: cw, anc: false});
          lay(c, cx, cw);
        }
        cx += cw;
      }
    })(zoom, 0, W);
    for (const fr of frames) depth = Math.max(depth, fr.node.depth);
    const H = (depth + 1) * ROW;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('data-zoom-depth', zoom.depth);
    svg.setAttribute('data-zoom-bytes', zoom.bytes);
    let matched = 0, nmatched = 0;
    for (const fr of frames) {
      const node = fr.node;
      const hit = nodeMatches(node, query);
      const cls = ['fr'];
      if (fr.anc) cls.push('anc');
      if (node.other) cls.push('other');
      if (node === root) cls.push('root');
      if (hit) cls.push('match');
      if (node.frame && node.frame.inlined) cls.push('inl');
      if (node.frame && node.frame.truncated) cls.push('trunc');
      const g = svgEl('g', {class: cls.join(' '), 'data-depth': node.depth,
        'data-bytes': node.bytes, 'data-name': node.name});
      g.appendChild(svgEl('rect', {x: fr.x.toFixed(2), y: node.depth * ROW,
        width: Math.max(fr.w - 0.5, 0.1).toFixed(2), height: ROW - 1, rx: 2}));
      const chars = Math.floor((fr.w - 6) / 7);
      if (chars >= 3) {
        const label = node.name.length > chars ? node.name.slice(0, chars - 1) + '\u2026'
          : node.name;
        g.appendChild(svgEl('text', {x: (fr.x + 3).toFixed(2), y: node.depth * ROW + 13,
          text: label}));
      }
      g.addEventListener('mousemove', ev => tip(ev, describe(node)));
      g.addEventListener('mouseleave', untip);
      g.addEventListener('click', () => { zoom = node.other && !node.list.length ? zoom : node;
        untip(); draw(); });
      svg.appendChild(g);
    }
    /* bytes under matching frames, each counted once (not again under a
     * matching caller), over the whole tree */
    (function sum(node) {
      if (nodeMatches(node, query)) { matched += node.bytes; nmatched++; return; }
      for (const c of node.list) sum(c);
    })(root);
    match.textContent = query ? `${nmatched ? fmtBytes(matched) : 'nothing'} matched` +
      (nmatched ? ` (${fmtPct(matched, total)} of ${what === 'growth' ? 'the growth' : 'all'})`
        : '') : '';
    crumb.textContent = zoom === root ? '' : `zoomed into ${zoom.name}`;
    reset.disabled = zoom === root;
  }

  reset.addEventListener('click', () => { zoom = root; draw(); });
  search.addEventListener('input', () => { query = search.value.trim().toLowerCase(); draw(); });
  draw();
}
