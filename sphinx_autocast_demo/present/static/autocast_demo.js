// Marks each results table that is wider than its box at the reader's width, so that the CSS
// says "scroll sideways" above it: a cut-off column is never silent.
(() => {
  const mark = () => {
    for (const box of document.querySelectorAll(".autocast-demo-scroll")) {
      const table = box.querySelector("table");
      const scrolls = table && table.scrollWidth > table.clientWidth + 1;
      box.toggleAttribute("data-scrolls", Boolean(scrolls));
    }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mark);
  else mark();
  window.addEventListener("resize", mark);
})();
