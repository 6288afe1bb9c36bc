// Tile Workbench stage view: the anywidget front end (an ES module, no build step).
// Draws model.data (see workbench/viz/stage_data.py): a source pane with per-line costs and
// one pane per compiled stage, side by side, sized to the output area. Panes are chosen with
// the stage checkboxes, resized by dragging the bars between them (and the bottom edge for the
// height); lines wrap or scroll inside their pane; scrolling one pane scrolls the others to the
// same source line; hovering or clicking a line lights or pins its source line in every pane;
// each pane has a search box; PTX and SASS lines explain their instruction on hover.

const NO_MATHS = "mathjax_ignore tex2jax_ignore";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function lineDiv(number, html, src, colour) {
  const d = el("div", "wb-ln");
  d.dataset.line = String(number);
  if (src !== null && src !== undefined) d.dataset.src = String(src);
  if (colour) d.style.background = colour;
  const code = el("span", "wb-tx");
  code.innerHTML = html; // pygments output made by the workbench: every text is escaped
  d.appendChild(code);
  return d;
}

function costCells(cost, stages) {
  const box = el("span", "wb-cost");
  const cols = stages.concat(["shared", "barriers"]);
  for (const k of cols) {
    const v = cost ? cost[k] : undefined;
    const c = el("span", "wb-cost-c", v ? String(v) : "");
    c.dataset.k = k;
    box.appendChild(c);
  }
  return box;
}

function costTitle(n, cost) {
  if (!cost) return `line ${n}: no code`;
  const parts = Object.keys(cost).filter(k => k !== "shared" && k !== "barriers")
    .map(k => `${k} ${cost[k]}`);
  let t = `line ${n}: ${parts.join(", ")} lines`;
  if (cost.shared) t += `; ${cost.shared} shared bytes per thread (PTX, as written)`;
  if (cost.barriers) t += `; ${cost.barriers} barrier${cost.barriers > 1 ? "s" : ""}`;
  return t;
}

const SHORT = { ttir: "ttir", ttgir: "tgir", llir: "llir", shared: "smem", barriers: "bar" };
const LONG = { shared: "bytes per thread moved through shared memory (PTX as written)",
               barriers: "barriers (bar.sync) in the PTX" };

function makePane(stage, head, body) {
  const pane = el("div", "wb-pane");
  pane.dataset.stage = stage;
  const h = el("div", "wb-pane-head");
  h.appendChild(el("span", "wb-stage", stage));
  h.appendChild(el("span", "wb-count", head));
  const search = el("input", "wb-search");
  search.type = "search";
  search.placeholder = "search";
  search.setAttribute("aria-label", `search ${stage}`);
  h.appendChild(search);
  const found = el("span", "wb-found", "");
  h.appendChild(found);
  pane.appendChild(h);
  pane.appendChild(body);
  return { pane, search, found, body };
}

function sourcePane(data, costStages) { // costStages: the stages with a cost column
  const body = el("div", "wb-code");
  const first = data.source.first_line;
  const costHead = el("div", "wb-ln wb-cost-head");
  costHead.dataset.line = "";
  costHead.appendChild(costCells(null, costStages));
  costHead.querySelectorAll(".wb-cost-c").forEach(c => {
    c.textContent = SHORT[c.dataset.k] || c.dataset.k;
    c.title = LONG[c.dataset.k] || `lines of ${c.dataset.k} from this source line`;
  });
  body.appendChild(costHead);
  data.source.lines.forEach((html, i) => {
    const n = first + i;
    const cost = data.cost[String(n)];
    const d = lineDiv(n, html, n, data.colours[String(n)]);
    d.insertBefore(costCells(cost, costStages), d.firstChild);
    d.title = costTitle(n, cost);
    body.appendChild(d);
  });
  return makePane("source", `${data.source.lines.length} lines`, body);
}

function stagePane(p, colours) {
  const body = el("div", "wb-code");
  let nDebug = 0;
  p.lines.forEach((row, i) => {
    const [html, src, debug, op, suffix] = row;
    const d = lineDiv(i + 1, html, src, src === null ? null : colours[String(src)]);
    if (debug) { d.classList.add("wb-dbg"); nDebug += 1; }
    if (op) d.dataset.op = op;
    if (suffix) d.appendChild(el("span", "wb-loc", suffix));
    body.appendChild(d);
  });
  const count = `${p.lines.length} lines` + (nDebug ? ` (${nDebug} debug)` : "");
  return makePane(p.stage, count, body);
}

function helpBox(help) {
  const box = el("div", "wb-help");
  box.appendChild(el("div", "wb-help-op", help.op));
  box.appendChild(el("div", "wb-help-syntax", help.syntax));
  box.appendChild(el("div", "wb-help-sum", help.summary));
  if (help.modifiers.length) {
    const ul = el("ul", "wb-help-mods");
    for (const [m, what] of help.modifiers) {
      const li = el("li");
      li.appendChild(el("code", "", m));
      li.appendChild(document.createTextNode(what ? ` ${what}` : ""));
      ul.appendChild(li);
    }
    box.appendChild(ul);
  }
  box.appendChild(el("div", "wb-help-ref", help.ref));
  return box;
}

// the first line with more than 2 px in view (offsetTop and offsetHeight are whole pixels
// of 16.8 px lines, so a line above the one placed at the top can seem to peek by 1 px)
function firstVisibleSrc(code) {
  const top = code.scrollTop;
  for (const ln of code.querySelectorAll(".wb-ln[data-src]")) {
    if (ln.offsetParent === null) continue;
    if (ln.offsetTop + ln.offsetHeight > top + 2) return [ln.dataset.src, ln.offsetTop - top];
  }
  return [null, 0];
}

function build(root, data, model) {
  root.replaceChildren();
  const helpOf = {};
  for (const p of data.panes) Object.assign(helpOf, Object.fromEntries(
    Object.entries(p.help || {}).map(([k, v]) => [p.stage + "\u0000" + k, v])));
  if (data.title) root.appendChild(el("div", "wb-title", data.title));
  if (data.report && data.report.length) {
    const rep = el("div", "wb-report");
    for (const [k, v] of data.report) {
      const kv = el("span", "wb-kv");
      kv.dataset.key = k;
      kv.appendChild(el("b", "", k));
      kv.appendChild(document.createTextNode(v));
      rep.appendChild(kv);
    }
    root.appendChild(rep);
  }
  for (const n of data.notes || []) root.appendChild(el("div", "wb-note", n));

  const stageNames = data.panes.map(p => p.stage);
  const visible = new Set(["source"].concat(data.visible || stageNames));
  const bar = el("div", "wb-toolbar");
  const boxes = {};
  for (const s of ["source"].concat(stageNames)) {
    const lab = el("label", "wb-choose");
    const cb = el("input");
    cb.type = "checkbox";
    cb.checked = visible.has(s);
    cb.dataset.stage = s;
    boxes[s] = cb;
    lab.appendChild(cb);
    lab.appendChild(document.createTextNode(s));
    bar.appendChild(lab);
  }
  // stages not made yet (the SASS: nvdisasm runs only when asked): ticking one asks the kernel
  for (const s of data.lazy || []) {
    const lab = el("label", "wb-choose wb-lazy");
    const cb = el("input");
    cb.type = "checkbox";
    cb.dataset.stage = s;
    cb.dataset.lazy = "1";
    lab.title = `${s} is made when you tick it`;
    lab.appendChild(cb);
    lab.appendChild(document.createTextNode(s));
    cb.addEventListener("change", () => {
      if (!cb.checked || !model) return;
      cb.disabled = true;
      lab.lastChild.textContent = `${s} (making\u2026)`;
      const shown = Object.keys(boxes).filter(k => k !== "source" && boxes[k].checked);
      model.send({ make_stage: s, visible: shown });
    });
    bar.appendChild(lab);
  }
  const opts = {};
  for (const [k, text, on] of [["wrap", "wrap lines", false], ["sync", "sync scroll", true],
                              ["debug", "debug info", false]]) {
    const lab = el("label", "wb-opt");
    const cb = el("input");
    cb.type = "checkbox";
    cb.checked = on;
    cb.dataset.opt = k;
    opts[k] = cb;
    lab.appendChild(cb);
    lab.appendChild(document.createTextNode(text));
    bar.appendChild(lab);
  }
  root.appendChild(bar);

  const panesBox = el("div", "wb-panes");
  root.appendChild(panesBox);
  const made = [sourcePane(data, stageNames)].concat(
    data.panes.map(p => stagePane(p, data.colours)));
  const grow = {};
  for (const m of made) {
    grow[m.pane.dataset.stage] = m.pane.dataset.stage === "source" ? 1.6 : 1;
    panesBox.appendChild(m.pane);
  }
  const tip = el("div", "wb-help-tip");
  tip.hidden = true;
  root.appendChild(tip);

  function layout() {
    panesBox.querySelectorAll(".wb-split").forEach(s => s.remove());
    const shown = made.filter(m => boxes[m.pane.dataset.stage].checked);
    made.forEach(m => { m.pane.hidden = !boxes[m.pane.dataset.stage].checked; });
    shown.forEach((m, i) => {
      m.pane.style.flex = `${grow[m.pane.dataset.stage]} 1 0`;
      if (i === 0) return;
      const split = el("div", "wb-split");
      split.title = "drag to resize";
      panesBox.insertBefore(split, m.pane);
      split.addEventListener("pointerdown", ev => startDrag(ev, shown[i - 1].pane, m.pane));
    });
    const costOn = new Set(stageNames.filter(s => boxes[s].checked).concat(["shared",
                                                                           "barriers"]));
    root.querySelectorAll(".wb-cost-c").forEach(c => {
      c.hidden = !costOn.has(c.dataset.k);
    });
    fitSource(shown);
  }

  // the source pane gets the width its longest line and its cost columns need (at most 40%
  // of the row beside one or two stages, 32% beside three, 25% beside more: the IR panes are
  // what is read, the source is the key to them) until the user drags a divider
  let dragged = false;
  function fitSource(shown) {
    const src = made[0];
    const others = shown.filter(m => m !== src);
    const box = panesBox.getBoundingClientRect().width;
    if (dragged || src.pane.hidden || !others.length || !box) return;
    src.pane.classList.remove("wb-wrap-src");
    const need = src.body.scrollWidth + 4;
    const cap = others.length <= 2 ? 0.4 : (others.length === 3 ? 0.32 : 0.25);
    const frac = Math.min(cap, Math.max(need / box, 0.2));
    const rest = others.reduce((a, m) => a + grow[m.pane.dataset.stage], 0);
    grow.source = frac * rest / (1 - frac);
    src.pane.style.flex = `${grow.source} 1 0`;
    // lines longer than that wrap inside the source pane rather than hide behind a scrollbar,
    // each continuing under its code (a hanging indent as wide as the number and costs)
    src.pane.style.setProperty("--wb-hang", "0px");
    const tx = src.body.querySelector(".wb-ln[data-src] .wb-tx");
    if (tx) {
      const hang = tx.getBoundingClientRect().left - tx.parentElement.getBoundingClientRect().left
        + (parseFloat(getComputedStyle(tx).paddingLeft) || 0);
      src.pane.style.setProperty("--wb-hang", `${Math.max(0, Math.round(hang))}px`);
    }
    src.pane.classList.toggle("wb-wrap-src", need > frac * box + 1);
  }

  function startDrag(ev, left, right) {
    ev.preventDefault();
    dragged = true;
    const x0 = ev.clientX;
    const wl = left.getBoundingClientRect().width;
    const wr = right.getBoundingClientRect().width;
    const gl = grow[left.dataset.stage], gr = grow[right.dataset.stage];
    const per = (gl + gr) / (wl + wr);
    function move(e) {
      const dx = Math.max(-wl + 60, Math.min(wr - 60, e.clientX - x0));
      grow[left.dataset.stage] = (wl + dx) * per;
      grow[right.dataset.stage] = (wr - dx) * per;
      left.style.flex = `${grow[left.dataset.stage]} 1 0`;
      right.style.flex = `${grow[right.dataset.stage]} 1 0`;
    }
    function up() {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
    }
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  }

  for (const s of Object.keys(boxes)) {
    boxes[s].addEventListener("change", () => {
      const n = Object.values(boxes).filter(b => b.checked).length;
      if (n === 0) boxes[s].checked = true; // at least one pane stays
      layout();
    });
  }
  opts.wrap.addEventListener("change", () => root.classList.toggle("wb-wrap", opts.wrap.checked));
  opts.debug.addEventListener("change",
                              () => root.classList.toggle("wb-debug", opts.debug.checked));

  // hover and pin: every line of one source line, in every pane
  const lines = s => root.querySelectorAll(`.wb-ln[data-src="${s}"]`);
  const mark = (s, cls, on) => lines(s).forEach(e => e.classList.toggle(cls, on));
  const lineOf = ev => (ev.target.closest ? ev.target.closest(".wb-ln") : null);
  let pin = null;
  root.addEventListener("mouseover", ev => {
    const ln = lineOf(ev);
    if (!ln) return;
    if (ln.dataset.src) mark(ln.dataset.src, "wb-hl", true);
    const pane = ln.closest(".wb-pane");
    const help = ln.dataset.op && helpOf[pane.dataset.stage + "\u0000" + ln.dataset.op];
    if (help) {
      tip.replaceChildren(helpBox(help));
      tip.hidden = false;
      const r = root.getBoundingClientRect(), lr = ln.getBoundingClientRect();
      tip.style.top = `${lr.bottom - r.top + 2}px`;
      tip.style.left = `${Math.max(0, Math.min(lr.left - r.left + 24, r.width - 420))}px`;
    }
  });
  root.addEventListener("mouseout", ev => {
    const ln = lineOf(ev);
    if (!ln) return;
    if (ln.dataset.src) mark(ln.dataset.src, "wb-hl", false);
    tip.hidden = true;
  });
  root.addEventListener("click", ev => {
    const ln = lineOf(ev);
    if (!ln || !ln.dataset.src) return;
    const s = ln.dataset.src;
    if (pin !== null) mark(pin, "wb-pin", false);
    if (pin === s) { pin = null; return; }
    pin = s;
    mark(s, "wb-pin", true);
    scrollOthers(ln.closest(".wb-pane"), s, ln.offsetTop - ln.parentNode.scrollTop);
  });

  // synchronised scrolling by source line: a pane scrolled by the code (not by the user) is
  // in `driven` until its scroll event arrives, so it does not drive the others in turn (that
  // echo would move every pane to the first visible line of another pane and lose the pin)
  const driven = new Set();
  function scrollOthers(fromPane, src, offset) {
    for (const m of made) {
      if (m.pane === fromPane || m.pane.hidden) continue;
      const target = m.body.querySelector(`.wb-ln[data-src="${src}"]:not(.wb-dbg)`);
      if (!target) continue;
      // the line at the same height as in the driving pane, never outside this pane
      const room = Math.max(0, m.body.clientHeight - target.offsetHeight);
      const before = m.body.scrollTop;
      m.body.scrollTop = Math.max(0, target.offsetTop - Math.min(offset, room));
      if (m.body.scrollTop !== before) driven.add(m.body);
    }
  }
  for (const m of made) {
    m.body.addEventListener("scroll", () => {
      if (driven.delete(m.body)) return;
      if (!opts.sync.checked) return;
      const [src, offset] = firstVisibleSrc(m.body);
      if (src !== null) scrollOthers(m.pane, src, offset);
    });
    // search within the pane: matching lines marked, Enter jumps to the next
    let at = -1;
    m.search.addEventListener("input", () => {
      const q = m.search.value.toLowerCase();
      at = -1;
      let n = 0;
      m.body.querySelectorAll(".wb-ln").forEach(ln => {
        const hit = q !== "" && ln.textContent.toLowerCase().includes(q);
        ln.classList.toggle("wb-match", hit);
        ln.classList.remove("wb-cur");
        if (hit) n += 1;
      });
      m.found.textContent = q ? `${n} found` : "";
    });
    m.search.addEventListener("keydown", ev => {
      if (ev.key !== "Enter") return;
      const hits = Array.from(m.body.querySelectorAll(".wb-ln.wb-match"))
        .filter(x => x.offsetParent !== null);
      if (!hits.length) return;
      if (at >= 0 && hits[at]) hits[at].classList.remove("wb-cur");
      at = (at + (ev.shiftKey ? hits.length - 1 : 1)) % hits.length;
      hits[at].classList.add("wb-cur");
      m.body.scrollTop = Math.max(0, hits[at].offsetTop - m.body.clientHeight / 3);
      m.found.textContent = `${at + 1} of ${hits.length}`;
    });
  }
  if (data.diff && data.diff.length) diffMode(root, data, made, boxes, bar, layout);
  layout();
  requestAnimationFrame(() => layout()); // again once the output area has its width
  void model;
}

// diff mode: one pair of panes at a time (a pass's input and output, or ours and Triton's),
// picked in a list; lines of the left pane missing from the right marked wb-diff-del, lines
// of the right pane missing from the left wb-diff-add (data.diff, see stage_diffs.py)
function diffMode(root, data, made, boxes, bar, layout) {
  root.classList.add("wb-diffmode");
  // in the IR panes the source colour moves to a stripe at the line's left edge (CSS reads
  // --wb-src), so the red and green of removed and added lines are the only full backgrounds
  made.slice(1).forEach(m => m.body.querySelectorAll(".wb-ln[style]").forEach(ln => {
    if (!ln.style.backgroundColor) return;
    ln.style.setProperty("--wb-src", ln.style.backgroundColor);
    ln.style.removeProperty("background");
  }));
  bar.querySelectorAll(".wb-choose").forEach(l => {
    if (l.querySelector("input").dataset.stage !== "source") l.hidden = true;
  });
  const pick = el("select", "wb-diff-pick");
  pick.setAttribute("aria-label", "pair to compare");
  data.diff.forEach((p, i) => {
    const o = el("option", "", `${p.label}  (\u2212${p.del.length} +${p.add.length})`);
    o.value = String(i);
    pick.appendChild(o);
  });
  const lab = el("label", "wb-diff-label", data.diff[0].kind === "pass" ? "pass " : "stage ");
  lab.appendChild(pick);
  bar.insertBefore(lab, bar.firstChild);
  const sum = el("span", "wb-diff-sum", "");
  bar.appendChild(sum);
  function show(i) {
    const p = data.diff[i];
    root.dataset.diff = String(i);
    root.querySelectorAll(".wb-diff-add, .wb-diff-del").forEach(
      x => x.classList.remove("wb-diff-add", "wb-diff-del"));
    made.forEach((m, k) => {
      if (k === 0) return;
      boxes[m.pane.dataset.stage].checked = (k - 1 === p.a || k - 1 === p.b);
      m.pane.classList.remove("wb-side-a", "wb-side-b");
    });
    const a = made[p.a + 1], b = made[p.b + 1];
    a.pane.classList.add("wb-side-a");
    b.pane.classList.add("wb-side-b");
    const rowsA = a.body.querySelectorAll(".wb-ln"), rowsB = b.body.querySelectorAll(".wb-ln");
    p.del.forEach(j => rowsA[j] && rowsA[j].classList.add("wb-diff-del"));
    p.add.forEach(j => rowsB[j] && rowsB[j].classList.add("wb-diff-add"));
    sum.textContent = `${p.del.length} line${p.del.length === 1 ? "" : "s"} removed, ` +
      `${p.add.length} added`;
    pick.value = String(i);
    layout();
  }
  pick.addEventListener("change", () => show(+pick.value));
  show(data.diff_chosen || 0);
}

function render({ model, el: host }) {
  const root = el("div", `wb-sw ${NO_MATHS}`);
  host.appendChild(root);
  const draw = () => build(root, model.get("data"), model);
  draw();
  model.on("change:data", draw);
  return () => model.off("change:data", draw);
}

export default { render };
