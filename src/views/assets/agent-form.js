// The agent form's settings that cannot apply, disabled while they cannot: the outcomes to retry on and the waits
// with one attempt, the voicemail message unless "Leave a message" is chosen, the outside-window policy and whose
// hours the window is read in without a calling window. A disabled field is not sent, and the save returns it to its
// neutral value (no outcome, no message, queue, the agent's zone). Without this script every field stays usable and
// the server refuses a contradiction next to its field.
'use strict';
(function () {
  var form = document.querySelector('form.agent-form');
  if (!form) return;
  // The page has one agent form: its parts are found in the document.
  function setApplies(selector, applies) {
    document.querySelectorAll('form.agent-form ' + selector).forEach(function (part) {
      if (part instanceof HTMLFieldSetElement) part.disabled = !applies;
      else
        part.querySelectorAll('input, select, textarea').forEach(function (field) {
          if ('disabled' in field) field.disabled = !applies;
        });
    });
  }

  // A row with a ticked day or a time is a window (an empty row is skipped on save).
  function hasWindow() {
    var rows = document.querySelectorAll('form.agent-form fieldset.window-row');
    for (var i = 0; i < rows.length; i++) {
      var fields = rows[i].querySelectorAll('input');
      for (var j = 0; j < fields.length; j++) {
        var field = fields[j];
        if (field.type === 'checkbox' ? field.checked : field.type === 'time' && field.value !== '') return true;
      }
    }
    return false;
  }

  function update() {
    var attempts = document.querySelector('form.agent-form select[name="max_attempts"]');
    setApplies('[data-needs-attempts]', !attempts || attempts.value !== '1');
    var leave = document.querySelector('form.agent-form input[name="voicemail"][value="leave_message"]');
    setApplies('[data-needs-message]', !leave || leave.checked);
    setApplies('[data-needs-window]', hasWindow());
  }

  form.addEventListener('input', update);
  form.addEventListener('change', update);
  update();
})();
