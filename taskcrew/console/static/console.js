// Live progress for a running job: server-sent events append to the page. Text is set with
// textContent only (never innerHTML): run output is untrusted.
"use strict";
(function () {
  const list = document.getElementById("job-events");
  if (!list || !list.dataset.live) return;
  const timeline = document.getElementById("run-timeline");
  const badge = document.getElementById("job-status");
  const reason = document.getElementById("job-reason");
  const note = document.getElementById("job-note");
  const source = new EventSource(list.dataset.live);
  function item(parent, when, title, detail, cls) {
    const li = document.createElement("li");
    if (cls) li.className = cls;
    const t = document.createElement("time");
    t.textContent = (when || "").slice(0, 19).replace("T", " ");
    const s = document.createElement("strong");
    s.textContent = title;
    li.append(t, " ", s);
    if (detail) {
      const d = document.createElement("div");
      d.className = "detail";
      d.textContent = detail;
      li.append(d);
    }
    parent.append(li);
  }
  // The stream first sends the whole list again: it is built aside and takes the drawn list's place
  // at once when it holds as many lines, so the page never shows a list half-filled; then it appends.
  function follower(target) {
    const drawn = target ? target.querySelectorAll("li").length : 0;
    const aside = document.createDocumentFragment();
    let seen = 0;
    return function (when, title, detail, cls) {
      if (!target) return;
      if (target.dataset.seeded === "done") { item(target, when, title, detail, cls); return; }
      item(aside, when, title, detail, cls);
      seen += 1;
      if (seen >= drawn) { target.replaceChildren(aside); target.dataset.seeded = "done"; }
    };
  }
  const history = follower(list);
  const progress = follower(timeline);
  source.addEventListener("event", (e) => {
    const d = JSON.parse(e.data);
    const by = d.by !== undefined ? d.by : (d.actor ? "by " + d.actor : "");
    history(d.at, d.words || d.kind, d.detail + (by ? " " + by : ""), "");
  });
  source.addEventListener("timeline", (e) => {
    const d = JSON.parse(e.data);
    progress(d.at, d.title, d.detail, d.ok === true ? "ok" : d.ok === false ? "fail" : "");
  });
  source.addEventListener("status", (e) => {
    const d = JSON.parse(e.data);
    badge.textContent = d.status + (d.outcome ? ": " + d.outcome : "");
    badge.className = "badge " + d.status + (d.unsigned ? " unsigned" : "");
    if (reason) {  // only a reason that describes the job's state now: hidden while it runs
      reason.textContent = d.reason || "";
      reason.hidden = !d.reason;
      if (reason.previousElementSibling) reason.previousElementSibling.hidden = !d.reason;
    }
    if (note) { note.textContent = d.note || ""; note.hidden = !d.note; }
  });
  // Finished: reload once, so the page shows the final state and the right buttons (retry, not cancel);
  // not when the person has just sent a form (cancel, retry): a reload would race their answer page
  // and lose its message.
  let leaving = false;
  document.addEventListener("submit", () => { leaving = true; source.close(); });
  source.addEventListener("done", () => { source.close(); if (!leaving) window.location.reload(); });
})();

// The worklist's "select all" for bulk approval: the header checkbox ticks (or clears) every item
// the page offers (the name=ids checkboxes); it shows "some" when only some are ticked. Served
// hidden: without scripts the page works as before, item by item.
(function () {
  const all = document.getElementById("select-all");
  const form = document.getElementById("bulk");
  if (!all || !form) return;
  const boxes = Array.from(form.querySelectorAll("input[type=checkbox][name=ids]"));
  if (!boxes.length) return;
  function sync() {
    const ticked = boxes.filter((b) => b.checked).length;
    all.checked = ticked === boxes.length;
    all.indeterminate = ticked > 0 && ticked < boxes.length;
  }
  all.addEventListener("change", () => {
    const tick = all.checked;
    boxes.forEach((b) => { b.checked = tick; });
    sync();
  });
  boxes.forEach((b) => b.addEventListener("change", sync));
  sync();  // a page restored from the back/forward cache keeps its ticks
  all.hidden = false;
})();
