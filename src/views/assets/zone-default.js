// A new agent's time zone, and a user's own while they have none (the Account page): the browser's own, chosen in
// the select marked data-browser-zone when the list offers it (by its canonical name, or by a deprecated name the
// browser may report, such as Asia/Calcutta: an option's data-aliases). Without this script the select stays on UTC.
'use strict';
(function () {
  var zone = window.Intl ? Intl.DateTimeFormat().resolvedOptions().timeZone : '';
  var selects = document.getElementsByTagName('select');
  for (var s = 0; zone && s < selects.length; s++) {
    var select = selects[s];
    if (!select.hasAttribute('data-browser-zone')) continue;
    for (var i = 0; i < select.options.length; i++) {
      var option = select.options[i];
      var aliases = (option.getAttribute('data-aliases') || '').split(' ');
      if (option.value === zone || aliases.indexOf(zone) !== -1) {
        select.value = option.value;
        break;
      }
    }
  }
})();
