// Installed in every frame before the page's own scripts (context.add_init_script), next to lockdown.js.
// Records which elements get pointer/click listeners through addEventListener (jQuery's .on() and
// frameworks use it), so perception can number a <span> that only a script makes clickable. The record
// is a WeakSet under a symbol key: it holds no strong references and changes nothing the page sees.
(() => {
  const KEY = Symbol.for('taskcrew.listeners');
  if (window[KEY]) return;
  const marked = new WeakSet();
  Object.defineProperty(window, KEY, { value: marked, enumerable: false, configurable: false, writable: false });
  const TYPES = new Set(['click', 'dblclick', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart', 'touchend', 'dragstart', 'drop']);
  const original = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function addEventListener(type, listener, options) {
    try {
      if (TYPES.has(type) && this instanceof Element) marked.add(this);
    } catch (e) { /* never break the page */ }
    return original.call(this, type, listener, options);
  };
})();
