// Zoom, pan, hover tooltip and fitted labels for the SVG grids of workbench.viz
// (layout, bank and access-map pictures). The data is the root's data-wb-grid JSON:
// rows, cols, cell (SVG units), ox/oy (margins), labels[], fields{name: int[]}, minFont (px),
// strip (a 1-D array: cell i is element i).
// Defined once per page; every grid calls wbGridInit(root).
if (typeof window.wbGridInit !== "function") {
  window.wbLabelFont = function (cellPx, label, longest) {
    // same rule as workbench.viz.svg_grid.label_font: [font px, lines]
    if (!label) return [0, []];
    const ref = longest && longest.length > label.length ? longest : label;
    const one = Math.min(cellPx * 0.42, (cellPx * 0.9) / (0.6 * ref.length));
    const k = ref.indexOf(":"), j = label.indexOf(":");
    if (k >= 0 && j >= 0) {
      const a = ref.slice(0, k), b = ref.slice(k);
      const two = Math.min(cellPx * 0.36, (cellPx * 0.9) / (0.6 * Math.max(a.length, b.length)));
      if (two > one) return [two, [label.slice(0, j), label.slice(j)]];
    }
    return [one, [label]];
  };
  window.wbGridInit = function (root) {
    if (!root || root.dataset.wbInit) return;
    root.dataset.wbInit = "1";
    const d = JSON.parse(root.dataset.wbGrid);
    const box = root.querySelector(".wb-grid-box");
    const svg = box.querySelector("svg");
    const tip = root.querySelector(".wb-tip");
    const lbls = svg.querySelector(".wb-lbls");
    const natural = svg.viewBox.baseVal.width;
    const NS = "http://www.w3.org/2000/svg";
    let zoom = 1, frame = 0;
    const unitPx = () => svg.getBoundingClientRect().width / natural;
    const fitWidth = () => Math.min(box.clientWidth || natural, natural);
    function tooltip(i) {
      const r = Math.floor(i / d.cols), c = i % d.cols;
      const parts = [d.strip ? "element " + i : "(" + r + ", " + c + ")"];
      for (const [k, v] of Object.entries(d.fields)) {
        const x = v[i];
        if (typeof x === "string" ? x !== "" : x >= 0) parts.push(k + " " + x);
      }
      if (root.wbExtraTip) parts.push(root.wbExtraTip(i));
      return parts.filter((x) => x).join(", ");
    }
    function drawLabels() {
      frame = 0;
      const s = unitPx(), cellPx = d.cell * s;
      while (lbls.firstChild) lbls.removeChild(lbls.firstChild);
      root.dataset.wbLabels = "0";
      if (window.wbLabelFont(cellPx, d.longest, d.longest)[0] < d.minFont) return;
      const x0 = box.scrollLeft / s - d.ox, x1 = (box.scrollLeft + box.clientWidth) / s - d.ox;
      const y0 = box.scrollTop / s - d.oy, y1 = (box.scrollTop + box.clientHeight) / s - d.oy;
      const c0 = Math.max(0, Math.floor(x0 / d.cell)), c1 = Math.min(d.cols, Math.ceil(x1 / d.cell));
      const r0 = Math.max(0, Math.floor(y0 / d.cell)), r1 = Math.min(d.rows, Math.ceil(y1 / d.cell));
      if ((c1 - c0) * (r1 - r0) > 8192) return;
      let n = 0;
      for (let r = r0; r < r1; r++) for (let c = c0; c < c1; c++) {
        const i = r * d.cols + c, lb = d.labels[i];
        if (!lb) continue;
        const [fpx, lines] = window.wbLabelFont(cellPx, lb, d.longest);
        if (fpx < d.minFont) continue;
        const t = document.createElementNS(NS, "text");
        const x = c * d.cell + d.cell / 2, y = r * d.cell + d.cell / 2;
        t.setAttribute("x", x); t.setAttribute("y", y);
        t.setAttribute("font-size", (fpx / s).toFixed(2));
        t.setAttribute("text-anchor", "middle");
        t.setAttribute("dominant-baseline", "central");
        t.setAttribute("data-i", i);
        if (lines.length === 1) t.textContent = lines[0];
        else lines.forEach((ln, j) => {
          const sp = document.createElementNS(NS, "tspan");
          sp.setAttribute("x", x); sp.setAttribute("dy", j ? "1.1em" : "-0.55em");
          sp.textContent = ln; t.appendChild(sp);
        });
        lbls.appendChild(t); n++;
      }
      root.dataset.wbLabels = String(n);
    }
    const later = () => { if (!frame) frame = requestAnimationFrame(drawLabels); };
    function setZoom(z, cx, cy) {
      const old = svg.getBoundingClientRect().width;
      zoom = Math.max(0.25, Math.min(z, 64));
      const w = fitWidth() * zoom;
      svg.style.maxWidth = "none";
      svg.style.width = w + "px";
      const f = w / old;
      const px = cx === undefined ? box.clientWidth / 2 : cx;
      const py = cy === undefined ? box.clientHeight / 2 : cy;
      box.scrollLeft = (box.scrollLeft + px) * f - px;
      box.scrollTop = (box.scrollTop + py) * f - py;
      root.dataset.wbZoom = String(zoom);
      const s = unitPx();  // ticks keep about 12 px on screen when zoomed in
      svg.querySelectorAll(".wb-tick").forEach((t) => t.setAttribute("font-size", s > 1 ? (12 / s).toFixed(2) : "10"));
      drawLabels();
    }
    root.wbSetZoom = setZoom;
    root.querySelector(".wb-zin").onclick = () => setZoom(zoom * 1.5);
    root.querySelector(".wb-zout").onclick = () => setZoom(zoom / 1.5);
    root.querySelector(".wb-zfit").onclick = () => setZoom(1);
    box.addEventListener("wheel", (e) => {
      if (!e.ctrlKey && !e.metaKey) return;
      e.preventDefault();
      const b = box.getBoundingClientRect();
      setZoom(zoom * (e.deltaY < 0 ? 1.25 : 0.8), e.clientX - b.left, e.clientY - b.top);
    }, { passive: false });
    let drag = null;
    box.addEventListener("mousedown", (e) => {
      drag = [e.clientX, e.clientY, box.scrollLeft, box.scrollTop]; e.preventDefault();
    });
    window.addEventListener("mouseup", () => { drag = null; });
    window.addEventListener("mousemove", (e) => {
      if (!drag) return;
      box.scrollLeft = drag[2] - (e.clientX - drag[0]);
      box.scrollTop = drag[3] - (e.clientY - drag[1]);
    });
    box.addEventListener("scroll", later);
    svg.addEventListener("mousemove", (e) => {
      const m = svg.getScreenCTM();
      if (!m) return;
      const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(m.inverse());
      const c = Math.floor((p.x - d.ox) / d.cell), r = Math.floor((p.y - d.oy) / d.cell);
      if (c < 0 || r < 0 || c >= d.cols || r >= d.rows || drag) { tip.style.display = "none"; return; }
      tip.textContent = tooltip(r * d.cols + c);
      tip.style.left = e.clientX + 14 + "px"; tip.style.top = e.clientY + 12 + "px";
      tip.style.display = "block";
    });
    svg.addEventListener("mouseleave", () => { tip.style.display = "none"; });
    svg.querySelectorAll("title").forEach((t) => t.remove());  // the script's tooltip replaces them
    if (window.ResizeObserver) new ResizeObserver(later).observe(box);
    drawLabels();
  };
}
