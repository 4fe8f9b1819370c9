// Copy buttons for a value shown once: a button with data-copy="<input id>" copies that field. Without this script
// the buttons stay hidden and the readonly field is selected and copied by hand.
'use strict';
document.querySelectorAll('button[data-copy]').forEach(function (button) {
  var field = document.getElementById(button.getAttribute('data-copy'));
  if (!field) return;
  button.hidden = false;
  field.addEventListener('focus', function () { field.select(); });
  button.addEventListener('click', function () {
    field.select();
    var done = function () { button.textContent = 'Copied'; };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(field.value).then(done, function () { button.textContent = 'Press Ctrl+C to copy'; });
    } else {
      button.textContent = 'Press Ctrl+C to copy';
    }
  });
});
