// taskcrew perception: runs inside each frame of the page (Playwright evaluate).
// It does the deterministic heavy lifting for the model: numbers the interactive elements in reading
// order, gives each a selector verified to match exactly one element (shadow roots chained with `>>`,
// the way Playwright resolves them), works out whether a click would land (interactable / occluded /
// off-screen / disabled), reads form fields, predicts what a submit would send, names obstacles
// (CAPTCHA, blocking modal, login form) and renders the visible text with [n] where element n sits.
// The file evaluates to an object of functions; nothing is left behind in the page.
(() => {
  const INTERACTIVE_ROLES = new Set([
    'button', 'link', 'checkbox', 'radio', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
    'option', 'switch', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem',
  ]);
  const SKIP_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE', 'SVG:STYLE', 'style', 'title', 'desc']);
  const NATIVE_FIELD_TAGS = new Set(['INPUT', 'SELECT', 'TEXTAREA']);
  const LEAF_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'switch', 'textbox', 'searchbox', 'combobox', 'slider', 'spinbutton']);
  const BLOCK_DISPLAYS = /^(block|flex|grid|list-item|table|table-row|table-caption|flow-root|table-row-group|table-header-group|table-footer-group)$/;
  const CLOSE_RE = /^(×|✕|✖|x|close|dismiss|accept|accept all|ok|okay|got it|no thanks|i agree|agree|continue|allow all|reject all|decline|skip|not now|cancel)$/i;
  const CLOSE_LABEL_RE = /\b(close|dismiss)\b/i;
  const CAPTCHA_SEL = 'iframe[src*="recaptcha"], iframe[src*="hcaptcha"], iframe[src*="turnstile"], iframe[src*="captcha" i], iframe[title*="captcha" i], .g-recaptcha, .h-captcha, .cf-turnstile, [id*="captcha" i], [class*="captcha" i], img[alt*="captcha" i], input[name*="captcha" i]';
  const CAPTCHA_TEXT_RE = /(i'?m not a robot|verify (that )?you are (a )?human|are you a robot|complete the security check)/i;
  const MESSAGE_SEL = '[role="alert"], [role="status"], [aria-live="assertive"], [aria-live="polite"], .error, .errors, .errorlist, .alert, .invalid-feedback, .flash, .notice, .message, .messages, .field-error, .form-error, [class*="error-message"]';

  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
  // Elements given click/pointer listeners through addEventListener (recorded by listeners.js).
  const LISTENED = window[Symbol.for('taskcrew.listeners')] || null;
  const listened = (el) => !!(LISTENED && LISTENED.has(el));
  // Selectors whose :hover rule sets `cursor: pointer` (the page says "clickable" only on hover).
  let hoverPointer = null;
  const collectHoverPointer = () => {
    const sels = [];
    const visitRules = (rules) => {
      for (const r of rules) {
        if (sels.length > 300) return;
        if (!r.selectorText) { if (r.cssRules) { try { visitRules(r.cssRules); } catch (e) { /* skip */ } } continue; }
        if (!r.style || r.style.cursor !== 'pointer' || !r.selectorText.includes(':hover')) continue;
        for (const part of r.selectorText.split(',')) {
          if (!part.includes(':hover')) continue;
          const sel = part.replace(/:hover/g, '').trim();
          if (!sel) continue;
          try { document.querySelector(sel); sels.push(sel); } catch (e) { /* not a plain selector */ }
        }
      }
    };
    for (const sheet of Array.from(document.styleSheets)) { try { visitRules(sheet.cssRules); } catch (e) { /* cross-origin sheet */ } }
    hoverPointer = sels.length ? sels.join(', ') : null;
  };
  const hoverClickable = (el) => { if (!hoverPointer) return false; try { return el.matches(hoverPointer); } catch (e) { return false; } };
  // Form properties read through the prototype: a field named "method" or "action" shadows form.method.
  const formProp = (form, prop) => Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, prop).get.call(form);
  // Words in class names and image file names that say what an icon does ("icon-star" -> star).
  const GENERIC_CLASS = /^(icons?|fa[srbld]?|fa-(fw|lg|xs|sm|[0-9]x|solid|regular|light|thin|duotone|brands|sharp|spin|pulse|border|inverse|stack|stack-[12]x|flip-.*|rotate-.*)|glyphicon|bi|mdi|material-icons.*|material-symbols.*|ui-icon|ui-corner-.*|ui-state-.*|ui-widget.*|btn|button|ui|active|selected|clickable|pointer|hidden|small|large|sm|lg|xs|left|right|pull-right|pull-left|float-right|float-left|ng-.*|js-.*|is-.*|has-.*|col-.*|d-.*|text-.*|m[trblxy]?-\d|p[trblxy]?-\d)$/i;
  // Icon sets: a class that names the picture (ui-icon-zoomin, fa-trash-can, glyphicon-floppy-disk).
  const ICON_CLASS = /^(?:ui-icon|fa|fas|far|fal|fab|glyphicon|bi|mdi|ti|la|las|lar|ion|ion-md|ion-ios|icon|ico|octicon|feather|lucide|ri|bx|bxs|bxl|gg|si|fi|oi|typcn|entypo|zmdi|iconfont|el-icon)-([a-z][a-z0-9-]{1,40})$/i;
  const GLUED = { zoomin: 'zoom in', zoomout: 'zoom out', closethick: 'close', closethin: 'close', newwin: 'new window', extlink: 'external link', arrowrefresh: 'refresh', circlesmall: 'circle', squaresmall: 'square', arrowthick: 'arrow', mailclosed: 'mail', mailopen: 'open mail', seek: 'seek', trashcan: 'trash can' };
  const iconWords = (name) => name.toLowerCase().split(/[-_\s]+/).filter((w) => w && !/^(\d+|outline|outlined|fill|filled|line|alt|o|sharp|round|rounded|two|tone|solid|regular|[nsew]|[0-9]x)$/.test(w)).map((w) => GLUED[w] || w).join(' ');
  const MATERIAL = /^material-(icons|symbols)/;
  const iconClassName = (n) => {
    for (const c of Array.from(n.classList || [])) {
      if (GENERIC_CLASS.test(c)) continue;
      const m = ICON_CLASS.exec(c);
      if (m) { const w = iconWords(m[1]); if (w) return w; }
    }
    if (Array.from(n.classList || []).some((c) => MATERIAL.test(c))) { const w = iconWords(clean(n.textContent)); if (w) return w; }
    return '';
  };
  const svgTitle = (n) => { const t = n.tagName && n.tagName.toLowerCase() === 'svg' ? n.querySelector('title') : null; return t ? clean(t.textContent) : ''; };
  const hintOf = (el) => {
    const nodes = [el, ...Array.from(el.querySelectorAll('i, span, svg, img, use')).slice(0, 4)];
    for (const n of nodes) {
      const t = n.getAttribute && (n.getAttribute('title') || n.getAttribute('aria-label') || n.getAttribute('alt') || svgTitle(n));
      if (t && clean(t)) return clean(t);
    }
    for (const n of nodes) { const w = iconClassName(n); if (w) return w; }
    for (const n of nodes) {
      if (n.tagName === 'IMG' && n.getAttribute('src')) {
        const m = /([A-Za-z][A-Za-z_-]{1,30})\.(png|svg|gif|jpe?g|webp)(\?|$)/.exec(n.getAttribute('src'));
        if (m) return m[1].replace(/[-_]+/g, ' ');
      }
      for (const c of Array.from(n.classList || [])) {
        if (GENERIC_CLASS.test(c)) continue;
        const m = /^(?:(?:icon|fa|fas|far|glyphicon|bi|mdi|ti|la|ion|ico|btn)[-_])?([A-Za-z][A-Za-z-]{1,24})$/.exec(c);
        if (m && !GENERIC_CLASS.test(m[1])) return m[1].replace(/[-_]+/g, ' ').toLowerCase();
      }
    }
    if (el.id && /^[A-Za-z][A-Za-z_-]{1,24}$/.test(el.id)) return el.id.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[-_]+/g, ' ').toLowerCase();
    return '';
  };
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
  const esc = (v) => CSS.escape(v);

  // ------------------------------------------------------------ composed-tree helpers
  const parentOf = (n) => n.parentElement || (n.parentNode instanceof ShadowRoot ? n.parentNode.host : null);
  const deepContains = (anc, n) => {
    for (let x = n; x; x = parentOf(x)) if (x === anc) return true;
    return false;
  };
  const deepElementFromPoint = (x, y) => {
    let e = document.elementFromPoint(x, y);
    while (e && e.shadowRoot) {
      const inner = e.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === e) break;
      e = inner;
    }
    return e;
  };

  let styleCache = new Map();
  const styleOf = (el) => {
    let s = styleCache.get(el);
    if (!s) { s = getComputedStyle(el); styleCache.set(el, s); }
    return s;
  };

  // ------------------------------------------------------------ names, roles, fields
  const textOf = (el) => clean(el.innerText !== undefined ? el.innerText : el.textContent);
  // ------------------------------------------------------------ what a person sees
  // Text counts only when a person can see it: not sized 0 or too small to read, transparent,
  // clipped or masked away, positioned or indented off the page, inside content that is not drawn
  // (a closed <details>, content-visibility: hidden), or painted in the colour of its background
  // (hidden text is a place for injected words).
  let shownCache = new Map();
  // A computed colour as [r, g, b (0-255), alpha (0-1)]; null when it names none (a url(), none).
  // Colours Chromium keeps in their own space (oklch(), lab(), color(display-p3 …)) are converted to
  // the sRGB Chromium paints by drawing one pixel in them.
  const COLOUR_RE = /(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\([^)]*\)/g;
  const converted = new Map();
  let pen = null;
  const rgb = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c || '');
    if (m) {
      const p = m[1].split(/[\s,/]+/).filter(Boolean).map(parseFloat);
      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
    }
    const f = (c || '').match(COLOUR_RE);
    if (!f) return null;
    let v = converted.get(f[0]);
    if (v === undefined) {
      v = null;
      try {
        pen = pen || new OffscreenCanvas(1, 1).getContext('2d', { willReadFrequently: true });
        pen.fillStyle = 'rgba(1, 2, 3, 0.5)';
        const none = pen.fillStyle;
        pen.fillStyle = f[0];
        if (pen.fillStyle !== none) {
          pen.clearRect(0, 0, 1, 1);
          pen.fillRect(0, 0, 1, 1);
          const d = pen.getImageData(0, 0, 1, 1).data;
          v = [d[0], d[1], d[2], d[3] / 255];
        }
      } catch (e) { v = null; }
      converted.set(f[0], v);
    }
    return v;
  };
  // The colours a computed value names (a gradient's stops); null when it holds a picture.
  const colours = (v) => (/url\(/.test(v) ? null : Array.from(v.matchAll(COLOUR_RE), (m) => rgb(m[0])));
  const apart = (a, b) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]);
  const clipsToText = (s) => s.backgroundClip === 'text' || s.webkitBackgroundClip === 'text';
  // A number from a computed `opacity(…)` / `scale` value ("50%" is 0.5).
  const amount = (v) => (v.endsWith('%') ? parseFloat(v) / 100 : parseFloat(v));
  // The items of a computed list (box-shadow), parted at the commas outside parentheses.
  const listItems = (v) => {
    const out = [];
    let depth = 0, start = 0;
    for (let i = 0; i < v.length; i++) {
      if (v[i] === '(') depth++;
      else if (v[i] === ')') depth--;
      else if (v[i] === ',' && !depth) { out.push(v.slice(start, i).trim()); start = i + 1; }
    }
    out.push(v.slice(start).trim());
    return out;
  };
  // The functions of a computed filter list, in order: [name, arguments] (url("…") too).
  const filterFunctions = (v) => {
    const out = [];
    if (!v || v === 'none') return out;
    const re = /([a-z-]+)\(/g;
    let m;
    while ((m = re.exec(v))) {
      let depth = 1, i = re.lastIndex, quote = '';
      for (; i < v.length && depth; i++) {
        const ch = v[i];
        if (quote) { if (ch === '\\') i++; else if (ch === quote) quote = ''; }
        else if (ch === '"' || ch === "'") quote = ch;
        else if (ch === '(') depth++;
        else if (ch === ')') depth--;
      }
      out.push([m[1], v.slice(re.lastIndex, i - 1).trim()]);
      re.lastIndex = i;
    }
    return out;
  };
  const lengths = (v) => Array.from(v.replace(COLOUR_RE, ' ').matchAll(/-?[\d.]+(?:e-?\d+)?px/g), (m) => parseFloat(m[0]));
  // ---- how Chromium paints a colour: filters, blend modes and compositing (Filter Effects 1,
  // Compositing and Blending 1). Colours are [r, g, b (0-255), alpha]; null is not known (a picture).
  const byte = (v) => Math.max(0, Math.min(255, v));
  const MATRICES = {
    grayscale: (x) => { const k = 1 - Math.min(x, 1); return [[0.2126 + 0.7874 * k, 0.7152 - 0.7152 * k, 0.0722 - 0.0722 * k], [0.2126 - 0.2126 * k, 0.7152 + 0.2848 * k, 0.0722 - 0.0722 * k], [0.2126 - 0.2126 * k, 0.7152 - 0.7152 * k, 0.0722 + 0.9278 * k]]; },
    sepia: (x) => { const k = 1 - Math.min(x, 1); return [[0.393 + 0.607 * k, 0.769 - 0.769 * k, 0.189 - 0.189 * k], [0.349 - 0.349 * k, 0.686 + 0.314 * k, 0.168 - 0.168 * k], [0.272 - 0.272 * k, 0.534 - 0.534 * k, 0.131 + 0.869 * k]]; },
    saturate: (x) => [[0.213 + 0.787 * x, 0.715 - 0.715 * x, 0.072 - 0.072 * x], [0.213 - 0.213 * x, 0.715 + 0.285 * x, 0.072 - 0.072 * x], [0.213 - 0.213 * x, 0.715 - 0.715 * x, 0.072 + 0.928 * x]],
    'hue-rotate': (x) => {
      const c = Math.cos(x), s = Math.sin(x);
      return [[0.213 + 0.787 * c - 0.213 * s, 0.715 - 0.715 * c - 0.715 * s, 0.072 - 0.072 * c + 0.928 * s],
        [0.213 - 0.213 * c + 0.143 * s, 0.715 + 0.285 * c + 0.140 * s, 0.072 - 0.072 * c - 0.283 * s],
        [0.213 - 0.213 * c - 0.787 * s, 0.715 - 0.715 * c + 0.715 * s, 0.072 + 0.928 * c + 0.072 * s]];
    },
  };
  const TRANSFERS = {
    invert: (v, x) => v + (255 - 2 * v) * Math.min(x, 1), brightness: (v, x) => v * x,
    contrast: (v, x) => (v - 127.5) * x + 127.5,
  };
  const ANGLE = { deg: Math.PI / 180, grad: Math.PI / 200, rad: 1, turn: 2 * Math.PI };
  // One colour function of a filter list applied to a colour (other functions leave it as it is).
  const filterColour = (c, name, arg) => {
    if (!c) return c;
    if (name === 'hue-rotate') {
      const m = /(-?[\d.]+(?:e-?\d+)?)([a-z]*)/.exec(arg);
      if (!m) return c;
      return withMatrix(c, MATRICES['hue-rotate'](parseFloat(m[1]) * (ANGLE[m[2]] || ANGLE.deg)));
    }
    const x = arg ? amount(arg) : 1;
    if (Number.isNaN(x)) return c;
    if (name === 'opacity') return [c[0], c[1], c[2], c[3] * Math.min(x, 1)];
    if (TRANSFERS[name]) return [byte(TRANSFERS[name](c[0], x)), byte(TRANSFERS[name](c[1], x)), byte(TRANSFERS[name](c[2], x)), c[3]];
    return MATRICES[name] ? withMatrix(c, MATRICES[name](x)) : c;
  };
  const withMatrix = (c, mx) => [...mx.map((row) => byte(row[0] * c[0] + row[1] * c[1] + row[2] * c[2])), c[3]];
  // Blend modes on channels 0-1 (b: what is behind, s: what is painted); a separable mode works on
  // each channel, the others on the three at once.
  const hardLight = (b, s) => (s <= 0.5 ? 2 * s * b : b + (2 * s - 1) - b * (2 * s - 1));
  const SEPARABLE = {
    multiply: (b, s) => b * s, screen: (b, s) => b + s - b * s, overlay: (b, s) => hardLight(s, b),
    darken: Math.min, lighten: Math.max,
    'color-dodge': (b, s) => (b <= 0 ? 0 : s >= 1 ? 1 : Math.min(1, b / (1 - s))),
    'color-burn': (b, s) => (b >= 1 ? 1 : s <= 0 ? 0 : 1 - Math.min(1, (1 - b) / s)),
    'hard-light': hardLight,
    'soft-light': (b, s) => (s <= 0.5 ? b - (1 - 2 * s) * b * (1 - b)
      : b + (2 * s - 1) * ((b <= 0.25 ? ((16 * b - 12) * b + 4) * b : Math.sqrt(b)) - b)),
    difference: (b, s) => Math.abs(b - s), exclusion: (b, s) => b + s - 2 * b * s,
  };
  const lum = (c) => 0.3 * c[0] + 0.59 * c[1] + 0.11 * c[2];
  const clipColour = (c) => {
    const l = lum(c), n = Math.min(...c), x = Math.max(...c);
    let o = c;
    if (n < 0) o = o.map((v) => l + ((v - l) * l) / (l - n));
    if (x > 1) o = o.map((v) => l + ((v - l) * (1 - l)) / (x - l));
    return o;
  };
  const setLum = (c, l) => { const d = l - lum(c); return clipColour(c.map((v) => v + d)); };
  const sat = (c) => Math.max(...c) - Math.min(...c);
  const setSat = (c, s) => { const hi = Math.max(...c), lo = Math.min(...c); return c.map((v) => (hi > lo ? ((v - lo) * s) / (hi - lo) : 0)); };
  const NONSEPARABLE = {
    hue: (b, s) => setLum(setSat(s, sat(b)), lum(b)), saturation: (b, s) => setLum(setSat(b, sat(s)), lum(b)),
    color: (b, s) => setLum(s, lum(b)), luminosity: (b, s) => setLum(b, lum(s)),
  };
  // ``s`` painted onto ``b`` with blend mode ``mode``, then composited source-over.
  const paintOnto = (s, b, mode) => {
    if (s && s[3] <= 0) return b;
    const normal = !mode || mode === 'normal';
    if (!s || !b) return s && s[3] >= 0.999 && normal ? s : null;
    if (normal && s[3] >= 0.999) return s;
    if (mode === 'plus-lighter') {
      const a = Math.min(1, s[3] + b[3]);
      return a <= 0 ? CLEAR : [0, 1, 2].map((i) => Math.min(255, s[i] * s[3] + b[i] * b[3]) / a).concat(a);
    }
    let src = s;
    if (!normal && b[3] > 0 && (SEPARABLE[mode] || NONSEPARABLE[mode])) {
      const sc = [s[0] / 255, s[1] / 255, s[2] / 255], bc = [b[0] / 255, b[1] / 255, b[2] / 255];
      const mixed = NONSEPARABLE[mode] ? NONSEPARABLE[mode](bc, sc) : sc.map((v, i) => SEPARABLE[mode](bc[i], v));
      src = [0, 1, 2].map((i) => 255 * ((1 - b[3]) * sc[i] + b[3] * mixed[i])).concat(s[3]);
    }
    const sa = src[3], ba = b[3] * (1 - sa), a = sa + ba;
    return a <= 0 ? CLEAR : [(src[0] * sa + b[0] * ba) / a, (src[1] * sa + b[1] * ba) / a, (src[2] * sa + b[2] * ba) / a, a];
  };
  const CLEAR = [0, 0, 0, 0], WHITE = [255, 255, 255, 1];
  // What Chromium needs of an element to paint it, once an observation: whether it makes a box,
  // a stacking context (an isolated group: what blends inside blends with the group's own paint),
  // a backdrop root (where a backdrop-filter stops looking), and its background where that does
  // not depend on the text (inset box-shadows do: kept to measure against it).
  let paintInfo = new Map();
  const paintOf = (a) => {
    let info = paintInfo.get(a);
    if (info) return info;
    const as = styleOf(a);
    const box = as.display !== 'contents';
    const svgInner = a instanceof SVGElement && parentOf(a) instanceof SVGElement;
    const masked = (as.maskImage && as.maskImage !== 'none') || (as.webkitMaskImage && as.webkitMaskImage !== 'none');
    const effects = +as.opacity < 1 || as.filter !== 'none' || as.mixBlendMode !== 'normal' || as.clipPath !== 'none' || masked
      || (as.backdropFilter && as.backdropFilter !== 'none');
    let stacks = effects || as.isolation === 'isolate';
    if (!svgInner && !stacks) {
      const pd = parentOf(a) && parentOf(a).nodeType === 1 ? styleOf(parentOf(a)).display : '';
      stacks = as.transform !== 'none' || (as.translate && as.translate !== 'none') || (as.rotate && as.rotate !== 'none')
        || (as.scale && as.scale !== 'none') || as.perspective !== 'none' || as.position === 'fixed' || as.position === 'sticky'
        || (as.zIndex !== 'auto' && (as.position !== 'static' || /flex|grid/.test(pd)))
        || /paint|layout|strict|content/.test(as.contain || '')
        || /opacity|filter|transform|translate|rotate|scale|perspective|isolation|mix-blend|clip-path|mask|z-index/.test(as.willChange || '');
    }
    // The box's own background where the text is: its colour with its images laid on it (blended as
    // background-blend-mode says); a gradient of one colour is that colour; a picture, or an image
    // laid on part of the box only, is not known.
    let ground = null, insets = [];
    if (box && !svgInner && !clipsToText(as)) {
      ground = rgb(as.backgroundColor);
      if (ground && ground[3] <= 0) ground = null;
      if (as.backgroundImage && as.backgroundImage !== 'none') {
        const cs = colours(as.backgroundImage);
        const whole = !/no-repeat/.test(as.backgroundRepeat) || (/^(auto|auto auto|cover)$/.test(as.backgroundSize) && /^0(%|px) 0(%|px)$/.test(as.backgroundPosition));
        if (cs && cs.length && cs.every((c) => c && c[3] <= 0.02)) { /* transparent throughout */ }
        else if (cs && cs.length && whole && cs.every((c) => c && apart(c, cs[0]) < 16 && Math.abs(c[3] - cs[0][3]) < 0.05)) {
          ground = paintOnto(cs[0], ground || CLEAR, (as.backgroundBlendMode || 'normal').split(',')[0].trim());
        } else {
          ground = null;
          insets = null;
        }
      }
      if (insets && as.boxShadow && as.boxShadow.includes('inset')) {
        for (const sh of listItems(as.boxShadow).reverse()) {
          if (!/\binset\b/.test(sh)) continue;
          const c = rgb(sh), n = lengths(sh);
          if (c && c[3] > 0 && n.length >= 2) insets.push([c, n[0], n[1], n[2] || 0, n[3] || 0]);
        }
      }
    }
    info = {
      box, stacks: box && stacks, root: effects, ground, insets, unknown: insets === null, clipText: clipsToText(as),
      filters: as.filter !== 'none' ? filterFunctions(as.filter) : null,
      backdrop: as.backdropFilter && as.backdropFilter !== 'none' ? filterFunctions(as.backdropFilter) : null,
      opacity: +as.opacity, blend: as.mixBlendMode,
    };
    paintInfo.set(a, info);
    return info;
  };
  // How much of an inset box-shadow [colour, x, y, blur, spread] of box ``a`` lies over the text box
  // ``t`` where least of it does (0-1): the shadow fills the padding box but a hole (the box shrunk
  // by the spread, moved by the offset), its edge blurred as a Gaussian of half the blur radius.
  const gauss = (x) => { // the normal distribution's cumulative function (Abramowitz & Stegun 7.1.26)
    const z = Math.abs(x) / Math.SQRT2, k = 1 / (1 + 0.3275911 * z);
    const erf = 1 - (((((1.061405429 * k - 1.453152027) * k) + 1.421413741) * k - 0.284496736) * k + 0.254829592) * k * Math.exp(-z * z);
    return 0.5 * (1 + (x >= 0 ? erf : -erf));
  };
  const insetOver = (a, t, [, x, y, blur, spread]) => {
    const r = a.getBoundingClientRect(), as = styleOf(a);
    const left = r.left + parseFloat(as.borderLeftWidth) + spread + x, right = r.right - parseFloat(as.borderRightWidth) - spread + x;
    const top = r.top + parseFloat(as.borderTopWidth) + spread + y, bottom = r.bottom - parseFloat(as.borderBottomWidth) - spread + y;
    if (left >= right || top >= bottom) return 1;
    const sd = blur / 2;
    const hole = (v, lo, hi) => (sd > 0 ? gauss((v - lo) / sd) - gauss((v - hi) / sd) : v > lo && v < hi ? 1 : 0);
    // the point of the text box nearest the hole's middle is the least covered
    const px = Math.min(Math.max((left + right) / 2, t.left), t.right), py = Math.min(Math.max((top + bottom) / 2, t.top), t.bottom);
    return 1 - hole(px, left, right) * hole(py, top, bottom);
  };
  // The ways the letters of ``p`` are painted, each a list of [element, colour] laid on in that
  // element's paint (over its own background): the fill (over a background an ancestor clips to the
  // text), a stroke, text shadows close to the letters and sharp enough to read; an SVG text's fill
  // and stroke. null: drawn with a picture (url(…)): cannot tell.
  const inksOf = (p, s) => {
    if (p instanceof SVGElement) {
      const out = [];
      for (const [paint, op, width] of [[s.fill, s.fillOpacity, 1], [s.stroke, s.strokeOpacity, parseFloat(s.strokeWidth)]]) {
        if (paint === 'none' || !(width > 0)) continue;
        const c = rgb(paint);
        if (!c) return null;
        out.push([[p, [c[0], c[1], c[2], c[3] * +op]]]);
      }
      return out;
    }
    const under = [];
    for (let a = p; a && a.nodeType === 1; a = parentOf(a)) {
      const as = styleOf(a);
      if (!clipsToText(as)) continue;
      const cs = colours(as.backgroundImage);
      if (!cs) return null;
      for (const c of [rgb(as.backgroundColor), ...cs]) if (c && c[3] > 0) under.push([a, c]);
    }
    const fill = rgb(s.webkitTextFillColor || s.color);
    const out = fill ? (under.length ? under.map((u) => [u, [p, fill]]) : [[[p, fill]]]) : under.map((u) => [u]);
    if (parseFloat(s.webkitTextStrokeWidth) > 0) { const c = rgb(s.webkitTextStrokeColor); if (c) out.push([[p, c]]); }
    const fs = parseFloat(s.fontSize);
    if (s.textShadow && s.textShadow !== 'none') {
      for (const sh of listItems(s.textShadow)) {
        const c = rgb(sh), [x, y, blur] = lengths(sh);
        if (c && Math.abs(x) <= 2 * fs && Math.abs(y) <= 2 * fs && 5 * (blur || 0) <= fs) out.push([[p, c]]);
      }
    }
    return out.slice(0, 12);
  };
  // What a backdrop-filter shows behind a box: the paint of the open groups (``paints``, outermost
  // first) up to the nearest backdrop root (at the root, on the page's white canvas), filtered.
  const backdropOf = (paints, infos, filters) => {
    let k = paints.length - 1;
    while (k > 0 && !infos[k].root) k--;
    let b = k <= 0 ? WHITE : CLEAR;
    for (let j = Math.max(k, 0); j < paints.length; j++) b = paintOnto(paints[j], b, 'normal');
    for (const [name, arg] of filters) b = filterColour(b, name, arg);
    return b;
  };
  // The open groups once ``el`` has painted its background, the letters not yet painted: a list of
  // {info, paint}, outermost first. Kept per element for one observation (text beside text shares
  // its ancestors' work); null where it depends on the text: an inset box-shadow on the way (how
  // much it covers) or a background an ancestor clips to the text (it paints the letters).
  let bareCache = new Map();
  const bareOf = (el) => {
    const todo = [];
    let a = el, st;
    for (; a && a.nodeType === 1; a = parentOf(a)) {
      st = bareCache.get(a);
      if (st !== undefined) break;
      todo.push(a);
    }
    if (!a || a.nodeType !== 1) st = [];
    for (let i = todo.length - 1; i >= 0; i--) {
      const info = paintOf(todo[i]);
      if (st && (info.clipText || (info.insets && info.insets.length))) st = null;
      if (st) {
        if (!st.length || info.stacks) {
          st = [...st, { info, paint: info.backdrop ? backdropOf(st.map((x) => x.paint), st.map((x) => x.info), info.backdrop) : CLEAR }];
        }
        const top = st[st.length - 1];
        const paint = info.unknown ? null : info.ground ? paintOnto(info.ground, top.paint, 'normal') : top.paint;
        if (paint !== top.paint) st = [...st.slice(0, -1), { info: top.info, paint }];
      }
      bareCache.set(todo[i], st);
    }
    return st;
  };
  // Whether some way the letters are painted stands out from what is painted beside them, worked
  // out as Chromium composites the page under the text: from the root down, each box's background
  // (translucent ones laid on what is behind; an inset box-shadow over the text too), each stacking
  // context an isolated group with its backdrop-filter, its whole filter list in order (a drop-shadow
  // adds the letters' shadow; a blur wider than a fifth of the font size leaves nothing readable),
  // its opacity, and its blend mode against what its parent group painted behind it; the root group
  // on the white canvas. A way is compared with the bare background beside the letters.
  const inkShown = (p, s) => {
    const ways = inksOf(p, s);
    if (!ways) return true; // drawn with a picture: cannot tell
    if (!ways.length) return false;
    const fs = parseFloat(s.fontSize);
    const live = [false, ...ways.map(() => false)]; // [0]: the bare background; [k]: way k painted (may differ)
    // how opaque each way's letters are, times the opacities on the way (judged alone over a picture)
    const alpha = [0, ...ways.map((w) => Math.max(...w.map(([, c]) => c[3])))];
    let fade = 1;
    const groups = [];
    let textBox = null;
    // A way painted the same as the bare background in every open group stays so: it is dropped.
    const settle = () => {
      for (let k = 1; k < live.length; k++) {
        if (!live[k]) continue;
        let same = true;
        for (const g of groups) {
          const v = g.vals[k], b = g.vals[0];
          if (v !== b && !(v && b && apart(v, b) < 0.5 && Math.abs(v[3] - b[3]) < 0.002)) { same = false; break; }
        }
        if (same) live[k] = false;
      }
    };
    const bare = bareOf(p);
    if (bare) {
      // (the common case: the groups' paint up to the text is shared with its siblings)
      for (const b of bare) groups.push({ info: b.info, vals: live.map(() => b.paint) });
      const g = groups[groups.length - 1];
      for (let k = 1; k <= ways.length; k++) {
        for (const [, c] of ways[k - 1]) if (c[3] > 0) { g.vals[k] = paintOnto(c, g.vals[k], 'normal'); live[k] = true; }
      }
    } else {
      const chain = [];
      for (let a = p; a && a.nodeType === 1; a = parentOf(a)) chain.push(a);
      chain.reverse();
      for (const a of chain) {
        const info = paintOf(a);
        if (!groups.length || info.stacks) {
          groups.push({ info, vals: live.map((_, i) => (info.backdrop ? backdropOf(groups.map((x) => x.vals[i]), groups.map((x) => x.info), info.backdrop) : CLEAR)) });
        }
        const g = groups[groups.length - 1];
        if (info.unknown) g.vals = g.vals.map(() => null);
        else if (info.ground) g.vals = g.vals.map((v) => paintOnto(info.ground, v, 'normal'));
        if (info.insets && info.insets.length) {
          textBox = textBox || p.getBoundingClientRect();
          for (const sh of info.insets) {
            const cover = insetOver(a, textBox, sh), c = sh[0];
            if (cover > 0.002) g.vals = g.vals.map((v) => paintOnto([c[0], c[1], c[2], c[3] * Math.min(cover, 1)], v, 'normal'));
          }
        }
        for (let k = 1; k <= ways.length; k++) {
          for (const [el, c] of ways[k - 1]) if (el === a && c[3] > 0) { g.vals[k] = paintOnto(c, g.vals[k], 'normal'); live[k] = true; }
        }
      }
    }
    settle();
    let final = null;
    for (let k = groups.length - 1; k >= 0; k--) {
      const { info } = groups[k];
      let vals = groups[k].vals;
      for (const [name, arg] of info.filters || []) {
        if (name === 'blur') { if (5 * parseFloat(arg) >= fs) return false; }
        else if (name === 'url') vals = vals.map(() => null);
        else if (name === 'drop-shadow') {
          // the shadow of what the group paints, under it: beside the letters, their shadow shows
          const c = rgb(arg), [x, y, blur] = lengths(arg);
          if (!c || !(c[3] > 0)) continue;
          const under = (v, alpha) => (v ? paintOnto(v, [c[0], c[1], c[2], c[3] * alpha], 'normal') : null);
          const near = Math.abs(x) <= 2 * fs && Math.abs(y) <= 2 * fs && 5 * (blur || 0) <= fs;
          const added = [];
          if (near && live.length < 24) {
            for (let i = 1; i < vals.length; i++) if (live[i] && vals[i] && vals[i][3] > 0) added.push([under(vals[0], vals[i][3]), (c[3] * vals[i][3]) / (fade || 1)]);
          }
          vals = vals.map((v) => under(v, v ? v[3] : 1));
          for (const [v, a] of added) { vals.push(v); live.push(true); alpha.push(a); for (let j = 0; j < k; j++) groups[j].vals.push(groups[j].vals[0]); }
        } else {
          if (name === 'opacity') fade *= Math.min(amount(arg || '1'), 1);
          vals = vals.map((v) => filterColour(v, name, arg));
        }
      }
      if (info.opacity < 1) { vals = vals.map((v) => v && [v[0], v[1], v[2], v[3] * info.opacity]); fade *= info.opacity; }
      groups.pop();
      if (k === 0) final = vals.map((v) => paintOnto(v, WHITE, 'normal'));
      else {
        const parent = groups[k - 1];
        parent.vals = parent.vals.map((b, i) => paintOnto(vals[i], b, info.blend));
        settle();
      }
    }
    const plain = final[0];
    for (let k = 1; k < final.length; k++) {
      if (!live[k]) continue;
      if (!final[k] || !plain ? alpha[k] * fade > 0.02 : apart(final[k], plain) >= 16) return true;
    }
    return false;
  };
  // Drawn to nothing: a filter's opacity(0), a transform or `scale` that flattens it, a clip-path
  // that keeps no area (circle(0), ellipse(0 …), an inset of the whole width or height in px or %,
  // a polygon of no area), a mask of transparent gradients only.
  const flattened = (as, a) => {
    if (as.filter && as.filter !== 'none') {
      for (const m of as.filter.matchAll(/opacity\(\s*([\d.]+%?)\s*\)/g)) if (amount(m[1]) <= 0.02) return true;
    }
    if (as.transform && as.transform !== 'none') {
      const v = (/matrix(3d)?\(([^)]+)\)/.exec(as.transform) || [])[2];
      if (v) {
        const n = v.split(',').map(parseFloat);
        const det = n.length === 16 ? n[0] * n[5] - n[1] * n[4] : n[0] * n[3] - n[1] * n[2];
        if (Math.abs(det) < 0.001) return true;
      }
    }
    if (as.scale && as.scale !== 'none' && as.scale.split(/\s+/).some((x) => Math.abs(amount(x)) < 0.03)) return true;
    const cp = as.clipPath;
    if (cp && cp !== 'none' && as.display !== 'contents') {
      if (/^(circle|ellipse)\(\s*0(px|%)?[\s)]/.test(cp)) return true;
      const w = a.offsetWidth ?? a.getBoundingClientRect().width, h = a.offsetHeight ?? a.getBoundingClientRect().height;
      const len = (x, of) => (x.endsWith('%') ? (parseFloat(x) / 100) * of : parseFloat(x));
      const inset = /^inset\(([^)]*?)(\s+round\b[^)]*)?\)$/.exec(cp);
      if (inset) {
        const v = inset[1].trim().split(/\s+/);
        const [t, r, b, l] = [v[0], v[1] ?? v[0], v[2] ?? v[0], v[3] ?? v[1] ?? v[0]];
        if (len(t, h) + len(b, h) >= h || len(l, w) + len(r, w) >= w) return true;
      }
      const poly = /^polygon\((?:(?:nonzero|evenodd),\s*)?([^)]*)\)$/.exec(cp);
      if (poly) {
        const pts = poly[1].split(',').map((pt) => { const [x, y] = pt.trim().split(/\s+/); return [len(x, w), len(y, h)]; });
        let area = 0;
        pts.forEach(([x, y], i) => { const [x2, y2] = pts[(i + 1) % pts.length]; area += x * y2 - x2 * y; });
        if (Math.abs(area) / 2 < 1) return true;
      }
    }
    const mask = as.maskImage && as.maskImage !== 'none' ? as.maskImage : as.webkitMaskImage;
    if (mask && mask !== 'none') {
      const cs = colours(mask);
      if (cs && cs.length && cs.every((c) => c[3] <= 0.02)) return true;
    }
    return false;
  };
  // How much a transform and `scale` shrink the letters along their more shrunk axis (a rotation, 1).
  const shrinkOf = (as) => {
    let k = 1;
    const v = as.transform && as.transform !== 'none' ? (/matrix(3d)?\(([^)]+)\)/.exec(as.transform) || [])[2] : null;
    if (v) {
      const n = v.split(',').map(parseFloat);
      const [a, b, c, d] = n.length === 16 ? [n[0], n[1], n[4], n[5]] : n;
      k = Math.min(Math.hypot(a, b), Math.hypot(c, d));
    }
    if (as.scale && as.scale !== 'none') k *= Math.min(...as.scale.split(/\s+/).slice(0, 2).map((x) => Math.abs(amount(x))));
    return k;
  };
  const clips = (v) => v === 'hidden' || v === 'clip';
  let drawnNot = new Map(); // element -> drawn to nothing (transparent, clipped or flattened) itself
  const computeShown = (p) => {
    const s = styleOf(p);
    if (parseFloat(s.fontSize) < 1 || s.visibility !== 'visible') return false;
    if (parseFloat(s.textIndent) <= -500) return false;
    const r = p.getBoundingClientRect();
    // `free`: inside an absolutely positioned box, whose overflow-clipping ancestors start at its
    // containing block; `scrolled`: past an inner scroller, where text out of a box is scrolled away;
    // `fixed`: past a fixed box, which no ancestor's overflow clips.
    let free = false, scrolled = false, fixed = false, prev = null, shrink = 1;
    for (let a = p; a && a.nodeType === 1; prev = a, a = parentOf(a)) {
      const as = styleOf(a);
      shrink *= shrinkOf(as);
      // Content that is not drawn: content-visibility: hidden (hidden="until-found" too), a closed
      // <details> (all but its summary).
      if (as.contentVisibility === 'hidden') return false;
      if (a.tagName === 'DETAILS' && !a.open && !(prev && prev === a.querySelector(':scope > summary'))) return false;
      let gone = drawnNot.get(a);
      if (gone === undefined) {
        gone = +as.opacity <= 0.02 || as.clip === 'rect(0px, 0px, 0px, 0px)' || flattened(as, a);
        drawnNot.set(a, gone);
      }
      if (gone) return false;
      if (fixed) continue;
      if (free && (as.position !== 'static' || as.transform !== 'none')) free = false;
      if (as.overflowX !== 'visible' || as.overflowY !== 'visible') {
        const ar = a.getBoundingClientRect();
        if (ar.width < 2 || ar.height < 2) return false;
        // Text laid out wholly outside a box that cuts it off (overflow: hidden, not a scroller)
        if (a !== p && !free && !scrolled && r.width + r.height > 0) {
          if (clips(as.overflowX) && (r.right <= ar.left || r.left >= ar.right)) return false;
          if (clips(as.overflowY) && (r.bottom <= ar.top || r.top >= ar.bottom)) return false;
        }
        if (/(auto|scroll)/.test(as.overflowX + as.overflowY)) scrolled = true;
      }
      if (as.position === 'fixed') fixed = true;
      if (as.position === 'absolute') free = true;
    }
    // Letters under 3px along either axis (a transform that squeezes them) are specks, not words.
    if (parseFloat(s.fontSize) * shrink < 3) return false;
    // Positioned off the page (left: -10000px): not content scrolled out of an inner scroller.
    if (r.right + window.scrollX <= 0) return false;
    if (r.bottom + window.scrollY <= 0) {
      for (let a = p, k = 0; a && a.nodeType === 1 && k < 4; a = parentOf(a), k++) if (/^(absolute|fixed)$/.test(styleOf(a).position)) return false;
    }
    return inkShown(p, s);
  };
  // Text a person can read as Chromium lays it out: lines at least 3px high (a font size, a
  // transform, a zoom or an SVG viewBox that shrinks them below that leaves specks; a rotated line
  // is only taller; a squeeze across is caught by `shrinkOf`), and laid out at all (a <canvas>'s
  // fallback content is not).
  // Kept per text node for one observation (the walk and the names of controls both ask).
  let readCache = new Map();
  const readable = (node) => {
    let v = readCache.get(node);
    if (v !== undefined) return v;
    const range = document.createRange();
    range.selectNodeContents(node);
    const vertical = /^(vertical|sideways)/.test(styleOf(node.parentElement).writingMode);
    let h = 0;
    for (const r of range.getClientRects()) h = Math.max(h, vertical ? r.width : r.height);
    v = h >= 3;
    readCache.set(node, v);
    return v;
  };
  // What one observation (or one check before an action) works out afresh: styles, what is shown.
  const fresh = () => {
    styleCache = new Map(); shownCache = new Map(); drawnNot = new Map(); paintInfo = new Map(); bareCache = new Map(); readCache = new Map();
    keyColumns = new Map();
  };
  // Opaque sheets: absolutely positioned boxes with a solid background (collected by observe). Text
  // wholly under one that paints above it cannot be seen. Fixed and sticky boxes are left out: what
  // they cover depends on where the page is scrolled (text under a fixed header stays in the text).
  let sheets = [];
  const isSheet = (el, st) => {
    if (st.position !== 'absolute' || st.visibility !== 'visible' || +st.opacity < 0.98) return false;
    const c = rgb(st.backgroundColor);
    if (!c || c[3] < 0.95) return false;
    const r = el.getBoundingClientRect();
    return r.width >= 8 && r.height >= 6;
  };
  const zOf = (el) => {
    let z = 0, positioned = false;
    for (let a = el; a && a.nodeType === 1; a = parentOf(a)) {
      const st = styleOf(a);
      if (st.position !== 'static') { positioned = true; const n = parseInt(st.zIndex, 10); if (!Number.isNaN(n)) z = n; }
    }
    return { z, positioned };
  };
  const coveredCache = new Map();
  const covered = (p) => {
    if (!sheets.length || !p) return false;
    let v = coveredCache.get(p);
    if (v !== undefined) return v;
    v = false;
    const r = p.getBoundingClientRect();
    if (r.width > 0 || r.height > 0) {
      for (const sh of sheets) {
        if (sh === p || deepContains(sh, p) || deepContains(p, sh)) continue;
        const q = sh.getBoundingClientRect();
        if (r.left < q.left - 1 || r.right > q.right + 1 || r.top < q.top - 1 || r.bottom > q.bottom + 1) continue;
        const a = zOf(sh), b = zOf(p);
        const later = !!(p.compareDocumentPosition(sh) & Node.DOCUMENT_POSITION_FOLLOWING);
        if (a.z > b.z || (a.z === b.z && a.z >= 0 && (!b.positioned || later))) { v = true; break; }
      }
    }
    coveredCache.set(p, v);
    return v;
  };
  const textShown = (p) => {
    if (!p) return true;
    let v = shownCache.get(p);
    if (v === undefined) { v = computeShown(p); shownCache.set(p, v); }
    return v;
  };
  // The nearest ancestor that is not inline: text in different ones is parted by a space ("Cancel OK").
  const blockOf = (n) => {
    for (let a = n.parentElement; a; a = parentOf(a)) { if (styleOf(a).display !== 'inline') return a; }
    return null;
  };
  // Words a stylesheet puts on an element (`::before { content: attr(data-label) }`), as Chrome's
  // accessible name reads them (the alternative text after `/` where given); icon-font glyphs
  // (private-use characters), counters, quotes and images are left out.
  const generatedText = (el, which) => {
    const ps = getComputedStyle(el, which);
    const c = ps.content;
    if (!c || c === 'none' || c === 'normal' || !c.includes('"') || ps.display === 'none' || ps.visibility !== 'visible' || parseFloat(ps.fontSize) < 1) return '';
    const col = rgb(ps.color);
    if (col && col[3] <= 0.05) return '';
    let parts = [];
    for (const m of c.matchAll(/"((?:[^"\\]|\\.)*)"|(\/)|[^"\s/]+/g)) {
      if (m[2]) parts = []; // what follows the slash is the alternative text: it replaces the rest
      else if (m[1] !== undefined) parts.push(m[1].replace(/\\(.)/g, '$1'));
    }
    return clean(parts.join('').replace(/[\uE000-\uF8FF]/g, ''));
  };
  // The visible text of an element; ``skip(e)`` leaves out a descendant's subtree (numbered children);
  // with ``generated``, the words of ::before/::after content count too (a name, not the page text).
  const seenText = (el, skip, generated) => {
    const out = [];
    let last = null;
    const extra = (e, which) => { if (generated) { const g = generatedText(e, which); if (g) { out.push(' ', g, ' '); last = null; } } };
    const visit = (node) => {
      for (const k of node.childNodes) {
        if (out.length > 200) return;
        if (k.nodeType === Node.TEXT_NODE) {
          if (!k.data.trim() || !textShown(k.parentElement) || !readable(k)) continue;
          const b = blockOf(k);
          if (last !== null && b !== last) out.push(' ');
          out.push(k.data); last = b;
        } else if (k.nodeType === Node.ELEMENT_NODE) {
          if (SKIP_TAGS.has(k.tagName) || (skip && skip(k))) continue;
          const ks = styleOf(k);
          if (ks.display === 'none') continue;
          extra(k, '::before');
          visit(k.shadowRoot || k);
          extra(k, '::after');
        }
      }
    };
    extra(el, '::before');
    visit(el.shadowRoot || el);
    extra(el, '::after');
    return clean(out.join(''));
  };
  let numbered = null; // the elements of the current observe() that get numbers
  const inNumbered = (k) => !!(numbered && numbered.has(k));
  const byIds = (el, attr) => {
    const ids = (el.getAttribute(attr) || '').split(/\s+/).filter(Boolean);
    const root = el.getRootNode();
    return clean(ids.map((id) => { const t = root.getElementById ? root.getElementById(id) : null; return t ? t.textContent : ''; }).join(' '));
  };
  const labelsOf = (el) => {
    if (!el.labels || !el.labels.length) return '';
    return clean(Array.from(el.labels).map((l) => {
      // label text without the control's own text (e.g. a select's options)
      return seenText(l, (x) => NATIVE_FIELD_TAGS.has(x.tagName) || x.tagName === 'BUTTON');
    }).join(' '));
  };
  // An unlabelled field's caption: the text of the smallest enclosing block that holds no other field.
  const FIELD_SEL = 'input:not([type="hidden"]), select, textarea';
  const groupText = (el) => {
    let a = el.parentElement;
    for (let k = 0; a && k < 3 && a !== document.body; k++, a = a.parentElement) {
      if (a.querySelectorAll(FIELD_SEL + ', button, a[href], [role="button"]').length > 1) return '';
      const t = clean(a.innerText);
      if (t) return t.length <= 40 ? t : '';
    }
    return '';
  };
  const nameOf = (el) => {
    const tag = el.tagName;
    let n = byIds(el, 'aria-labelledby') || clean(el.getAttribute('aria-label'));
    if (n) return cut(n, 80);
    if (NATIVE_FIELD_TAGS.has(tag)) {
      const t = el.type;
      if (tag === 'INPUT' && (t === 'submit' || t === 'button' || t === 'reset')) n = clean(el.value) || (t === 'submit' ? 'Submit' : t);
      else if (tag === 'INPUT' && t === 'image') n = clean(el.alt) || 'Submit';
      else n = labelsOf(el) || clean(el.getAttribute('placeholder')) || clean(el.title) || groupText(el);
      return cut(n, 80);
    }
    if (tag === 'LABEL' && el.control) return cut(clean(el.textContent), 80);
    // CSS-generated words only for a control that shows none of its own (what tells icon-less
    // buttons apart; reading ::before/::after of every element would cost every observation)
    n = seenText(el, inNumbered) || seenText(el, inNumbered, true);
    if (!n) {
      const img = el.querySelector('img[alt]');
      n = img ? clean(img.alt) : '';
    }
    return cut(n || clean(el.title) || clean(el.getAttribute('value')) || hintOf(el), 80);
  };
  const roleOf = (el) => {
    const r = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
    if (r && r !== 'presentation' && r !== 'none') return r;
    switch (el.tagName) {
      case 'A': return 'link';
      case 'BUTTON': case 'SUMMARY': return 'button';
      case 'SELECT': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'TEXTAREA': return 'textbox';
      case 'LABEL': return el.control ? roleOf(el.control) : 'label';
      case 'INPUT': {
        const t = el.type;
        if (['submit', 'button', 'reset', 'image'].includes(t)) return 'button';
        if (t === 'checkbox' || t === 'radio') return t;
        if (t === 'range') return 'slider';
        if (t === 'number') return 'spinbutton';
        if (t === 'search') return 'searchbox';
        return 'textbox';
      }
      default:
        return el.isContentEditable ? 'textbox' : 'clickable';
    }
  };
  const isDisabled = (el) => {
    if (el.matches(':disabled')) return true;
    for (let x = el; x; x = parentOf(x)) if (x.getAttribute && x.getAttribute('aria-disabled') === 'true') return true;
    return false;
  };
  const isReadOnly = (el) => !!el.readOnly || el.getAttribute('aria-readonly') === 'true';
  const isSubmitButton = (el) => (el.tagName === 'BUTTON' && el.type === 'submit') || (el.tagName === 'INPUT' && (el.type === 'submit' || el.type === 'image'));
  const fieldOf = (el) => {
    const target = el.tagName === 'LABEL' && el.control ? el.control : el;
    const tag = target.tagName;
    const f = { name: target.getAttribute('name') || null, required: !!target.required || target.getAttribute('aria-required') === 'true', readonly: isReadOnly(target) };
    if (tag === 'INPUT') {
      f.type = target.type;
      if (['submit', 'button', 'reset', 'image'].includes(target.type)) return null;
      if (target.type === 'checkbox' || target.type === 'radio') { f.checked = target.checked; f.value = target.getAttribute('value'); }
      else if (target.type === 'file') f.value = Array.from(target.files || []).map((x) => x.name).join(', ');
      else f.value = target.value;
      f.placeholder = target.getAttribute('placeholder');
    } else if (tag === 'TEXTAREA') {
      f.type = 'textarea'; f.value = target.value; f.placeholder = target.getAttribute('placeholder');
    } else if (tag === 'SELECT') {
      f.type = target.multiple ? 'select-multiple' : 'select';
      const opts = Array.from(target.options);
      f.options = opts.slice(0, 100).map((o) => ({ label: cut(clean(o.label || o.text), 60), value: cut(o.value, 60), selected: o.selected }));
      f.optionCount = opts.length;
      f.value = opts.filter((o) => o.selected).map((o) => clean(o.label || o.text)).join(', ');
    } else if (target.isContentEditable) {
      f.type = 'contenteditable'; f.value = target.innerText;
    } else {
      const role = roleOf(target);
      if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio', 'option', 'tab', 'treeitem'].includes(role)) {
        const a = target.getAttribute('aria-checked') ?? target.getAttribute('aria-selected');
        if (a === null) return null;
        f.type = role; f.checked = a === 'true';
      } else if (['combobox', 'textbox', 'searchbox', 'slider', 'spinbutton'].includes(role)) {
        f.type = role; f.value = target.getAttribute('aria-valuetext') || target.getAttribute('aria-valuenow') || clean(target.textContent);
      } else return null;
    }
    if (typeof f.value === 'string') f.value = cut(f.value, 4000);
    // Limits a person sees on a slider or number field (min, max, step).
    for (const k of ['min', 'max', 'step']) {
      const v = target.getAttribute(k) ?? target.getAttribute('aria-value' + k);
      if (v !== null && v !== '' && (k !== 'step' || v !== '1')) f[k] = cut(String(v), 30);
    }
    const invalid = target.willValidate && !target.validity.valid && (target.matches(':user-invalid') || target.getAttribute('aria-invalid') === 'true');
    // The page's own words for the problem (its error element) before the browser's generic one.
    if (invalid || target.getAttribute('aria-invalid') === 'true') f.invalid = cut(pageMessageFor(target) || (invalid ? target.validationMessage : '') || 'marked invalid', 160);
    return f;
  };

  // ------------------------------------------------------------ rows and cards
  // The key of the table row or card a control belongs to: the row's cell in the table's key column
  // (see keyColumnOf), or the heading of a repeated card. Rows keep their controls tied to them even
  // where the row's text is not shown, and an action checks the key before it acts (a re-sorted
  // table or a recycled row is refused as stale).
  const CELL_SEL = 'td, th, [role="cell"], [role="gridcell"], [role="rowheader"], [role="columnheader"]';
  const HEADING_SEL = 'h1, h2, h3, h4, h5, h6, [role="heading"]';
  const KEY_HEAD_RE = /(^|\b)(id|no\.?|nr\.?|num(ber)?|#|ref(erence)?|invoice|bill|order|code|key|sku|ticket|case|account)(\b|$)/i;
  const cellsOf = (row) => Array.from(row.children).filter((c) => c.matches(CELL_SEL));
  const isHeadCell = (c) => c.matches('th, [role="columnheader"]') && !c.matches('[role="rowheader"], [scope="row"]');
  const cellWords = (c) => clean(c.textContent);
  let keyColumns = new Map(); // table (or grid) -> its key column: a cell index, an array of them, or null
  // The table's key column: the one whose words tell every row from every other. An id-like header
  // (Invoice, No., ID, Reference…) first, then row headers, then the leftmost such column; if none is
  // unique alone, the fewest leftmost columns that are unique together; else none (first words).
  const keyColumnOf = (row) => {
    const table = row.tagName === 'TR' ? row.closest('table') : (row.closest('[role="grid"], [role="table"], [role="treegrid"]') || row.parentElement);
    if (!table) return null;
    if (keyColumns.has(table)) return keyColumns.get(table);
    const rows = table.tagName === 'TABLE' ? Array.from(table.rows) : Array.from(table.querySelectorAll('[role="row"]'));
    const data = [];
    let head = null;
    for (const r of rows.slice(0, 400)) {
      const cells = cellsOf(r);
      if (!cells.length) continue;
      if (cells.every(isHeadCell)) { if (!head) head = cells.map(cellWords); continue; }
      data.push(cells.map(cellWords));
    }
    let key = null;
    if (data.length > 1) {
      const width = Math.max(...data.map((d) => d.length));
      const unique = (cols) => {
        const seen = new Set();
        for (const d of data) {
          const v = cols.map((c) => d[c] || '').join('\u0000');
          if (!cols.some((c) => d[c]) || seen.has(v)) return false;
          seen.add(v);
        }
        return true;
      };
      const alone = [];
      for (let c = 0; c < width; c++) if (unique([c])) alone.push(c);
      const rowHead = (c) => { const r = rows.find((x) => cellsOf(x)[c] && !cellsOf(x).every(isHeadCell)); return !!r && cellsOf(r)[c].matches('th, [role="rowheader"]'); };
      key = alone.find((c) => head && head[c] && KEY_HEAD_RE.test(head[c])) ?? alone.find(rowHead) ?? alone[0] ?? null;
      if (key === null) {
        const cols = [];
        for (let c = 0; c < width && cols.length < 4; c++) {
          if (!data.some((d) => d[c])) continue;
          cols.push(c);
          if (cols.length > 1 && unique(cols)) { key = cols; break; }
        }
      }
    }
    keyColumns.set(table, key);
    return key;
  };
  // ``quick``: the cells' raw words (the signature only needs to see a key change, cheaply).
  const rowKeyOf = (el, quick) => {
    const row = el.closest('tr, [role="row"]');
    if (row) {
      const cells = cellsOf(row);
      const key = keyColumnOf(row);
      const words = (c) => (c && !deepContains(c, el) ? (quick ? cellWords(c) : seenText(c)) : '');
      if (typeof key === 'number' && words(cells[key])) return cut(words(cells[key]), 40);
      if (Array.isArray(key)) {
        const t = key.map((c) => words(cells[c])).filter(Boolean).join(' · ');
        if (t) return cut(t, 60);
      }
      const heads = cells.filter((c) => c.matches('th, [role="rowheader"]'));
      for (const c of [...heads, ...cells]) {
        const t = words(c);
        if (t) return cut(t, 40);
      }
      return '';
    }
    for (let a = el.parentElement, k = 0; a && k < 6 && a !== document.body; a = a.parentElement, k++) {
      const hs = a.querySelectorAll(HEADING_SEL);
      if (hs.length > 1) return '';
      if (hs.length === 1) {
        if (deepContains(hs[0], el)) return '';
        const p = a.parentElement;
        const repeated = p && Array.from(p.children).some((x) => x !== a && x.tagName === a.tagName && x.className === a.className && x.querySelector(HEADING_SEL));
        return repeated || a.tagName === 'ARTICLE' ? cut(seenText(hs[0]), 40) : '';
      }
    }
    return '';
  };

  // The message a page shows for an invalid field: aria-errormessage / aria-describedby, or a visible
  // error element beside it (in the smallest block that holds no other field).
  const ERROR_SEL = '.invalid-feedback, .error, .errors, .errorlist, .field-error, .form-error, .help-block, .error-text, [class*="error-message"], [class*="error_message"], [class*="validation"], [role="alert"]';
  const pageMessageFor = (t) => {
    const by = byIds(t, 'aria-errormessage') || byIds(t, 'aria-describedby');
    if (by) return by;
    let a = t.parentElement;
    for (let k = 0; a && k < 3 && a !== document.body; k++, a = a.parentElement) {
      if (a.querySelectorAll(FIELD_SEL).length > 1) break;
      for (const e of a.querySelectorAll(ERROR_SEL)) {
        if (e === t || deepContains(e, t)) continue;
        const txt = seenText(e);
        if (txt && styleOf(e).display !== 'none') return txt;
      }
    }
    return '';
  };

  // ------------------------------------------------------------ interactivity & visibility
  const hasBox = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  // An inner scroller: a box whose content scrolls inside it (a terms box, an overflow:auto list, a
  // long textarea). Vertical only; the page itself is not one (the observation's scroll line says it).
  const scrollOf = (el, style) => {
    if (el === document.body || el === document.documentElement || el === document.scrollingElement) return null;
    if (!/(auto|scroll)/.test(style.overflowY) || el.clientHeight < 20 || el.scrollHeight - el.clientHeight <= 8) return null;
    return { top: Math.round(el.scrollTop), client: Math.round(el.clientHeight), height: Math.round(el.scrollHeight) };
  };
  // Visually hidden helper text for screen readers (clip to nothing, 1px boxes).
  const srOnly = (el, style) => {
    if (style.clip === 'rect(0px, 0px, 0px, 0px)' || style.clipPath === 'inset(50%)') return true;
    if (style.position !== 'absolute' || style.overflow !== 'hidden') return false;
    const r = el.getBoundingClientRect();
    return r.width <= 1 && r.height <= 1;
  };
  const INNER_INTERACTIVE = 'a[href], button, input:not([type="hidden"]), select, textarea, [role="button"], [role="link"], [role="checkbox"], [role="radio"], [role="tab"], [role="menuitem"], [role="option"], [onclick]';
  const ROLE_CONTAINER_SEL = '[role="tab"], [role="button"], [role="link"], [role="menuitem"], [role="option"], [role="treeitem"], a[href], button';
  const isInteractive = (el, style) => {
    const tag = el.tagName;
    const explicit = (el.getAttribute('role') || '').split(/\s+/)[0];
    if ((explicit === 'presentation' || explicit === 'none') && parentOf(el) && parentOf(el).closest(ROLE_CONTAINER_SEL)) return false;
    if (tag === 'A') return el.hasAttribute('href') || el.hasAttribute('onclick') || style.cursor === 'pointer' || listened(el) || hoverClickable(el)
      || el.hasAttribute('title') || el.hasAttribute('data-handler') || el.hasAttribute('data-action');
    if (tag === 'BUTTON' || tag === 'SELECT' || tag === 'TEXTAREA') return true;
    if (tag === 'INPUT') return el.type !== 'hidden' && hasBox(el);
    if (tag === 'SUMMARY') return true;
    if (tag === 'LABEL') return !!el.control && !hasBox(el.control) && el.control.type !== 'hidden';
    const role = (el.getAttribute('role') || '').split(/\s+/)[0];
    if (INTERACTIVE_ROLES.has(role)) return true;
    if (role === 'presentation' || role === 'none') return false;
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return true;
    if (tag === 'HTML' || tag === 'BODY') return false;
    if (el.hasAttribute('onclick') || typeof el.onclick === 'function' || listened(el) || hoverClickable(el) || el.getAttribute('draggable') === 'true') return true;
    const ti = el.getAttribute('tabindex');
    if (ti !== null && +ti >= 0 && tag !== 'IFRAME') return !el.querySelector(INNER_INTERACTIVE);
    if (style.cursor === 'pointer') {
      const p = parentOf(el);
      const pc = p && p.nodeType === 1 ? styleOf(p).cursor : 'auto';
      if (pc !== 'pointer' && tag !== 'LABEL') return !el.querySelector(INNER_INTERACTIVE);
    }
    return false;
  };

  // The element's rectangle clipped by scrolling ancestors (overflow other than visible).
  const clippedRect = (el) => {
    const r = el.getBoundingClientRect();
    let top = r.top, bottom = r.bottom, left = r.left, right = r.right;
    let clipTop = -Infinity, clipBottom = Infinity;
    for (let a = parentOf(el); a && a !== document.body && a !== document.documentElement; a = parentOf(a)) {
      const s = styleOf(a);
      if (s.overflowY !== 'visible' || s.overflowX !== 'visible') {
        const ar = a.getBoundingClientRect();
        if (s.overflowY !== 'visible') { clipTop = Math.max(clipTop, ar.top); clipBottom = Math.min(clipBottom, ar.bottom); }
        top = Math.max(top, ar.top); bottom = Math.min(bottom, ar.bottom);
        if (s.overflowX !== 'visible') { left = Math.max(left, ar.left); right = Math.min(right, ar.right); }
      }
      if (s.position === 'fixed') break;
    }
    return { top, bottom, left, right, raw: r, clipTop, clipBottom };
  };

  const describe = (el) => {
    if (!el) return 'nothing';
    let s = el.localName;
    if (el.id) s += '#' + el.id;
    else if (el.classList && el.classList.length) s += '.' + Array.from(el.classList).slice(0, 2).join('.');
    const t = cut(clean(el.getAttribute('aria-label') || el.innerText || ''), 24);
    return t ? `${s} "${t}"` : s;
  };

  // A native <select> hidden behind a custom widget: the visible wrapper stands in for it.
  const hiddenSelectProxy = (el) => {
    if (el.tagName !== 'SELECT') return null;
    const s = styleOf(el);
    // Hidden outright, or clipped away by a collapsed (width or height 0) ancestor with overflow hidden.
    const clipped = () => {
      for (let a = parentOf(el), k = 0; a && k < 3; k++, a = parentOf(a)) {
        const as = styleOf(a);
        const r = a.getBoundingClientRect();
        if ((as.overflowX !== 'visible' || as.overflowY !== 'visible') && (r.width < 2 || r.height < 2)) return true;
      }
      return false;
    };
    const hidden = s.display === 'none' || s.visibility !== 'visible' || +s.opacity === 0 || !hasBox(el) || srOnly(el, s) || clipped();
    if (!hidden) return null;
    let a = parentOf(el);
    for (let k = 0; a && k < 3; k++, a = parentOf(a)) {
      const as = styleOf(a);
      if (as.display === 'none') return null;
      if (as.visibility === 'visible' && hasBox(a)) return a;
    }
    return null;
  };
  // For a clickable container that also holds clickable children: its own text (not a child's),
  // where a click lands on the container itself.
  const ownTextNodes = (el, isChosen, first) => {
    const out = [];
    const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let n, k = 0;
    while ((n = w.nextNode()) && k++ < 500) {
      if (!n.data.trim()) continue;
      let inside = false;
      for (let a = n.parentElement; a && a !== el; a = parentOf(a)) {
        if (isChosen(a) || styleOf(a).display === 'none') { inside = true; break; }
      }
      if (!inside) { out.push(n); if (first) break; }
    }
    return out;
  };
  const ownTextNode = (el, isChosen) => ownTextNodes(el, isChosen, true)[0] || null;
  const ownText = (el, isChosen) => clean(ownTextNodes(el, isChosen, false).map((n) => n.data).join(' '));
  const interactiveChild = (a) => a.nodeType === 1 && isInteractive(a, styleOf(a)) && hasBox(a);
  // States a user sees: expanded/collapsed, popup triggers, tree folders.
  const statesOf = (el) => {
    const out = [];
    const ex = el.getAttribute('aria-expanded');
    const hp = el.getAttribute('aria-haspopup');
    if (el.tagName === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS') out.push(el.parentElement.open ? 'expanded' : 'collapsed');
    else if (ex === 'true' || ex === 'false') out.push(ex === 'true' ? 'expanded' : 'collapsed');
    else if (el.tagName === 'LI' || (el.parentElement && el.parentElement.tagName === 'LI')) {
      const li = el.tagName === 'LI' ? el : el.parentElement;
      const sub = Array.from(li.children).find((c) => c.tagName === 'UL' || c.tagName === 'OL');
      if (sub) {
        // Shown (even with nothing in it yet) is expanded; an empty open folder says so.
        const st = styleOf(sub);
        const open = st.display !== 'none' && st.visibility === 'visible';
        out.push('folder', open ? 'expanded' : 'collapsed');
        if (open && !sub.children.length) out.push('empty');
      }
    }
    if (hp && hp !== 'false') out.push('has popup');
    const pressed = el.getAttribute('aria-pressed');
    if (pressed === 'true') out.push('pressed');
    if (el.getAttribute('aria-current') && el.getAttribute('aria-current') !== 'false') out.push('current');
    else if (el.tagName === 'A' || el.getAttribute('role') === 'tab') {
      // Pagers and tab bars mark the current item with a class on the item or its list item.
      const host = [el, el.parentElement].find((x) => x && /(^|\s)(active|current)(\s|$)/.test(typeof x.className === 'string' ? x.className : ''));
      if (host) out.push('current');
    }
    return out;
  };

  // State of an element right now: what a click at its visible centre would hit.
  const stateOf = (el) => {
    if (isDisabled(el)) return { state: 'disabled' };
    const proxy = hiddenSelectProxy(el);
    if (proxy) { const st = stateOf(proxy); delete st.point; st.centre = true; return st; }
    if (roleOf(el) === 'clickable' && el.querySelector('*')) {
      // a container with clickable children: aim at its own text
      const hasKids = Array.from(el.querySelectorAll('*')).slice(0, 300).some(interactiveChild);
      const t = hasKids ? ownTextNode(el, interactiveChild) : null;
      if (t) {
        const range = document.createRange();
        range.selectNodeContents(t);
        const rr = range.getBoundingClientRect();
        const x = (rr.left + rr.right) / 2, y = (rr.top + rr.bottom) / 2;
        if (rr.width > 0 && y >= 0 && y <= window.innerHeight) {
          const hit = deepElementFromPoint(x, y);
          const r = el.getBoundingClientRect();
          if (hit && deepContains(el, hit) && !(hit !== el && interactiveChild(hit) && hit !== t.parentElement)) return { state: 'interactable', point: { x: x - r.left, y: y - r.top }, centre: false };
        }
      }
    }
    const c = clippedRect(el);
    const vh = window.innerHeight, vw = window.innerWidth;
    if (c.bottom <= c.top || c.right <= c.left) {
      const r = c.raw;
      if (r.bottom <= Math.max(c.clipTop, 0)) return { state: 'offscreen_above' };
      if (r.top >= Math.min(c.clipBottom, vh)) return { state: 'offscreen_below' };
      return { state: 'offscreen_below' };
    }
    if (c.bottom <= 0) return { state: 'offscreen_above' };
    if (c.top >= vh) return { state: 'offscreen_below' };
    const top = Math.max(c.top, 0), bottom = Math.min(c.bottom, vh), left = Math.max(c.left, 0), right = Math.min(c.right, vw);
    if (right <= left || bottom <= top) return { state: c.left >= vw ? 'offscreen_below' : 'offscreen_above' };
    const target = el.tagName === 'LABEL' && el.control ? el.control : el;
    const cx = (left + right) / 2, cy = (top + bottom) / 2;
    const pts = [[cx, cy], [left + 2, top + 2], [right - 2, top + 2], [left + 2, bottom - 2], [right - 2, bottom - 2]];
    let blocker = null;
    for (const [x, y] of pts) {
      const hit = deepElementFromPoint(x, y);
      if (!hit) continue;
      const labelHit = target.labels && Array.from(target.labels).some((l) => deepContains(l, hit));
      if (deepContains(el, hit) || labelHit) {
        const r = c.raw;
        return { state: 'interactable', point: { x: x - r.left, y: y - r.top }, centre: x === cx && y === cy };
      }
      if (!blocker) blocker = hit;
    }
    return { state: 'occluded', occludedBy: describe(blocker), blocker };
  };

  // ------------------------------------------------------------ selectors
  let shadowHosts = [];
  const collectHosts = () => {
    shadowHosts = [];
    const visit = (root) => {
      for (const e of root.querySelectorAll('*')) if (e.shadowRoot) { shadowHosts.push(e); visit(e.shadowRoot); }
    };
    visit(document);
  };
  // How many elements Playwright's piercing css engine would match for `sel` within `scope`.
  const countIn = (scope, sel) => {
    let n;
    try { n = scope.querySelectorAll(sel).length; } catch (e) { return -1; }
    for (const h of shadowHosts) {
      if (scope === document || h === scope || deepContains(scope, h)) n += h.shadowRoot.querySelectorAll(sel).length;
      if (n > 1) return n;
    }
    return n;
  };
  const attrSel = (tag, name, value) => (value && value.length <= 80 ? `${tag}[${name}="${esc(value)}"]` : null);
  const candidates = (el) => {
    const tag = el.localName;
    const out = [];
    if (el.id && el.id.length <= 80) out.push('#' + esc(el.id));
    for (const a of ['data-testid', 'data-test', 'data-qa', 'data-cy']) out.push(attrSel(tag, a, el.getAttribute(a)));
    const name = el.getAttribute('name');
    if (name) {
      out.push(attrSel(tag, 'name', name));
      if (el.type === 'radio' || el.type === 'checkbox') {
        const v = el.getAttribute('value');
        if (v && v.length <= 60) out.push(`${tag}[name="${esc(name)}"][value="${esc(v)}"]`);
      }
    }
    out.push(attrSel(tag, 'aria-label', el.getAttribute('aria-label')));
    if (tag === 'a') out.push(attrSel(tag, 'href', el.getAttribute('href')));
    out.push(attrSel(tag, 'placeholder', el.getAttribute('placeholder')));
    out.push(attrSel(tag, 'title', el.getAttribute('title')));
    if (tag === 'label' && el.htmlFor) out.push(attrSel(tag, 'for', el.htmlFor));
    const cls = Array.from(el.classList || []).filter((c) => /^[A-Za-z_-][\w-]{0,40}$/.test(c)).slice(0, 3);
    if (cls.length) out.push(tag + cls.map((c) => '.' + esc(c)).join(''));
    out.push(tag);
    return out.filter(Boolean);
  };
  const anchorFor = (el, scope) => {
    if (el.id && el.id.length <= 80) { const s = '#' + esc(el.id); if (countIn(scope, s) === 1) return s; }
    for (const a of ['data-testid', 'data-test', 'data-qa']) { const s = attrSel(el.localName, a, el.getAttribute(a)); if (s && countIn(scope, s) === 1) return s; }
    return null;
  };
  const nthSegment = (el) => {
    const tag = el.localName;
    let k = 1;
    for (let s = el.previousElementSibling; s; s = s.previousElementSibling) if (s.localName === tag) k++;
    let more = false;
    for (let s = el.nextElementSibling; s; s = s.nextElementSibling) if (s.localName === tag) { more = true; break; }
    return k === 1 && !more ? tag : `${tag}:nth-of-type(${k})`;
  };
  const uniqueWithin = (el, scope) => {
    for (const c of candidates(el)) if (countIn(scope, c) === 1) return c;
    // A path of :nth-of-type steps up to the nearest uniquely identifiable ancestor (or the root).
    const chain = [nthSegment(el)];
    for (let a = el.parentElement; a; a = a.parentElement) {
      const anchor = anchorFor(a, scope);
      if (anchor) { const s = anchor + ' > ' + chain.join(' > '); if (countIn(scope, s) === 1) return s; }
      chain.unshift(nthSegment(a));
      const s = chain.join(' > ');
      if (!a.parentElement && countIn(scope, s) === 1) return s;
    }
    return chain.join(' > ');
  };
  const selectorFor = (el) => {
    const root = el.getRootNode();
    if (root instanceof ShadowRoot) return selectorFor(root.host) + ' >> ' + uniqueWithin(el, root.host);
    return uniqueWithin(el, document);
  };
  const verify = (sel) => {
    // Resolve a `a >> b` chain the way Playwright does: each step searched inside the previous match.
    let scopes = [document];
    for (const part of sel.split(' >> ')) {
      const next = [];
      for (const s of scopes) {
        const found = [];
        try { s.querySelectorAll(part).forEach((e) => found.push(e)); } catch (e) { return []; }
        for (const h of shadowHosts) if ((s === document || h === s || deepContains(s, h))) h.shadowRoot.querySelectorAll(part).forEach((e) => found.push(e));
        found.forEach((e) => { if (!next.includes(e)) next.push(e); });
      }
      scopes = next;
    }
    return scopes;
  };

  // ------------------------------------------------------------ forms & submissions
  const isLoginForm = (form) => {
    const els = Array.from(formProp(form, 'elements'));
    const pw = els.filter((e) => e.type === 'password');
    if (pw.length !== 1) return false;
    if (els.some((e) => e.tagName === 'TEXTAREA' || e.tagName === 'SELECT' || e.type === 'file')) return false;
    const texts = els.filter((e) => e.tagName === 'INPUT' && ['text', 'email', 'tel', ''].includes(e.type) && hasBox(e));
    return texts.length <= 2;
  };
  const formFields = (form, submitter) => {
    let fd;
    try { fd = new FormData(form, submitter || undefined); } catch (e) { fd = new FormData(form); }
    const controls = Array.from(formProp(form, 'elements'));
    // A value in a password-type box, by the control (its name and the value it holds), never by
    // the name alone: a text box that shares a password box's name is an ordinary field.
    const boxes = controls.filter((e) => e.tagName === 'INPUT' && e.type === 'password' && !e.disabled);
    const inBox = (name, v) => typeof v === 'string' && boxes.some((e) => e.name === name && e.value === v);
    const labelOf = (name, value) => {
      // For a select, the option's visible label helps the human: "7" is "Northwind Traders".
      const sel = controls.find((e) => e.tagName === 'SELECT' && e.name === name);
      const opt = sel && Array.from(sel.options).find((o) => o.value === value);
      const label = opt ? clean(opt.label || opt.text) : '';
      return label && label !== value ? label : null;
    };
    // A control that sends several values under one name: every control of the name a checkbox,
    // or a multi-select (the rules read its values as a set, not as one field sent twice).
    const choiceOf = (name) => {
      const named = controls.filter((e) => e.name === name);
      return named.length > 0 && named.every((e) => (e.tagName === 'INPUT' && e.type === 'checkbox') || (e.tagName === 'SELECT' && e.multiple));
    };
    // Only a multipart POST sends a file's bytes; any other form sends the file's name as text.
    const enctype = submitter && submitter.hasAttribute('formenctype') ? submitter.formEnctype : formProp(form, 'enctype');
    const multipart = targetOf(form, submitter).method === 'POST' && String(enctype).toLowerCase() === 'multipart/form-data';
    const asText = (v) => ((v.startsWith('(file ') || v.startsWith('(text) ')) ? `(text) ${v}` : v);
    const out = [];
    for (const [k, v] of fd.entries()) {
      // The same marking as approvals/key.py (file_value / text_value): a file part is "(file NAME,
      // SIZE bytes)", and a text that starts like one (or like an escaped text) gets "(text) " first.
      const value = typeof v === 'string' ? asText(v) : (multipart ? `(file ${v.name}, ${v.size} bytes)` : asText(v.name));
      out.push({ name: k, value, password: inBox(k, v), label: labelOf(k, value), choice: choiceOf(k) });
    }
    return out;
  };
  const targetOf = (form, submitter) => {
    const method = (submitter && submitter.hasAttribute('formmethod') ? submitter.formMethod : formProp(form, 'method')) || 'get';
    const action = submitter && submitter.hasAttribute('formaction') ? submitter.formAction : formProp(form, 'action');
    return { method: String(method).toUpperCase(), action: String(action) };
  };
  const defaultButton = (form) => Array.from(formProp(form, 'elements')).find((e) => isSubmitButton(e)) || null;
  const IMPLICIT_TYPES = new Set(['text', 'search', 'url', 'tel', 'email', 'password', 'date', 'month', 'week', 'time', 'datetime-local', 'number']);
  // What a click / Enter / key press on `el` would submit, or null.
  const submissionFor = (el, kind, key) => {
    let form = null, submitter = null;
    const enter = kind === 'enter' || (kind === 'press' && /^(Enter|NumpadEnter)$/.test(key));
    const activate = kind === 'click' || (kind === 'press' && /^(Enter|Space| )$/.test(key));
    if (activate && isSubmitButton(el) && el.form) { form = el.form; submitter = el; }
    else if (enter && el.tagName === 'INPUT' && el.form && IMPLICIT_TYPES.has(el.type)) {
      form = el.form;
      submitter = defaultButton(form);
      if (submitter && submitter.disabled) return null;
      if (!submitter) {
        const blocking = Array.from(formProp(form, 'elements')).filter((e) => e.tagName === 'INPUT' && IMPLICIT_TYPES.has(e.type));
        if (blocking.length > 1) return null;
      }
    }
    if (!form) return null;
    const t = targetOf(form, submitter);
    if (t.method === 'DIALOG') return null;
    const novalidate = formProp(form, 'noValidate') || (submitter && submitter.formNoValidate);
    if (!novalidate) {
      const bad = Array.from(formProp(form, 'elements')).filter((e) => e.willValidate && !e.validity.valid);
      if (bad.length) return { invalid: bad.slice(0, 5).map((e) => `${nameOf(e) || e.name}: ${e.validationMessage}`) };
    }
    return {
      method: t.method, action: t.action, fields: formFields(form, submitter),
      login: isLoginForm(form), summary: submitter ? `${roleOf(submitter)} "${nameOf(submitter)}"` : 'Enter in a form field',
      // an image button sends where it was clicked as NAME.x and NAME.y (x and y unnamed): the prefix
      clickPoint: submitter && submitter.type === 'image' ? (submitter.name ? `${submitter.name}.` : '') : null,
    };
  };

  // ------------------------------------------------------------ obstacles & messages
  const visible = (el) => { const s = styleOf(el); return s.visibility === 'visible' && s.display !== 'none' && hasBox(el); };
  const overlayOf = (blocker) => {
    // Climb to the outermost positioned ancestor that covers a large part of the viewport.
    const area = window.innerWidth * window.innerHeight;
    let best = null;
    for (let a = blocker; a && a !== document.body && a !== document.documentElement; a = parentOf(a)) {
      const s = styleOf(a);
      if (s.position === 'fixed' || s.position === 'absolute' || s.position === 'sticky' || a.tagName === 'DIALOG') {
        const r = a.getBoundingClientRect();
        const w = Math.min(r.right, window.innerWidth) - Math.max(r.left, 0);
        const h = Math.min(r.bottom, window.innerHeight) - Math.max(r.top, 0);
        if (w > 0 && h > 0 && w * h >= 0.25 * area) best = a;
      }
    }
    return best;
  };
  const captchaPresent = () => {
    for (const e of document.querySelectorAll(CAPTCHA_SEL)) if (visible(e)) return describe(e);
    const t = (document.body && document.body.innerText) || '';
    const m = t.match(CAPTCHA_TEXT_RE);
    return m ? `text "${m[0]}"` : null;
  };
  const messages = () => {
    const out = [];
    const seen = new Set();
    for (const e of document.querySelectorAll(MESSAGE_SEL)) {
      if (!visible(e) || srOnly(e, styleOf(e))) continue;
      if (e.parentElement && e.parentElement.closest(MESSAGE_SEL)) continue;
      const t = cut(clean(e.innerText), 200);
      if (t && !seen.has(t)) { seen.add(t); out.push(t); }
      if (out.length >= 10) break;
    }
    return out;
  };

  // ------------------------------------------------------------ the walk
  const observe = (args) => {
    fresh(); sheets = []; coveredCache.clear();
    collectHosts();
    const start = args.start || 1;
    const maxText = args.maxText || 4000;
    const sigOnly = !!args.signatureOnly;
    collectHoverPointer();
    const ownNames = new Map();
    const errors = [];
    const out = [];
    let outLen = 0;
    const els = [];
    const sig = [];
    const iframes = [];
    let lineStart = true;
    const push = (s) => { if (outLen < maxText * 6) { out.push(s); outLen += s.length; lineStart = s.endsWith('\n'); } };
    const newline = () => { if (!lineStart) push('\n'); };

    // Pass 1: which elements get a number. A generic clickable container (click handler, tabindex,
    // pointer cursor) that holds other numbered elements is dropped in favour of its contents.
    const chosen = new Set();
    const generic = new Set();
    const boxes = [];
    const scrollers = new Set();
    const collect = (node) => {
      if (node.nodeType !== Node.ELEMENT_NODE) return;
      const el = node;
      if (SKIP_TAGS.has(el.tagName)) return;
      if (el.tagName === 'SLOT') { const a = el.assignedNodes({ flatten: true }); (a.length ? a : Array.from(el.childNodes)).forEach(collect); return; }
      const style = styleOf(el);
      if (el.tagName === 'SELECT' && hiddenSelectProxy(el)) { chosen.add(el); return; }
      if (style.display === 'none' || srOnly(el, style)) return;
      if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') return;
      if (!sigOnly && style.position === 'absolute' && isSheet(el, style)) sheets.push(el);
      if (style.visibility === 'visible' && isInteractive(el, style) && hasBox(el)) {
        chosen.add(el);
        if (roleOf(el) === 'clickable' && !el.isContentEditable) generic.add(el);
      } else if (style.visibility === 'visible' && scrollOf(el, style)) boxes.push(el);
      for (const k of (el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes)) collect(k);
    };
    if (document.body) collect(document.body);
    // A container with a listener and no clickable inside, whose children are alike items (a list, a
    // sortable, delegated handlers): the items are what a user clicks or drags, so they get numbers.
    for (const el of Array.from(generic)) {
      const kids = Array.from(el.children).filter((k) => hasBox(k) && styleOf(k).display !== 'none');
      if (kids.length < 2 || !kids.every((k) => k.tagName === kids[0].tagName && textOf(k))) continue;
      if (el.querySelector(INNER_INTERACTIVE) || ownText(el, (a) => kids.includes(a))) continue;
      if (!(listened(el) || el.hasAttribute('onclick'))) continue;
      chosen.delete(el); generic.delete(el);
      for (const k of kids) if (!chosen.has(k)) { chosen.add(k); generic.add(k); }
    }
    numbered = chosen;
    const holdsChosen = new Set();
    for (const el of chosen) {
      for (let a = parentOf(el); a; a = parentOf(a)) {
        if (holdsChosen.has(a)) break;
        holdsChosen.add(a);
      }
    }
    // A clickable container with clickable children keeps a number only for its own short text
    // (a tree folder's label); the children always get their own numbers.
    const vpArea = window.innerWidth * window.innerHeight;
    for (const el of generic) {
      if (!holdsChosen.has(el)) continue;
      const own = ownText(el, (a) => chosen.has(a));
      const r = el.getBoundingClientRect();
      if (own && own.length <= 60 && r.width * r.height < 0.25 * vpArea) ownNames.set(el, own);
      else chosen.delete(el);
    }
    // An inner scroller gets a number of its own (scroll takes it), named only by its label: its
    // words are in the text after its number.
    for (const el of boxes) if (!chosen.has(el)) { chosen.add(el); scrollers.add(el); }

    // Pass 2: text in reading order with [n] where element n sits.
    // Each line starts with \u0001<document y>\u0002 so the caller can window long pages.
    const sy = window.scrollY;
    let pendingY = null;
    const mark = (el) => { if (!sigOnly && lineStart) { const r = el.getBoundingClientRect(); pendingY = Math.round(r.top + sy); } };
    const pushAt = (s) => {
      if (lineStart && pendingY !== null && s.trim()) { push(`\u0001${pendingY}\u0002`); lineStart = true; pendingY = null; }
      push(s);
    };
    const emit = (el) => {
      const box = scrollers.has(el);
      const role = box && roleOf(el) === 'clickable' ? 'scrollable' : roleOf(el);
      const name = box ? cut(byIds(el, 'aria-labelledby') || clean(el.getAttribute('aria-label')) || clean(el.title), 80) : ownNames.get(el) || nameOf(el);
      const index = start + els.length;
      const rec = { index, role, tag: el.localName, name, disabled: isDisabled(el) };
      els.push(rec);
      let row = '', rowSig = '';
      try {
        // The signature takes table rows' raw key words (the same in both passes, and cheap); a
        // card's heading is checked when acting.
        if (el.closest('tr, [role="row"]')) rowSig = rowKeyOf(el, true);
        if (!sigOnly) row = rowKeyOf(el);
      } catch (e) { errors.push(`element [${index}] (${describe(el)}): ${e && e.message ? e.message : e}`); }
      // The row key is part of what the page looks like: a re-sorted table or a recycled row changes it.
      sig.push(`${rec.tag}|${role}|${el.type || ''}|${name.slice(0, 40)}|${rec.disabled ? 'd' : ''}|${rowSig}`);
      if (sigOnly) return rec;
      mark(el);
      pushAt(`${lineStart || /\s$/.test(out[out.length - 1] || '') ? '' : ' '}[${index}]`);
      try {
        Object.assign(rec, stateOf(el));
        delete rec.blocker;
        rec.selector = selectorFor(el);
        rec.matches = verify(rec.selector).length;
        rec.field = fieldOf(el);
        rec.states = statesOf(el);
        if (hiddenSelectProxy(el)) rec.behind = true;
        const sc = scrollOf(el, styleOf(el));
        if (sc) rec.scroll = sc;
        if (isSubmitButton(el) && el.form) rec.submits = targetOf(el.form, el);
        if ((el.tagName === 'BUTTON' || el.tagName === 'INPUT') && el.type === 'reset') rec.resets = true;
        if (el.tagName === 'A' && el.hasAttribute('href')) rec.href = el.href;
        rec.captcha = !!el.closest(CAPTCHA_SEL);
        if (row && row !== name) rec.row = row;
        // What an action checks is still so (preflight's `expect`): the row key, and the name where
        // it does not depend on this observation (no numbered element inside, not a scroller).
        rec.ident = { row, name: identName(el, holdsChosen.has(el) || box || ownNames.has(el)) ? name : null };
      } catch (e) {
        errors.push(`element [${index}] (${describe(el)}): ${e && e.message ? e.message : e}`);
        rec.selector = rec.selector || selectorFor(el);
        rec.state = rec.state || 'interactable';
      }
      rec.el = el;
      return rec;
    };
    // A nested list item is indented by its depth (trees, outlines, nested menus keep their shape).
    const listDepth = (el) => { let d = 0; for (let p = el.parentElement; p && d < 6; p = p.parentElement) if (p.tagName === 'LI') d += 1; return d; };
    let inChosen = 0; // inside an element with a number: its name already says what its images say
    let textPushes = 0;
    const walk = (node) => {
      if (node.nodeType === Node.TEXT_NODE) {
        if (!sigOnly) {
          const p = node.parentElement;
          if (p && (!textShown(p) || covered(p) || (node.data.trim() && !readable(node)))) return;
          let t = node.data.replace(/\s+/g, ' ');
          // An icon font's ligature ("print", "delete_forever") is a picture, not words.
          if (t.trim() && p && Array.from(p.classList).some((c) => MATERIAL.test(c))) t = ` (icon: ${iconWords(t.trim())}) `;
          if (t.trim()) { textPushes += 1; if (p) mark(p); pushAt(lineStart ? t.replace(/^ /, '') : t); }
          // Whitespace between inline elements ("<b>May</b>&nbsp;<b>2016</b>") still parts the words.
          else if (t && !lineStart) push(' ');
        }
        return;
      }
      if (node.nodeType !== Node.ELEMENT_NODE) return;
      const el = node;
      if (SKIP_TAGS.has(el.tagName)) return;
      if (el.tagName === 'SLOT') { const a = el.assignedNodes({ flatten: true }); (a.length ? a : Array.from(el.childNodes)).forEach(walk); return; }
      const style = styleOf(el);
      if (el.tagName === 'SELECT' && chosen.has(el) && hiddenSelectProxy(el)) { emit(el); if (!sigOnly) push(' '); return; }
      if (style.display === 'none' || srOnly(el, style)) return;
      if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') {
        iframes.push(el);
        if (!sigOnly && visible(el)) { newline(); mark(el); pushAt(`\u0003${selectorFor(el)}\u0003`); newline(); }
        return;
      }
      // An image that says something (its alt text; alt="" is decoration) reads as words, as a screen
      // reader would: an icon beside an item ("meat", "vegan") is part of what the item says.
      if ((el.tagName === 'IMG' || el.getAttribute('role') === 'img') && !chosen.has(el) && !inChosen) {
        const said = el.tagName === 'IMG' ? el.getAttribute('alt') ?? el.getAttribute('title') : el.getAttribute('aria-label') || el.getAttribute('title');
        if (!sigOnly && said && clean(said) && visible(el)) {
          mark(el);
          pushAt(`${lineStart || /\s$/.test(out[out.length - 1] || '') ? '' : ' '}(image: ${cut(clean(said), 60)}) `);
        }
        return;
      }
      const block = BLOCK_DISPLAYS.test(style.display) || el.tagName === 'BR';
      // A definition list reads "term: value" on one line.
      const term = el.tagName === 'DT';
      if (block && el.tagName !== 'DD') newline();
      if (!sigOnly) {
        const h = /^H([1-6])$/.exec(el.tagName);
        if (block) mark(el);
        if (h) pushAt('#'.repeat(+h[1]) + ' ');
        else if (el.tagName === 'LI') pushAt('\u0004'.repeat(listDepth(el)) + '- ');  // \u0004: one level of indent
        else if (style.display === 'table-cell') { mark(el); pushAt(' | '); }
      }
      let descend = true;
      let ownRec = null;
      if (chosen.has(el)) {
        const rec = emit(el);
        ownRec = rec;
        // The element's own text stays in the line (a row keeps its ids and labels); fields don't.
        descend = !NATIVE_FIELD_TAGS.has(el.tagName);
        if (!sigOnly) push(' ');
      }
      if (descend) {
        const kids = el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes;
        const own = chosen.has(el) && !scrollers.has(el);
        const pushes = textPushes;
        if (own) inChosen += 1;
        for (const k of kids) walk(k);
        if (own) inChosen -= 1;
        // A control that shows no words (an icon, an image, a sprite) reads as what it pictures; an
        // empty box to write in pictures nothing (its name is listed with it).
        if (ownRec && !sigOnly && textPushes === pushes && ownRec.name && els[els.length - 1] === ownRec && !el.isContentEditable) {
          ownRec.icon = true;
          push(`(icon: ${cut(ownRec.name, 50)}) `);
        }
      }
      if (term) push(': ');
      else if (block) newline();
    };
    if (document.body) walk(document.body);

    const heads = Array.from(document.querySelectorAll('h1, h2, h3, [role="alert"], [role="dialog"], dialog[open]')).filter(visible).map((e) => cut(clean(e.innerText), 60));
    sig.push('H:' + heads.join('|'));
    if (sigOnly) return { signature: sig };

    // Obstacles
    const obstacles = [];
    const cap = captchaPresent();
    if (cap) obstacles.push({ kind: 'captcha', description: `CAPTCHA on the page (${cap})` });
    const overlays = new Set();
    for (const rec of els) {
      if (rec.state !== 'occluded') continue;
      const blocker = stateOf(rec.el).blocker;
      const ov = blocker && overlayOf(blocker);
      if (ov) overlays.add(ov);
    }
    document.querySelectorAll('dialog[open], [aria-modal="true"]').forEach((d) => { if (visible(d) && (d.matches(':modal') || d.getAttribute('aria-modal') === 'true')) overlays.add(d); });
    for (const ov of overlays) {
      const inside = els.filter((r) => deepContains(ov, r.el) && r.state === 'interactable');
      const close = inside.find((r) => CLOSE_RE.test(r.name) || CLOSE_LABEL_RE.test(r.el.getAttribute('aria-label') || '') || CLOSE_LABEL_RE.test(r.el.className || ''))
        || (inside.length === 1 ? inside[0] : null);
      const head = ov.querySelector('h1, h2, h3, h4, [role="heading"]');
      const dialog = ov.matches('[role="dialog"], [role="alertdialog"], dialog') ? ov : ov.querySelector('[role="dialog"], [role="alertdialog"], dialog');
      const label = clean(ov.getAttribute('aria-label')) || (dialog && (clean(dialog.getAttribute('aria-label')) || byIds(dialog, 'aria-labelledby')))
        || (head && clean(head.innerText)) || clean(ov.innerText);
      obstacles.push({ kind: 'modal', description: `modal "${cut(label, 60)}" covers the page`, index: close ? close.index : null });
    }
    const pw = els.find((r) => r.el.tagName === 'INPUT' && r.el.type === 'password');
    if (pw) {
      const form = pw.el.form;
      const btn = form ? els.find((r) => r.el.form === form && isSubmitButton(r.el)) : null;
      const fields = els.filter((r) => form && r.el.form === form && r.field && r.field.type !== 'hidden' && !isSubmitButton(r.el)).map((r) => `[${r.index}]`);
      obstacles.push({ kind: 'login_form', description: `login form: fields ${fields.join(' ') || '[' + pw.index + ']'}${btn ? `, submit [${btn.index}]` : ''}`, index: btn ? btn.index : pw.index });
    }

    // Twins (alike controls with no row key: "Approve" under each of several paragraphs, "Delete" in
    // each list item) are told apart by what their own block shows, checked when acting.
    const twins = new Map();
    for (const rec of els) {
      if (!rec.ident || rec.ident.row || !rec.el || !rec.name) continue;
      const k = `${rec.role}|${rec.name}`;
      if (!twins.has(k)) twins.set(k, []);
      twins.get(k).push(rec);
    }
    for (const group of twins.values()) {
      if (group.length < 2) continue;
      for (const rec of group) {
        try {
          const ctx = twinContextOf(rec.el, group.map((r) => r.el));
          if (ctx) rec.ident.ctx = ctx;
        } catch (e) { /* the check is a safeguard; without it the name and row checks still run */ }
      }
    }
    const iframeInfo = iframes.filter(visible).map((f) => ({ selector: selectorFor(f), ...stripBlocker(stateOf(f)), src: f.src || '' }));
    for (const rec of els) delete rec.el;
    for (const rec of els) if (!rec.selector) rec.selector = '';
    return {
      url: location.href,
      title: document.title,
      text: out.join(''),
      elements: els,
      errors,
      signature: sig,
      obstacles,
      messages: messages(),
      iframes: iframeInfo,
      scroll: { y: Math.round(window.scrollY), height: Math.round(document.documentElement.scrollHeight), viewport: window.innerHeight },
    };
  };
  const stripBlocker = (s) => { const { blocker, ...rest } = s; return rest; };

  // ------------------------------------------------------------ act-time helpers
  // A name an action can check again later: not one shaped by the observation (numbered elements
  // left out, a scroller's label) nor one that is the element's own editable content.
  const identName = (el, shaped) => !shaped && !el.isContentEditable;
  // What an element's block shows besides the element itself (the "Invoice INV-101 from Contoso —
  // 1,200.00 EUR" a twin "Approve" sits in), up to 300 characters: items that differ only after
  // their first words ("Invoice …" in bold on each) are told apart too.
  const contextOf = (block, el) => cut(seenText(block, (k) => k === el), 300);
  // Two texts quoted from a little before where they first differ (a long item's tail).
  const quoteApart = (a, b) => {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    const from = i > 40 ? a.lastIndexOf(' ', i - 20) + 1 : 0;
    return [a, b].map((t) => JSON.stringify((from ? '…' : '') + cut(t.slice(from), 80)));
  };
  const ancestorAt = (el, depth) => {
    let a = el;
    for (let k = 0; k < depth && a; k++) a = a.parentElement;
    return a && a !== document.body && a !== document.documentElement ? a : null;
  };
  // The smallest block around ``el`` that holds none of its twins, and what it shows.
  const twinContextOf = (el, group) => {
    for (let depth = 1; depth <= 6; depth++) {
      const a = ancestorAt(el, depth);
      if (!a) return null;
      if (group.some((o) => o !== el && a.contains(o))) return null;
      const words = contextOf(a, el);
      if (words) return { depth, words };
    }
    return null;
  };
  const checkedOf = (el) => {
    const t = el.tagName === 'LABEL' && el.control ? el.control : el;
    if (t.tagName === 'INPUT' && (t.type === 'checkbox' || t.type === 'radio')) return t.checked;
    const a = t.getAttribute('aria-checked') ?? t.getAttribute('aria-pressed') ?? t.getAttribute('aria-selected');
    return a === null ? null : a === 'true';
  };
  // Why the element at this selector is not the one the model was shown ('' when it is): another
  // row key (a re-sorted table, a recycled row), or another name.
  const staleOf = (el, expect) => {
    if (!expect) return '';
    const row = rowKeyOf(el);
    if (row !== (expect.row || '')) return `its row is now ${row ? JSON.stringify(row) : 'none'} (was ${expect.row ? JSON.stringify(expect.row) : 'none'})`;
    if (expect.name !== null && expect.name !== undefined) {
      const name = nameOf(el);
      if (name !== expect.name) return `it is now named ${JSON.stringify(cut(name, 60))} (was ${JSON.stringify(cut(expect.name, 60))})`;
    }
    if (expect.ctx) {
      const a = ancestorAt(el, expect.ctx.depth);
      const words = a ? contextOf(a, el) : '';
      if (words !== expect.ctx.words) {
        const [now, was] = quoteApart(words, expect.ctx.words);
        return `it now sits by ${now} (was by ${was})`;
      }
    }
    return '';
  };
  const identity = (el, args) => {
    fresh();
    return el.isConnected ? staleOf(el, args.expect) : '';
  };
  const preflight = (el, args) => {
    fresh();
    if (!el.isConnected) return { state: 'gone' };
    const stale = staleOf(el, args.expect);
    if (stale) return { state: 'stale', stale };
    if (typeof el.scrollIntoViewIfNeeded === 'function') el.scrollIntoViewIfNeeded(true); else el.scrollIntoView({ block: 'center' });
    let st = stateOf(el);
    if (st.state === 'occluded') {
      // "In view" can still be under a sticky header or a fixed cookie bar, which stay put while the
      // page scrolls: a person scrolls the element to the middle and looks again. A cover that
      // scrolls with it (a pane laid over it, a modal over the whole view) still covers it then.
      el.scrollIntoView({ block: 'center', inline: 'center' });
      st = stateOf(el);
    }
    const s = stripBlocker(st);
    s.captcha = !!el.closest(CAPTCHA_SEL);
    s.submission = args.kind ? submissionFor(el, args.kind, args.key || '') : null;
    s.editable = NATIVE_FIELD_TAGS.has(el.tagName) || el.isContentEditable;
    s.checked = checkedOf(el);
    s.url = location.href;
    const t = el.tagName === 'LABEL' && el.control ? el.control : el;
    s.readonly = isReadOnly(t);
    s.target = { name: t.getAttribute('name') || t.id || '', type: t.type || roleOf(t), login: !!(t.form && isLoginForm(t.form)), label: cut(nameOf(t), 40) };
    return s;
  };
  const activeSubmission = (args) => {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    if (!a || a === document.body) return null;
    return submissionFor(a, 'press', args.key || '');
  };
  // Settled = no DOM mutation for the quiet time, no layout change of the body, fonts loaded, the
  // images on screen loaded (CSS content images too), and no finite animation or transition running;
  // bounded (a page that never settles is read as it is then). A signal, not a fixed delay.
  // BrowserSession._settle keeps the clock and the bound in Python and polls settleProbe, which runs
  // here, in the isolated world: the page cannot stall it by replacing requestAnimationFrame,
  // setTimeout or MutationObserver, nor fake it with its own performance.now or getComputedStyle.
  const busy = () => {
    if (document.fonts && document.fonts.status === 'loading') return 'fonts';
    const vh = window.innerHeight;
    for (const img of Array.from(document.images).slice(0, 200)) {
      if (img.complete || img.loading === 'lazy') continue;
      const r = img.getBoundingClientRect();
      if (r.bottom >= 0 && r.top <= vh) return 'images';
    }
    // an element replaced by a CSS image (`content: url(star.png)`) has no width until it is decoded,
    // even from the cache: such an icon is not laid out yet
    const all = document.body ? document.body.getElementsByTagName('*') : [];
    for (let i = 0; i < all.length && i < 3000; i++) {
      const el = all[i];
      if (el.childElementCount || el.tagName === 'IMG') continue;
      const content = getComputedStyle(el).content;
      if (!content || !content.startsWith('url(')) continue;
      if (!el.getClientRects().length) continue; // not rendered (in a hidden pane): nothing to wait for
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.bottom >= 0 && r.top <= vh) return 'images';
    }
    if (document.getAnimations) {
      for (const a of document.getAnimations()) {
        if (a.playState !== 'running') continue;
        const t = a.effect && a.effect.getComputedTiming ? a.effect.getComputedTiming() : null;
        if (t && Number.isFinite(t.endTime) && t.endTime <= 5000) return 'animations';
      }
    }
    return '';
  };
  const SETTLE = Symbol.for('taskcrew.settle');
  const layoutOf = () => { const b = document.body; return b ? `${b.scrollWidth}x${b.scrollHeight}` : ''; };
  // One synchronous look: how long since the latest DOM mutation or change of the body's size (by
  // this world's own clock), the body's size, and (when args.check and quiet that long) what still
  // loads or moves. This world lives as long as the document, so the first look installs, once, an
  // observer that records the time of each mutation; until then nothing counts as quiet.
  const watchMutations = (now) => {
    const s = { last: now, layout: layoutOf() };
    new MutationObserver(() => { s.last = performance.now(); })
      .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    Object.defineProperty(window, SETTLE, { value: s });
    return s;
  };
  const settleProbe = (args) => {
    const now = performance.now();
    const s = window[SETTLE] || watchMutations(now);
    const layout = layoutOf();
    if (layout !== s.layout) { s.layout = layout; s.last = now; }
    const msSinceMutation = Math.floor(now - s.last);
    return { msSinceMutation, layout, busy: args.check && msSinceMutation >= args.quietMs ? busy() : '' };
  };
  const scrollBy = (el, args) => {
    let target = el;
    while (target && target !== document.body && target !== document.documentElement) {
      const s = getComputedStyle(target);
      if (/(auto|scroll)/.test(s.overflowY) && target.scrollHeight > target.clientHeight) break;
      target = parentOf(target);
    }
    if (!target || target === document.body || target === document.documentElement) return scrollPage(args);
    target.scrollBy(0, args.dy * target.clientHeight);
    return { where: target === el ? '' : describe(target), ...scrollOf(target, getComputedStyle(target)) };
  };
  // Scroll the page; a page whose document does not scroll (an app shell) scrolls its largest inner
  // scroller instead, the one a wheel over the middle of the screen would move.
  const scrollPage = (args) => {
    const se = document.scrollingElement || document.documentElement;
    if (se.scrollHeight - window.innerHeight > 8) { window.scrollBy(0, args.dy * window.innerHeight); return { where: 'page' }; }
    let best = null, area = 0;
    for (const e of document.querySelectorAll('*')) {
      if (e.scrollHeight - e.clientHeight <= 8 || !scrollOf(e, getComputedStyle(e))) continue;
      const r = e.getBoundingClientRect();
      const a = Math.max(0, Math.min(r.right, window.innerWidth) - Math.max(r.left, 0)) * Math.max(0, Math.min(r.bottom, window.innerHeight) - Math.max(r.top, 0));
      if (a > area) { best = e; area = a; }
    }
    if (!best) return { where: 'page' };
    best.scrollBy(0, args.dy * best.clientHeight);
    return { where: describe(best), ...scrollOf(best, getComputedStyle(best)) };
  };
  const frameInfo = (el) => {
    fresh();
    collectHosts();
    return { selector: selectorFor(el), visible: visible(el), ...stripBlocker(stateOf(el)) };
  };
  const pickOption = (el, args) => {
    if (el.tagName !== 'SELECT') return { error: 'not a select' };
    const o = args.option;
    const opts = Array.from(el.options);
    const m = opts.find((x) => clean(x.label) === o || clean(x.text) === o) || opts.find((x) => x.value === o)
      || opts.find((x) => clean(x.label).toLowerCase() === o.toLowerCase().trim());
    return m ? { value: m.value } : { options: opts.map((x) => clean(x.label)).slice(0, 30) };
  };
  // wait for_text: in the isolated world, where innerText and String.prototype.includes are the
  // browser's own (the page's overrides cannot fake the words, nor hide them)
  const textVisible = (args) => !!(document.body && document.body.innerText.includes(args.text));
  // `back` (is this still the document it marked? did its text change?) and the typing read-back (how
  // often does the page now show the typed text?), read here: the page cannot fake innerText, nor set
  // or clear a mark on this world's window
  const BACK = Symbol.for('taskcrew.back');
  const pageText = (args) => {
    const marked = !!window[BACK];
    if (args.mark) window[BACK] = 1;
    const text = document.body ? document.body.innerText : '';
    if (args.count) return { marked, text: '', count: text.split(args.count).length - 1 };
    return { marked, text, count: 0 };
  };

  return { observe, preflight, identity, activeSubmission, settleProbe, scrollBy, scrollPage, textVisible, pageText, frameInfo, checkedOf, pickOption };
})()
