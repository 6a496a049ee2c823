// sessionspec conformance page: family expanders, failing-case filters, print.
// Reads only data-* attributes the renderer wrote; never inserts HTML.
(function () {
  "use strict";
  var doc = document;

  function setFamily(button, open) {
    button.setAttribute("aria-expanded", open ? "true" : "false");
    button.querySelector(".sign").textContent = open ? "\u2212" : "+";
    var body = doc.getElementById(button.getAttribute("aria-controls"));
    var rows = body ? body.querySelectorAll("tr.req") : [];
    for (var i = 0; i < rows.length; i++) rows[i].hidden = !open;
  }
  var expanders = doc.querySelectorAll("button.expand");
  for (var i = 0; i < expanders.length; i++) {
    expanders[i].addEventListener("click", function (event) {
      var b = event.currentTarget;
      setFamily(b, b.getAttribute("aria-expanded") !== "true");
    });
  }
  var all = doc.getElementById("expand-all");
  if (all) {
    all.parentNode.hidden = false;
    all.addEventListener("click", function () {
      var open = all.getAttribute("aria-pressed") !== "true";
      all.setAttribute("aria-pressed", open ? "true" : "false");
      all.textContent = open ? "Show rule families only" : "Show every requirement";
      for (var j = 0; j < expanders.length; j++) setFamily(expanders[j], open);
    });
  }

  var form = doc.querySelector("form.filters");
  var items = doc.querySelectorAll("li.case");
  var text = doc.getElementById("f-text");
  var run = doc.getElementById("f-run");
  var outcome = doc.getElementById("f-outcome");
  var family = doc.getElementById("f-family");
  var count = doc.getElementById("f-count");
  function apply() {
    var words = text.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    for (var k = 0; k < items.length; k++) {
      var li = items[k];
      var hay = li.getAttribute("data-text");
      var ok = (!run.value || li.getAttribute("data-run") === run.value) &&
        (!outcome.value || li.getAttribute("data-outcome") === outcome.value) &&
        (!family.value || li.getAttribute("data-fams").indexOf(" " + family.value + " ") >= 0);
      for (var w = 0; ok && w < words.length; w++) ok = hay.indexOf(words[w]) >= 0;
      li.hidden = !ok;
      if (ok) shown++;
    }
    count.textContent = shown === items.length ? items.length + " cases" : shown + " of " + items.length + " cases shown";
  }
  if (form) {
    form.hidden = false;
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    text.addEventListener("input", apply);
    run.addEventListener("change", apply);
    outcome.addEventListener("change", apply);
    family.addEventListener("change", apply);
    doc.getElementById("f-clear").addEventListener("click", function () {
      text.value = ""; run.value = ""; outcome.value = ""; family.value = "";
      apply();
      text.focus();
    });
    // A matrix cell's counts link: show that run's failing cases of that family.
    var links = doc.querySelectorAll("a[data-family]");
    for (var m = 0; m < links.length; m++) {
      links[m].addEventListener("click", function (event) {
        var a = event.currentTarget;
        text.value = ""; outcome.value = "";
        run.value = a.getAttribute("data-run");
        family.value = a.getAttribute("data-family");
        apply();
      });
    }
  }

  // Printing shows every listed case opened (not the full-JSON blocks, which print hides).
  var opened = [];
  window.addEventListener("beforeprint", function () {
    var closed = doc.querySelectorAll("li.case > details:not([open]), #fuzz li > details:not([open])");
    for (var n = 0; n < closed.length; n++) { closed[n].open = true; opened.push(closed[n]); }
  });
  window.addEventListener("afterprint", function () {
    while (opened.length) opened.pop().open = false;
  });
})();
