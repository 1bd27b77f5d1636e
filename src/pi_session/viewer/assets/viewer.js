(function () {
  "use strict";
  // Shows the path root -> clicked entry. The entries on the path shown at
  // load are elements in #path; every other entry's article, rendered and
  // escaped by the exporter, waits in a comment "<i> <article...>" inside
  // #store and is parsed into an inert <template> when first shown. Nothing
  // here builds HTML from session text or reads it: it moves elements and
  // reads our numeric data-i/data-p.
  //
  // A path is shown as a window of at most WINDOW entries [lo, hi), with
  // buttons for the entries before and after it. The page opens at the
  // start of the path (as pi's export opens at the top); a click on a row
  // or a deep link #e<i> shows the path ending at that entry, scrolled to
  // it, with the sidebar scrolled to its row. "Start" and "End" jump to
  // either end of the path.
  var WINDOW = 200;
  var pathBox = document.getElementById("path");
  var info = document.getElementById("pathinfo");
  var treeBox = document.getElementById("treebox");
  var nav = document.getElementById("tree");
  var jump = document.getElementById("jump");
  var showAll = document.getElementById("showall");
  var rows = document.querySelectorAll("#tree a.row");
  var parent = new Int32Array(rows.length);
  var live = new Map();
  var onPath = [];
  var selected = -1;
  var narrow = window.matchMedia("(max-width: 800px)");
  rows.forEach(function (row, i) {
    parent[i] = parseInt(row.getAttribute("data-p"), 10);
  });
  pathBox.querySelectorAll("article").forEach(function (el) {
    live.set(parseInt(el.getAttribute("data-i"), 10), el);
  });
  var stored = new Map();
  document.getElementById("store").childNodes.forEach(function (c) {
    if (c.nodeType === Node.COMMENT_NODE) stored.set(parseInt(c.data, 10), c);
  });
  function node(i) {
    var el = live.get(i);
    if (!el) {
      var data = stored.get(i).data;
      var t = document.createElement("template");
      t.innerHTML = data.slice(data.indexOf(" ") + 1);
      el = t.content.firstElementChild;
      live.set(i, el);
    }
    return el;
  }
  function button(cls, text, onClick) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "more " + cls;
    b.textContent = text;
    b.addEventListener("click", onClick);
    return b;
  }
  function render(lo, hi) {
    var ids = onPath;
    var frag = document.createDocumentFragment();
    if (lo > 0) {
      frag.appendChild(button("earlier", "Show " + Math.min(lo, WINDOW) + " earlier entries (" + lo + " hidden)", function () {
        var anchor = pathBox.querySelector("article");
        var before = anchor ? anchor.getBoundingClientRect().top : 0;
        render(Math.max(0, lo - WINDOW), hi);
        if (anchor) window.scrollBy(0, anchor.getBoundingClientRect().top - before);
      }));
    }
    for (var k = lo; k < hi; k++) frag.appendChild(node(ids[k]));
    if (hi < ids.length) {
      frag.appendChild(button("later", "Show " + Math.min(ids.length - hi, WINDOW) + " later entries (" + (ids.length - hi) + " hidden)", function () {
        render(lo, Math.min(ids.length, hi + WINDOW));
      }));
    }
    pathBox.replaceChildren(frag);
  }
  function toStart() {
    render(0, Math.min(onPath.length, WINDOW));
    window.scrollTo(0, 0);
  }
  function toEnd() {
    render(Math.max(0, onPath.length - WINDOW), onPath.length);
    node(selected).scrollIntoView({ block: "start" });
  }
  function rowIntoView(i) {
    if (narrow.matches) return; // the tree is a folded panel there
    nav.scrollTop += rows[i].getBoundingClientRect().top - nav.getBoundingClientRect().top - nav.clientHeight / 2;
  }
  // at: "start" (the path from its first entry, page at the top) or "end"
  // (the path up to the entry, scrolled to it)
  function show(i, at) {
    var ids = [];
    for (var j = i, guard = 0; j >= 0 && guard <= rows.length; j = parent[j], guard++) ids.push(j);
    ids.reverse();
    onPath.forEach(function (k) { rows[k].classList.remove("on", "sel"); });
    ids.forEach(function (k) { rows[k].classList.add("on"); });
    rows[i].classList.add("sel");
    // an entry the conversation view hides shows with every entry
    if (showAll && rows[i].classList.contains("aux")) showAll.checked = true;
    if (selected >= 0 && live.has(selected)) live.get(selected).classList.remove("sel");
    onPath = ids;
    selected = i;
    node(i).classList.add("sel");
    info.textContent = ids.length + " entries from the root to the selected one";
    if (jump) jump.hidden = false;
    if (at === "start") toStart();
    else toEnd();
  }
  function fromHash() {
    var m = /^#e(\d+)$/.exec(location.hash);
    return m && +m[1] < rows.length ? +m[1] : -1;
  }
  nav.addEventListener("click", function (ev) {
    var row = ev.target.closest("a.row");
    if (!row) return;
    ev.preventDefault();
    show(parseInt(row.getAttribute("data-i"), 10), "end");
    history.replaceState(null, "", "#e" + row.getAttribute("data-i"));
    if (narrow.matches && treeBox) treeBox.open = false;
  });
  document.getElementById("tostart").addEventListener("click", toStart);
  document.getElementById("toend").addEventListener("click", function () {
    if (selected >= 0) toEnd();
  });
  window.addEventListener("hashchange", function () {
    var i = fromHash();
    if (i < 0) return;
    show(i, "end");
    rowIntoView(i);
  });
  if (narrow.matches && treeBox) treeBox.open = false;
  var start = parseInt(document.body.getAttribute("data-start"), 10);
  var linked = fromHash();
  if (linked >= 0) {
    show(linked, "end");
    rowIntoView(linked);
  } else if (start >= 0 && start < rows.length) {
    show(start, "start");
    rowIntoView(start);
  }
})();
