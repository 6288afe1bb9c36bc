// The layout explorer (anywidget). Blocked layouts are computed here, in the browser, from
// sizePerThread / threadsPerWarp / warpsPerCTA / order / shape with the same construction as
// workbench/layouts/convert.py blocked_to_linear (Triton's BlockedEncodingAttr::toLinearLayout):
// so the picture follows a slider at once. Other kinds (mma, dot_op, any Triton text) get their
// owner map from Python (the "owner" trait); the facts and the bank view always come from Python.

const TAB20 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
  "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
  "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"];
export function warpPalette(n) {
  if (n <= TAB20.length) return TAB20.slice(0, n);
  return Array.from({ length: n }, (_, w) => `hsl(${Math.round((360 * w) / n)},65%,60%)`);
}

const isPow2 = (x) => Number.isInteger(x) && x > 0 && (x & (x - 1)) === 0;

export function blockedError(spt, tpw, wpc, order, shape) {
  const r = shape.length, L = (a) => "[" + a.join(", ") + "]";
  for (const [name, v] of [["sizePerThread", spt], ["threadsPerWarp", tpw], ["warpsPerCTA", wpc]]) {
    if (v.length !== r) return `${name} = ${L(v)} has rank ${v.length}, the tile has rank ${r}`;
    if (!v.every(isPow2)) return `${name} = ${L(v)}: every entry must be a power of two`;
  }
  const p = tpw.reduce((a, b) => a * b, 1);
  if (p !== 32) return `threadsPerWarp = ${L(tpw)} has product ${p}; a warp has 32 threads`;
  if ([...order].sort().join() !== [...Array(r).keys()].join())
    return `order = ${L(order)} must be a permutation of 0..${r - 1}`;
  if (!shape.every(isPow2)) return `shape ${L(shape)}: every extent must be a power of two`;
  return null;
}

// Owner of every element: {warp, lane, reg, copies} (Int32Arrays, row-major over shape) and
// numWarps. The owner is the first (warp, lane, register) in lexicographic order (as
// workbench.layouts.ownership).
export function blockedOwners(spt, tpw, wpc, order, shape) {
  const rank = shape.length;
  const size = Array(rank).fill(1);
  const bases = { register: [], lane: [], warp: [] };
  for (const [name, per] of [["register", spt], ["lane", tpw], ["warp", wpc]]) {
    for (const d of order) {
      for (let i = 1; i < per[d]; i *= 2) {
        const v = Array(rank).fill(0); v[d] = size[d] * i; bases[name].push(v);
      }
      size[d] *= per[d];
    }
  }
  // ensureLayoutNotLargerThan: zero the largest bases of a dim until it fits (broadcast)
  for (const d of order) {
    let actual = size[d];
    if (actual <= shape[d]) continue;
    const cands = [];
    for (const name of ["register", "lane", "warp"])
      bases[name].forEach((v, i) => { if (v[d] !== 0) cands.push([v[d], name, i]); });
    cands.sort((a, b) => b[0] - a[0]);
    for (const [, name, i] of cands) {
      if (actual <= shape[d]) break;
      bases[name][i][d] = 0; actual >>= 1;
    }
    size[d] = Math.min(size[d], shape[d]);
  }
  // ensureLayoutNotSmallerThan: repeat with extra register bases, order[0] first
  for (const d of order) {
    for (let s = size[d]; s < shape[d]; s *= 2) {
      const v = Array(rank).fill(0); v[d] = s; bases.register.push(v);
    }
    size[d] = Math.max(size[d], shape[d]);
  }
  const nW = 1 << bases.warp.length, nL = 1 << bases.lane.length, nR = 1 << bases.register.length;
  const strides = Array(rank).fill(1);
  for (let d = rank - 2; d >= 0; d--) strides[d] = strides[d + 1] * shape[d + 1];
  const n = shape.reduce((a, b) => a * b, 1);
  const warp = new Int32Array(n).fill(-1), lane = new Int32Array(n), reg = new Int32Array(n);
  const copies = new Int32Array(n);
  const coordOf = (vecs, x) => {
    const c = Array(rank).fill(0);
    for (let b = 0; x; b++, x >>= 1) if (x & 1) for (let d = 0; d < rank; d++) c[d] ^= vecs[b][d];
    return c;
  };
  const W = [...Array(nW).keys()].map((x) => coordOf(bases.warp, x));
  const Ln = [...Array(nL).keys()].map((x) => coordOf(bases.lane, x));
  const R = [...Array(nR).keys()].map((x) => coordOf(bases.register, x));
  for (let w = 0; w < nW; w++) for (let l = 0; l < nL; l++) for (let r = 0; r < nR; r++) {
    let f = 0;
    for (let d = 0; d < rank; d++) f += (W[w][d] ^ Ln[l][d] ^ R[r][d]) * strides[d];
    copies[f]++;
    if (warp[f] < 0) { warp[f] = w; lane[f] = l; reg[f] = r; }
  }
  return { warp, lane, reg, copies, numWarps: nW, numRegisters: nR };
}

function labelFont(cellPx, label, longest) {
  // workbench.viz.svg_grid.label_font
  const ref = longest.length > label.length ? longest : label;
  const one = Math.min(cellPx * 0.42, (cellPx * 0.9) / (0.6 * ref.length));
  const k = ref.indexOf(":"), j = label.indexOf(":");
  if (k >= 0 && j >= 0) {
    const two = Math.min(cellPx * 0.36, (cellPx * 0.9) / (0.6 * Math.max(k, ref.length - k)));
    if (two > one) return [two, [label.slice(0, j), label.slice(j)]];
  }
  return [one, [label]];
}

const POW2 = [1, 2, 4, 8, 16, 32];
const NAV_KEYS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End",
                          "PageUp", "PageDown"]);
const rgbaCache = new Map();
function toRGBA(colour) {  // a CSS colour as a little-endian RGBA Uint32 (ImageData order)
  let v = rgbaCache.get(colour);
  if (v === undefined) {
    const c = document.createElement("canvas"); c.width = c.height = 1;
    const x = c.getContext("2d"); x.fillStyle = colour; x.fillRect(0, 0, 1, 1);
    const d = x.getImageData(0, 0, 1, 1).data;
    v = (d[3] << 24 | d[2] << 16 | d[1] << 8 | d[0]) >>> 0;
    rgbaCache.set(colour, v);
  }
  return v;
}
const el = (tag, attrs = {}, text) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};

function control(label, input) {
  const box = el("div", { class: "wb-ctl", style: "display:inline-block;margin:2px 14px 4px 0;vertical-align:top" });
  box.appendChild(el("div", { class: "wb-ctl-label", style: "font-size:12px;color:#333;white-space:nowrap" }, label));
  box.appendChild(input);
  return box;
}

function select(options, value, onchange, name) {
  const s = el("select", { "data-param": name });
  for (const [v, t] of options) {
    const o = el("option", { value: JSON.stringify(v) }, t);
    if (JSON.stringify(v) === JSON.stringify(value)) o.selected = true;
    s.appendChild(o);
  }
  s.addEventListener("change", () => onchange(JSON.parse(s.value)));
  return s;
}

function pow2Slider(value, onchange, name, values = POW2) {
  const wrap = el("span", { style: "white-space:nowrap" });
  const idx = Math.max(0, values.indexOf(value));
  const s = el("input", { type: "range", min: 0, max: values.length - 1, step: 1, value: idx, "data-param": name, style: "width:110px;vertical-align:middle" });
  const out = el("span", { style: "display:inline-block;width:2.2em;font:12px monospace;margin-left:4px" }, String(values[idx]));
  s.addEventListener("input", () => { out.textContent = String(values[+s.value]); onchange(values[+s.value]); });
  wrap.append(s, out);
  return wrap;
}

function render({ model, el: root }) {
  let p = JSON.parse(JSON.stringify(model.get("params")));
  let owners = null, zoom = 1;
  root.classList.add("wb-explorer");
  // the notebook's shortcuts (JupyterLab's and Notebook 7's listeners on the document) would
  // take the arrow keys meant for a focused slider or list and move to another cell: a
  // capturing listener on the window runs before them and stops those keys there (the
  // control's own default action, moving the slider, still happens)
  const keepKeys = (e) => {
    if (NAV_KEYS.has(e.key) && root.contains(e.target) && e.target.matches("input, select")) {
      e.stopPropagation();
    }
  };
  window.addEventListener("keydown", keepKeys, true);
  root.style.fontFamily = "sans-serif";
  const controls = el("div", { class: "wb-controls" });
  const status = el("div", { class: "wb-status", style: "font-size:12px;margin:4px 0" });
  const bar = el("div", { style: "font-size:12px;margin:2px 0" });
  const zin = el("button", {}, "+"), zout = el("button", {}, "\u2212"), zfit = el("button", {}, "fit");
  bar.append(zin, zout, zfit, el("span", { style: "color:#555" }, " hover a cell for its owner"));
  const box = el("div", { class: "wb-canvas-box", style: "overflow:auto;max-height:70vh;border:1px solid #ddd;position:relative" });
  const canvas = el("canvas", { class: "wb-layout-canvas" });
  box.appendChild(canvas);
  const tip = el("div", { class: "wb-tip", style: "position:fixed;display:none;pointer-events:none;background:#ffffe8;border:1px solid #888;padding:2px 5px;font:12px monospace;z-index:1000" });
  const legend = el("div", { class: "wb-legend", style: "display:flex;flex-wrap:wrap;font-size:12px;margin:4px 0" });
  const message = el("div", { class: "wb-message", style: "font-size:12px" });
  const banks = el("div", { class: "wb-banks", style: "max-height:80vh;overflow:auto" });
  // the layout picture and the bank view side by side when the output area is wide enough
  // (each column at least 460 px), one above the other when it is not
  const views = el("div", { class: "wb-views", style: "display:flex;flex-wrap:wrap;gap:8px 16px;align-items:flex-start" });
  const left = el("div", { class: "wb-view-layout", style: "flex:1 1 460px;min-width:0" });
  const right = el("div", { class: "wb-view-banks", style: "flex:1 1 460px;min-width:0" });
  left.append(bar, box, legend, message);
  right.append(banks);
  views.append(left, right);
  root.append(controls, status, views, tip);

  function ownersNow() {
    if (p.kind === "blocked") {
      const err = blockedError(p.size_per_thread, p.threads_per_warp, p.warps_per_cta, p.order, p.shape);
      if (err) return { error: err };
      return blockedOwners(p.size_per_thread, p.threads_per_warp, p.warps_per_cta, p.order, p.shape);
    }
    const o = model.get("owner");
    if (!o || !o.warp || JSON.stringify(o.params) !== JSON.stringify(p)) return { pending: true, error: o && o.error };
    return { warp: o.warp, lane: o.lane, reg: o.reg, copies: o.copies, numWarps: o.num_warps };
  }

  function geometry() {
    const s = p.shape;
    if (s.length === 1) { const cols = Math.min(s[0], 64); return [Math.ceil(s[0] / cols), cols]; }
    return [s.slice(0, -1).reduce((a, b) => a * b, 1), s[s.length - 1]];
  }

  function draw() {
    const t0 = performance.now();
    owners = ownersNow();
    if (owners.error || owners.pending) {
      status.textContent = owners.error ? owners.error : "computing the owner map in Python\u2026";
      status.style.color = owners.error ? "#b00020" : "#555";
      if (owners.error) status.setAttribute("data-wb-layout-error", "1");
      canvas.style.display = "none";
      root.dataset.wbDrawn = String(+(root.dataset.wbDrawn || 0) + 1);
      return;
    }
    status.removeAttribute("data-wb-layout-error");
    status.style.color = "#333";
    canvas.style.display = "block";
    const [rows, cols] = geometry();
    const fit = Math.min(44, (box.clientWidth || 900) / cols);
    const cell = Math.max(1, fit * zoom);
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.ceil(cols * cell * dpr); canvas.height = Math.ceil(rows * cell * dpr);
    canvas.style.width = cols * cell + "px"; canvas.style.height = rows * cell + "px";
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const pal = warpPalette(owners.numWarps);
    const rgba = pal.map(toRGBA), grey = toRGBA("#e0e0e0");
    const selW = p.warp, selT = p.thread;
    const n = owners.warp.length;
    // one pixel per cell in a small image, scaled up without smoothing: fast at any size
    const img = new ImageData(cols, rows);
    const px = new Uint32Array(img.data.buffer);
    const shown = new Uint8Array(n);
    let maxLane = 0, maxReg = 0;
    for (let i = 0; i < n; i++) {
      const w = owners.warp[i];
      const on = (selW < 0 || w === selW) && (selT < 0 || w * 32 + owners.lane[i] === selT);
      shown[i] = on ? 1 : 0;
      px[i] = on ? rgba[w] : grey;
      if (on) { maxLane = Math.max(maxLane, owners.lane[i]); maxReg = Math.max(maxReg, owners.reg[i]); }
    }
    const small = document.createElement("canvas");
    small.width = cols; small.height = rows;
    small.getContext("2d").putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(small, 0, 0, cols * cell, rows * cell);
    const longest = "T" + maxLane + ":" + maxReg;
    if (cell >= 6) {
      ctx.strokeStyle = "#fff"; ctx.lineWidth = 0.6; ctx.beginPath();
      for (let c = 0; c <= cols; c++) { ctx.moveTo(c * cell, 0); ctx.lineTo(c * cell, rows * cell); }
      for (let r = 0; r <= rows; r++) { ctx.moveTo(0, r * cell); ctx.lineTo(cols * cell, r * cell); }
      ctx.stroke();
    }
    let nlab = 0;
    const [fs] = labelFont(cell, longest, longest);
    if (fs >= 9) {
      ctx.fillStyle = "#000"; ctx.textAlign = "center"; ctx.textBaseline = "middle";
      ctx.font = fs.toFixed(1) + "px sans-serif";
      for (let i = 0; i < n; i++) {
        if (!shown[i]) continue;
        const label = "T" + owners.lane[i] + ":" + owners.reg[i];
        const [, lines] = labelFont(cell, label, longest);
        const x = (i % cols) * cell + cell / 2, y = Math.floor(i / cols) * cell + cell / 2;
        if (lines.length === 1) ctx.fillText(lines[0], x, y);
        else { ctx.fillText(lines[0], x, y - fs * 0.55); ctx.fillText(lines[1], x, y + fs * 0.55); }
        nlab++;
      }
    }
    legend.textContent = "";
    for (let w = 0; w < owners.numWarps; w++) {
      if (selW >= 0 && w !== selW) continue;
      const s = el("span", { class: "wb-leg", style: "display:inline-flex;align-items:center;margin:0 10px 2px 0" });
      s.append(el("span", { style: `display:inline-block;width:12px;height:12px;background:${pal[w]};margin-right:4px;border:1px solid #999` }), document.createTextNode("warp " + w));
      legend.appendChild(s);
    }
    status.textContent = `${p.kind} over [${p.shape.join(", ")}]: colour = warp, label = T<lane>:<register>` + (nlab ? "" : " (zoom in for labels)");
    root.dataset.wbLabels = String(nlab);
    root.dataset.wbDrawn = String(+(root.dataset.wbDrawn || 0) + 1);
    root.dataset.wbDrawMs = (performance.now() - t0).toFixed(2);
  }
  root.wbOwners = () => owners;
  root.wbCells = () => { const [, cols] = geometry(); return cols; };

  let sync = 0;
  function set(key, value) {
    p[key] = value;
    if (key === "kind" || key === "shape") buildControls();
    draw();  // at once, here in the browser
    // Python (facts, bank view, owner maps of other kinds) hears of it once the controls rest
    clearTimeout(sync);
    sync = setTimeout(() => {
      model.set("params", JSON.parse(JSON.stringify(p)));
      model.save_changes();
    }, 80);
  }
  const setDim = (key, d) => (v) => { const a = p[key].slice(); a[d] = v; set(key, a); };

  function buildControls() {
    controls.textContent = "";
    const r = p.shape.length;
    const row1 = el("div");
    row1.append(
      control("layout kind", select([["blocked", "blocked"], ["mma", "nvidia_mma"], ["dot_op", "dot_op"], ["fixed", "Triton text"]], p.kind, (v) => set("kind", v), "kind")),
      control("dtype", select(model.get("dtypes").map((d) => [d, d]), p.dtype, (v) => set("dtype", v), "dtype")));
    for (let d = 0; d < r; d++)
      row1.append(control(`shape[${d}]`, select([1, 2, 4, 8, 16, 32, 64, 128, 256].map((v) => [v, String(v)]), p.shape[d], setDim("shape", d), `shape[${d}]`)));
    controls.appendChild(row1);
    if (p.kind === "blocked") {
      for (const [key, name] of [["size_per_thread", "sizePerThread"], ["threads_per_warp", "threadsPerWarp"], ["warps_per_cta", "warpsPerCTA"]]) {
        const row = el("div");
        for (let d = 0; d < r; d++) row.appendChild(control(`${name}[${d}]`, pow2Slider(p[key][d], setDim(key, d), `${name}[${d}]`)));
        controls.appendChild(row);
      }
      const orders = r === 1 ? [[[0], "[0]"]] : [[[1, 0], "[1, 0]"], [[0, 1], "[0, 1]"]];
      controls.appendChild(control("order (fastest dim first)", select(orders, p.order, (v) => set("order", v), "order")));
    } else if (p.kind === "mma" || p.kind === "dot_op") {
      const row = el("div");
      row.append(control("versionMajor", select([[2, "2 (mma.sync)"], [3, "3 (wgmma)"]], p.mma_version, (v) => set("mma_version", v), "versionMajor")));
      for (let d = 0; d < 2; d++) row.append(control(`warpsPerCTA[${d}]`, pow2Slider(p.mma_warps[d], setDim("mma_warps", d), `mma warpsPerCTA[${d}]`)));
      row.append(control("instrShape N (v3)", pow2Slider(p.mma_instr_n, (v) => set("mma_instr_n", v), "instrShapeN", [8, 16, 32, 64, 128, 256])));
      if (p.kind === "dot_op") {
        row.append(control("opIdx", select([[0, "A (0)"], [1, "B (1)"]], p.op_idx, (v) => set("op_idx", v), "opIdx")));
        row.append(control("kWidth", pow2Slider(p.k_width, (v) => set("k_width", v), "kWidth")));
      }
      controls.appendChild(row);
    } else {
      const t = el("input", { type: "text", value: p.fixed_text, style: "width:90%", "data-param": "layout" });
      t.addEventListener("change", () => set("fixed_text", t.value));
      controls.appendChild(control("layout (Triton text: #ttg.blocked<...>, #ttg.slice<...>, #ttg.linear<...>)", t));
    }
    const sh = el("div");
    sh.append(
      control("shared layout", select([["swizzled", "swizzled_shared"], ["padded", "row-major + padding"], ["none", "none"]], p.shared_kind, (v) => set("shared_kind", v), "shared")),
      control("bytes per lane (vector)", select([[null, "one element"], [4, "4 B"], [8, "8 B"], [16, "16 B"]], p.vector_bytes, (v) => set("vector_bytes", v), "vector_bytes")),
      control("vec", pow2Slider(p.vec, (v) => set("vec", v), "vec")),
      control("perPhase", pow2Slider(p.per_phase, (v) => set("per_phase", v), "perPhase")),
      control("maxPhase", pow2Slider(p.max_phase, (v) => set("max_phase", v), "maxPhase")),
      control("shared order", select([[[1, 0], "[1, 0]"], [[0, 1], "[0, 1]"]], p.shared_order, (v) => set("shared_order", v), "shared_order")),
      control("padding (elements per row)", select([0, 1, 2, 4, 8].map((v) => [v, String(v)]), p.pad, (v) => set("pad", v), "pad")),
      control("request", select([...Array(32).keys()].map((v) => [v, String(v)]), p.request, (v) => set("request", v), "request")),
      control("compare with plain row-major", (() => { const c = el("input", { type: "checkbox", "data-param": "compare" }); c.checked = p.compare_plain; c.addEventListener("change", () => set("compare_plain", c.checked)); return c; })()));
    controls.appendChild(sh);
    const sel = el("div");
    const num = (v, key, max) => { const i = el("input", { type: "number", min: -1, max, value: v, style: "width:5em", "data-param": key }); i.addEventListener("change", () => set(key, +i.value)); return i; };
    sel.append(control("show warp (-1: all)", num(p.warp, "warp", 255)), control("show thread = warp*32+lane (-1: all)", num(p.thread, "thread", 8191)));
    controls.appendChild(sel);
  }

  canvas.addEventListener("mousemove", (e) => {
    if (!owners || !owners.warp) return;
    const [rows, cols] = geometry();
    const b = canvas.getBoundingClientRect();
    const c = Math.floor(((e.clientX - b.left) / b.width) * cols), r = Math.floor(((e.clientY - b.top) / b.height) * rows);
    const i = r * cols + c;
    if (c < 0 || r < 0 || c >= cols || r >= rows || i >= owners.warp.length) { tip.style.display = "none"; return; }
    const w = owners.warp[i], l = owners.lane[i];
    tip.textContent = `(${r}, ${c}), thread ${w * 32 + l}, warp ${w}, lane ${l}, register ${owners.reg[i]}, copies ${owners.copies[i]}`;
    tip.style.left = e.clientX + 14 + "px"; tip.style.top = e.clientY + 12 + "px"; tip.style.display = "block";
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  zin.onclick = () => { zoom *= 1.5; draw(); };
  zout.onclick = () => { zoom /= 1.5; draw(); };
  zfit.onclick = () => { zoom = 1; draw(); };

  function showPython() {
    message.innerHTML = model.get("message");
    banks.innerHTML = model.get("bank_html");
    for (const old of banks.querySelectorAll("script")) {  // run the bank view's scripts
      const s = document.createElement("script"); s.textContent = old.textContent; old.replaceWith(s);
    }
  }
  model.on("change:owner", () => { if (p.kind !== "blocked") draw(); });
  model.on("change:message", showPython);
  model.on("change:bank_html", showPython);
  buildControls();
  draw();
  showPython();
  if (window.ResizeObserver) new ResizeObserver(() => { if (zoom === 1) draw(); }).observe(box);
  return () => window.removeEventListener("keydown", keepKeys, true);
}

export default { render };
