// Copy buttons: a button with data-copy="<element id>" copies that element's text (a readonly field's value: a key or
// secret shown once; any other element's text: an agent id). Without this script the buttons stay hidden and the
// value is selected and copied by hand.
'use strict';
document.querySelectorAll('button[data-copy]').forEach(function (button) {
  var field = document.getElementById(button.getAttribute('data-copy'));
  if (!field) return;
  var input = field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement ? field : null;
  var select = function () {
    if (input) return input.select();
    var range = document.createRange();
    range.selectNodeContents(field);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  };
  var label = button.textContent;
  button.hidden = false;
  if (input) input.addEventListener('focus', select);
  button.addEventListener('click', function () {
    select();
    var done = function () {
      button.textContent = 'Copied';
      setTimeout(function () {
        button.textContent = label;
      }, 2000);
    };
    var text = input ? input.value : field.textContent.trim();
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, function () {
        button.textContent = 'Press Ctrl+C to copy';
      });
    } else {
      button.textContent = 'Press Ctrl+C to copy';
    }
  });
});
