// The program-id slider of workbench.viz.access_map: recolours every array's cells with the
// chosen program's states (0 untouched, 1 loaded, 2 stored, 3 both, 4 masked-off lane) and
// adds the state to each cell's tooltip. Data: the view's <script class="wb-access-data">.
if (typeof window.wbAccessInit !== "function") {
  window.wbAccessInit = function (root) {
    if (!root || root.dataset.wbInit) return;
    root.dataset.wbInit = "1";
    const d = JSON.parse(root.querySelector(".wb-access-data").textContent);
    const slider = root.querySelector(".wb-pid");
    const label = root.querySelector(".wb-pid-text");
    const arrays = Array.from(root.querySelectorAll(".wb-access-array"));
    // the arrow keys on the slider stay with it: the notebook's shortcuts (JupyterLab's and
    // Notebook 7's listeners on the document) would move to another cell; one capturing
    // listener on the window runs before them (the slider's own default action still happens)
    if (!window.wbAccessKeys) {
      window.wbAccessKeys = true;
      window.addEventListener("keydown", (e) => {
        if (e.target && e.target.classList && e.target.classList.contains("wb-pid") &&
            ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp",
             "PageDown"].includes(e.key)) e.stopPropagation();
      }, true);
    }
    function show(p) {
      label.textContent = "program " + p + " (" + d.programs[p].join(", ") + ")";
      root.dataset.wbProgram = String(p);
      for (const box of arrays) {
        const st = d.states[box.dataset.wbArray][p];
        const cells = box.querySelector(".wb-cells").children;
        for (let i = 0; i < st.length; i++) {
          const s = st[i];
          cells[i].setAttribute("fill", s ? d.colours[s - 1] : "#e0e0e0");
          cells[i].setAttribute("data-state", s);
        }
        const grid = box.querySelector(".wb-grid");
        grid.wbExtraTip = (i) => (i < st.length && st[i] ? d.names[st[i] - 1] : "untouched") +
          " by program " + p;
      }
    }
    slider.addEventListener("input", () => show(Number(slider.value)));
    show(0);
  };
}
