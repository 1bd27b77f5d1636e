(function () {
  "use strict";
  // Shows the path root -> clicked entry. The entries on the path shown at
  // load are elements in #path; every other entry's article, rendered and
  // escaped by the exporter, waits in a comment "<i> <article...>" inside
  // #store and is parsed into an inert <template> when first shown. Nothing
  // here builds HTML from session text or reads it: it moves elements and
  // reads our numeric data-i/data-p.
  var WINDOW = 200;
  var pathBox = document.getElementById("path");
  var info = document.getElementById("pathinfo");
  var treeBox = document.getElementById("treebox");
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
  function render(ids, start) {
    var frag = document.createDocumentFragment();
    if (start > 0) {
      var more = document.createElement("button");
      more.type = "button";
      more.className = "more";
      more.textContent = "Show " + Math.min(start, WINDOW) + " earlier entries (" + start + " hidden)";
      more.addEventListener("click", function () {
        var anchor = pathBox.querySelector("article");
        var before = anchor ? anchor.getBoundingClientRect().top : 0;
        render(ids, Math.max(0, start - WINDOW));
        if (anchor) window.scrollBy(0, anchor.getBoundingClientRect().top - before);
      });
      frag.appendChild(more);
    }
    for (var k = start; k < ids.length; k++) frag.appendChild(node(ids[k]));
    pathBox.replaceChildren(frag);
  }
  function show(i, scroll) {
    var ids = [];
    for (var j = i, guard = 0; j >= 0 && guard <= rows.length; j = parent[j], guard++) ids.push(j);
    ids.reverse();
    onPath.forEach(function (k) { rows[k].classList.remove("on", "sel"); });
    ids.forEach(function (k) { rows[k].classList.add("on"); });
    rows[i].classList.add("sel");
    if (selected >= 0 && live.has(selected)) live.get(selected).classList.remove("sel");
    onPath = ids;
    selected = i;
    render(ids, Math.max(0, ids.length - WINDOW));
    var el = node(i);
    el.classList.add("sel");
    info.textContent = ids.length + " entries from the root to the selected one";
    if (scroll) el.scrollIntoView({ block: "start" });
  }
  document.getElementById("tree").addEventListener("click", function (ev) {
    var row = ev.target.closest("a.row");
    if (!row) return;
    ev.preventDefault();
    show(parseInt(row.getAttribute("data-i"), 10), true);
    history.replaceState(null, "", "#e" + row.getAttribute("data-i"));
    if (narrow.matches && treeBox) treeBox.open = false;
  });
  var start = parseInt(document.body.getAttribute("data-start"), 10);
  var m = /^#e(\d+)$/.exec(location.hash);
  if (m && +m[1] < rows.length) start = +m[1];
  if (narrow.matches && treeBox) treeBox.open = false;
  if (start >= 0 && start < rows.length) {
    show(start, !!m);
    var nav = document.getElementById("tree");
    if (!m) nav.scrollTop += rows[start].getBoundingClientRect().top - nav.getBoundingClientRect().top - nav.clientHeight / 2;
  }
})();
