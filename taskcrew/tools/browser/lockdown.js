// Installed in every frame of every page before the page's own scripts (context.add_init_script).
// Defence in depth behind the network guard and the gatekeeper proxy:
// - WebRTC is removed: a peer connection can carry data to a TURN/STUN server outside any route.
// - A click or Enter/Space with a modifier (Shift, Ctrl, Meta, Alt) or a middle click would make the
//   browser open a new window by itself; such activations are cancelled (the agent never needs them).
(() => {
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCRtpSender',
    'RTCRtpReceiver', 'RTCIceTransport', 'RTCSctpTransport', 'RTCDtlsTransport']) {
    try {
      Object.defineProperty(window, name, { value: undefined, configurable: false, writable: false });
    } catch (e) { /* already locked */ }
  }
  const modified = (e) => e.shiftKey || e.ctrlKey || e.metaKey || e.altKey;
  const stop = (e) => { e.preventDefault(); e.stopImmediatePropagation(); };
  window.addEventListener('click', (e) => { if (modified(e) || e.button !== 0) stop(e); }, true);
  window.addEventListener('auxclick', stop, true);
  const activating = (e) => (e.key === 'Enter' || e.key === ' ' || e.key === 'Spacebar') && modified(e);
  for (const type of ['keydown', 'keypress', 'keyup']) {
    window.addEventListener(type, (e) => { if (activating(e)) stop(e); }, true);
  }
})();
