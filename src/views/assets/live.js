// Live refresh: a page showing calls still under way has a region (#live, src/views/layout.eta) that htmx asks the
// server for again every few seconds and swaps in; the server stops it by sending a region without the trigger once
// nothing is active. This script only holds a refresh back while the user is doing something inside the region,
// so that a refresh never throws it away: focus on a field, link or button in it; a box ticked, a field typed in or
// a choice changed; a <details> opened or closed by them; text selected in it. It looks before asking and again
// before swapping the answer in (the user may have started while it was on its way). The next tick tries again. It also
// skips refreshes while the tab is hidden, and reloads the whole page when the answer is not such a page (a signed
// out session is sent to the sign-in page). Without this script (or without script) the page is reloaded by hand.
'use strict';
(function () {
  /** Whether each <details> of the region was open as the server sent it. */
  var rendered = new WeakMap();

  /** @param {ParentNode} root */
  function remember(root) {
    root.querySelectorAll('details').forEach(function (details) {
      rendered.set(details, details.open);
    });
  }

  /** @param {Element} control */
  function changed(control) {
    if (control instanceof HTMLInputElement) {
      if (control.type === 'checkbox' || control.type === 'radio') return control.checked !== control.defaultChecked;
      return control.value !== control.defaultValue;
    }
    if (control instanceof HTMLTextAreaElement) return control.value !== control.defaultValue;
    if (control instanceof HTMLSelectElement) {
      var options = Array.prototype.slice.call(control.options);
      // A list with no option marked selected shows its first one.
      var marked = options.some(function (/** @type {HTMLOptionElement} */ option) {
        return option.defaultSelected;
      });
      if (!marked && !control.multiple) return control.selectedIndex > 0;
      return options.some(function (/** @type {HTMLOptionElement} */ option) {
        return option.selected !== option.defaultSelected;
      });
    }
    return false;
  }

  /** What the user is doing in `region`, in words; null when a refresh loses nothing. @param {Element} region */
  function busyWith(region) {
    var focused = document.activeElement;
    if (focused && focused !== region && region.contains(focused)) return 'focus';
    if (Array.prototype.some.call(region.querySelectorAll('input, select, textarea'), changed)) return 'form';
    var toggled = Array.prototype.some.call(
      region.querySelectorAll('details'),
      function (/** @type {HTMLDetailsElement} */ d) {
        return rendered.has(d) && rendered.get(d) !== d.open;
      },
    );
    if (toggled) return 'details';
    var selection = window.getSelection();
    if (selection && !selection.isCollapsed && selection.anchorNode && region.contains(selection.anchorNode))
      return 'selection';
    return null;
  }

  remember(document);
  document.addEventListener('htmx:load', function (event) {
    if (event.target instanceof Element || event.target instanceof Document) remember(event.target);
  });

  document.addEventListener('htmx:beforeRequest', function (event) {
    var region = event.target;
    if (!(region instanceof Element) || region.id !== 'live') return;
    var busy = document.hidden ? 'hidden' : busyWith(region);
    if (busy) {
      event.preventDefault();
      region.setAttribute('data-live-paused', busy);
    } else {
      region.removeAttribute('data-live-paused');
    }
  });

  /**
   * Not a page with a region (e.g. a signed-out session redirected to sign-in): swapping would empty the page, so
   * it is loaded whole instead. @param {unknown} detail htmx's htmx:beforeSwap detail
   */
  function loadWholeUnlessLive(detail) {
    if (typeof detail !== 'object' || detail === null) return;
    if (!('shouldSwap' in detail) || !('serverResponse' in detail) || !detail.shouldSwap) return;
    if (String(detail.serverResponse).indexOf('id="live"') !== -1) return;
    detail.shouldSwap = false;
    window.location.reload();
  }

  /** Leaves the region as it is: the answer is not swapped in. @param {unknown} detail htmx's htmx:beforeSwap detail */
  function keepOut(detail) {
    if (typeof detail === 'object' && detail !== null && 'shouldSwap' in detail) detail.shouldSwap = false;
  }

  document.addEventListener('htmx:beforeSwap', function (event) {
    var region = event.target;
    if (!(region instanceof Element) || region.id !== 'live' || !(event instanceof CustomEvent)) return;
    // The user started something while the answer was on its way (ticked a box, say): the answer is dropped, not
    // swapped over it; the next tick asks again.
    var busy = busyWith(region);
    if (busy) {
      keepOut(event.detail);
      region.setAttribute('data-live-paused', busy);
      return;
    }
    loadWholeUnlessLive(event.detail);
  });
})();
