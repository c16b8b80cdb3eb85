// atrace report --html: shows the page's own errors in the page. Runs before
// the main script, so even a syntax error there is caught. The element
// #atrace-errors gets the messages and <html> the attribute
// data-atrace-error="1": a headless browser's --dump-dom shows both (the
// integration test reads them).
"use strict";
(function () {
  function show(text) {
    document.documentElement.setAttribute("data-atrace-error", "1");
    var box = document.getElementById("atrace-errors");
    if (!box) {
      // Before the body exists: keep the message for when it does.
      window.addEventListener("DOMContentLoaded", function () { show(text); });
      return;
    }
    box.hidden = false;
    box.textContent += text + "\n";
  }
  window.atraceShowError = show;
  window.addEventListener("error", function (e) {
    show("error: " + e.message + " (" + (e.filename || "page") + ":" + e.lineno + ":" + e.colno + ")");
  });
  window.addEventListener("unhandledrejection", function (e) {
    show("unhandled rejection: " + e.reason);
  });
}());
