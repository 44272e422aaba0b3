// stillweb viewer: the only script. Arrow keys step through a replay (links #prev / #next).
document.addEventListener("keydown", function (event) {
  var target = event.target;
  if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT")) return;
  var link = event.key === "ArrowLeft" ? document.getElementById("prev") : event.key === "ArrowRight" ? document.getElementById("next") : null;
  if (link) window.location.href = link.href;
});
// The compare page opens at the first difference (its "jump to the first difference" link works without this).
window.addEventListener("load", function () {
  var first = document.getElementById("first-difference");
  if (first && !window.location.hash) first.scrollIntoView({block: "start"});
});
// The runs table's filter form: a changed drop-down applies at once; empty fields and defaults stay out of the URL.
// (Convenience only: without JavaScript the form's button does the same.)
document.querySelectorAll("form[data-submit-on-change]").forEach(function (form) {
  form.addEventListener("change", function (event) {
    if (event.target.tagName === "SELECT") form.requestSubmit();
  });
  form.addEventListener("submit", function () {
    form.querySelectorAll("input[name], select[name]").forEach(function (field) {
      if (field.value === "" || field.value === field.dataset.default) field.disabled = true;
    });
  });
});
