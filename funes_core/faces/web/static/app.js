// funes ui: the little JavaScript the viewer has (served from here only: the CSP allows no
// inline script). Search as you type, "copy as funes get", and the live owed-embeddings figure.
// Everything it inserts is HTML the server rendered and escaped, or plain text.
"use strict";

(function () {
  function debounce(fn, ms) {
    let timer = null;
    return function () {
      clearTimeout(timer);
      timer = setTimeout(fn, ms);
    };
  }

  // How long after the last key the search starts. Short, so that most of the 300 ms a result
  // may take (issue 24's target) goes to the search itself; when keys come slower than this,
  // `asked` keeps an older answer from replacing a newer one and the older request is aborted.
  const SEARCH_DEBOUNCE_MS = 60;

  function liveSearch(form) {
    const target = document.getElementById("hits");
    // This page's id: the server drops a search of this page that a newer one superseded while
    // it waited its turn, so keys faster than searches do not queue unwanted ones.
    const tab = Math.random().toString(36).slice(2, 14);
    let asked = 0;
    let pending = null;
    const run = debounce(function () {
      const params = new URLSearchParams(new FormData(form));
      const mine = ++asked;
      history.replaceState(null, "", "/search?" + params.toString());
      if (pending) pending.abort();
      pending = new AbortController();
      params.set("tab", tab);
      fetch(form.dataset.live + "?" + params.toString(), { credentials: "same-origin", signal: pending.signal })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          if (mine === asked) {  // an older answer never replaces a newer one
            target.innerHTML = html;
            document.body.dataset.searched = String(mine);
          }
        })
        .catch(function (err) { if (err.name !== "AbortError") throw err; });
    }, SEARCH_DEBOUNCE_MS);
    form.addEventListener("input", run);
    form.addEventListener("change", run);
  }

  function copyButtons() {
    document.addEventListener("click", function (event) {
      const button = event.target.closest("button.copy");
      if (!button) return;
      const cmd = button.dataset.cmd;
      const done = function () { button.textContent = "copied"; };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(cmd).then(done, function () { window.prompt("copy:", cmd); });
      } else {
        window.prompt("copy:", cmd);
      }
    });
  }

  function liveOwed(node) {
    const owed = document.getElementById("owed");
    const summary = document.getElementById("owed-summary");
    setInterval(function () {
      fetch(node.dataset.src, { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (doc) {
          owed.textContent = String(doc.owed);
          summary.textContent = doc.summary;
        });
    }, 2000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    const form = document.getElementById("search");
    if (form && form.dataset.live) liveSearch(form);
    const owed = document.getElementById("owed-live");
    if (owed) liveOwed(owed);
    copyButtons();
  });
})();
