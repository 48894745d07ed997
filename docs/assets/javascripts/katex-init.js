// Render the math elements pymdownx.arithmatex writes (generic mode: <span class="arithmatex">
// \( ... \)</span> inline, <div class="arithmatex">\[ ... \]</div> display) with the bundled
// KaTeX. Only those elements are rendered, so a "\(" elsewhere in the text stays as written.
(function () {
  function render(root) {
    root.querySelectorAll(".arithmatex").forEach(function (el) {
      var tex = el.textContent.trim();
      var display = tex.startsWith("\\[");
      if (!(display || tex.startsWith("\\("))) return; // already rendered
      katex.render(tex.slice(2, -2), el, { displayMode: display, throwOnError: false });
    });
  }
  if (typeof document$ !== "undefined") {
    // Material's document observable: fires on load and after each instant navigation.
    document$.subscribe(function () { render(document.body); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { render(document.body); });
  }
})();
