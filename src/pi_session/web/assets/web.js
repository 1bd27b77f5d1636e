// pi-session serve: keys, filter, live appends and actions. Never builds
// HTML from session text: rows and entries arrive rendered (escaped) by
// the server; everything else is set with textContent.
(function () {
  "use strict";
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  var items = function () {
    return Array.prototype.filter.call(document.querySelectorAll(".item"), function (el) { return !el.hidden && el.offsetParent !== null; });
  };
  var current = -1;
  function select(n) {
    var all = items();
    if (!all.length) return;
    n = Math.max(0, Math.min(all.length - 1, n));
    all.forEach(function (el) { el.classList.remove("cur"); });
    current = n;
    all[n].classList.add("cur");
    all[n].scrollIntoView({ block: "nearest" });
  }
  function open() {
    var all = items();
    var el = all[current];
    if (!el) return;
    var href = el.getAttribute("data-href") || el.getAttribute("href");
    if (href) window.location.href = href;
  }
  var keys = document.getElementById("keys");
  function typing(e) {
    var t = e.target;
    return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable);
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (typing(e)) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    if (e.key === "j") { select(current + 1); e.preventDefault(); }
    else if (e.key === "k") { select(current < 0 ? 0 : current - 1); e.preventDefault(); }
    else if (e.key === "Enter" && current >= 0) { open(); e.preventDefault(); }
    else if (e.key === "/") { var q = document.getElementById("q"); if (q) { q.focus(); q.select(); } e.preventDefault(); }
    else if (e.key === "?") { if (keys && !keys.open) keys.showModal(); e.preventDefault(); }
  });
  var help = document.getElementById("keyshelp");
  if (help && keys) help.addEventListener("click", function () { keys.showModal(); });

  // sessions: filter as you type
  var filter = document.getElementById("filter");
  if (filter) {
    var count = document.getElementById("count");
    var rows = Array.prototype.slice.call(document.querySelectorAll("#sessions tbody tr"));
    var run = function () {
      var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (tr) {
        var hay = tr.getAttribute("data-text") || "";
        var ok = words.every(function (w) { return hay.indexOf(w) >= 0; });
        tr.hidden = !ok;
        if (ok) shown++;
      });
      if (count) count.textContent = shown + (shown === 1 ? " session" : " sessions");
      current = -1;
    };
    filter.addEventListener("input", run);
    filter.form.addEventListener("submit", function (e) { e.preventDefault(); run(); });
    var initial = new URLSearchParams(window.location.search).get("filter");
    if (initial) { filter.value = initial; run(); }
    // activity: the newest sessions, looked at every few seconds; a session
    // written since moves to the top, marked, and a new one is added
    var tbody = document.querySelector("#sessions tbody");
    var byId = {};
    rows.forEach(function (tr) { var sub = tr.querySelector(".sub"); if (sub) byId[sub.textContent] = tr; });
    var cell = function (cls, text) { var td = document.createElement("td"); td.className = cls; td.textContent = text; return td; };
    var poll = function () {
      fetch("/api/v1/sessions?limit=50", { credentials: "same-origin" }).then(function (r) { return r.ok ? r.json() : null; }).then(function (j) {
        if (!j) return;
        j.sessions.slice().reverse().forEach(function (s) {
          var when = (s.modified || "").slice(0, 16).replace("T", " ");
          var tr = byId[s.id];
          if (tr) {
            var time = tr.querySelector("time");
            if (time && time.getAttribute("datetime") === s.modified) return;
          } else {
            tr = document.createElement("tr");
            tr.className = "item";
            var title = cell("title", "");
            var a = document.createElement("a");
            a.href = "/s/" + encodeURIComponent(s.id);
            a.textContent = (s.name || s.firstMessage || "(no messages)").slice(0, 200);
            var sub = document.createElement("div"); sub.className = "sub"; sub.textContent = s.id;
            title.appendChild(a); title.appendChild(sub); tr.appendChild(title);
            tr.appendChild(cell("cwd", s.cwd || ""));
            tr.appendChild(cell("num", String(s.messageCount)));
            var whenCell = cell("when", ""); whenCell.appendChild(document.createElement("time")); tr.appendChild(whenCell);
            tr.setAttribute("data-href", a.getAttribute("href"));
            tr.setAttribute("data-text", [s.id, s.name, s.cwd, s.firstMessage].join(" ").toLowerCase());
            byId[s.id] = tr;
            rows.push(tr);
          }
          var t = tr.querySelector("time");
          t.setAttribute("datetime", s.modified || "");
          t.textContent = when;
          var num = tr.querySelector("td.num"); if (num) num.textContent = String(s.messageCount);
          tr.classList.add("active");
          tbody.insertBefore(tr, tbody.firstChild);
        });
      }).catch(function () {});
    };
    window.setInterval(poll, 3000);
  }

  // a session page
  var session = document.getElementById("session");
  if (!session) return;
  var sid = session.getAttribute("data-session");
  var api = "/api/v1/sessions/" + encodeURIComponent(sid);
  var selected = document.querySelector("#rows a.row.sel");
  if (selected) {
    selected.scrollIntoView({ block: "center" });
    // opened at an entry (a search hit, a click): its article in view
    var article = document.getElementById("e" + selected.getAttribute("data-i"));
    if (article && /[?&]at=/.test(window.location.search)) article.scrollIntoView({ block: "start" });
  }
  var result = document.getElementById("actresult");
  var leafNow = null;

  function parse(html) {
    var t = document.createElement("template");
    t.innerHTML = html; // server-rendered, every session string escaped; the CSP runs no inline script
    return t.content;
  }
  var live = document.getElementById("live");
  if (window.EventSource) {
    var source = new EventSource(api + "/events");
    source.addEventListener("hello", function () { if (live) live.textContent = "live"; });
    source.addEventListener("entries", function (ev) {
      var data = JSON.parse(ev.data);
      leafNow = data.leafId;
      var rowsBox = document.getElementById("rows");
      var path = document.getElementById("path");
      var count = document.getElementById("entrycount");
      if (count) count.textContent = Number(data.entryCount).toLocaleString("en-US");
      data.entries.forEach(function (r) {
        if (rowsBox && !document.getElementById("nextrows")) {
          var a = document.createElement("a");
          a.className = "row item new " + r.css;
          a.href = "/s/" + encodeURIComponent(sid) + "?at=" + encodeURIComponent(r.id);
          a.setAttribute("data-id", r.id);
          var g = document.createElement("span"); g.className = "g"; g.textContent = r.prefix; a.appendChild(g);
          var k = document.createElement("span"); k.className = "k"; k.textContent = r.kind; a.appendChild(k);
          var p = document.createElement("span"); p.className = "p"; p.textContent = r.preview; a.appendChild(p);
          rowsBox.appendChild(a);
        }
        // an entry continuing the shown path is appended to it
        var last = path && path.lastElementChild;
        var lastId = last ? (last.querySelector(".eid") || {}).textContent : null;
        if (path && (r.parentId === lastId || (!lastId && !r.parentId))) {
          var frag = parse(r.html);
          var art = frag.firstElementChild;
          if (art) { art.classList.add("new"); art.removeAttribute("id"); path.appendChild(art); }
        }
      });
      if (live) live.textContent = "live · " + data.entries.length + " new";
    });
    source.onerror = function () { if (live) live.textContent = "reconnecting…"; };
  }

  Array.prototype.forEach.call(document.querySelectorAll("form.act"), function (form) {
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var question = form.getAttribute("data-confirm");
      if (question && !window.confirm(question)) return;
      var body = {};
      Array.prototype.forEach.call(form.elements, function (el) {
        if (!el.name) return;
        body[el.name] = el.type === "checkbox" ? el.checked : el.value;
      });
      var shownLeaf = session.getAttribute("data-leaf");
      if (shownLeaf) body.expectLeaf = leafNow || shownLeaf;
      fetch(api + "/" + form.getAttribute("data-action"), {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify(body),
        credentials: "same-origin"
      }).then(function (r) {
        return r.json().then(function (j) { return [r.ok, j]; });
      }).then(function (res) {
        if (!result) return;
        result.textContent = res[0] ? "done: " + JSON.stringify(res[1]) : "refused: " + res[1].error.message;
        result.className = res[0] ? "muted" : "error";
        if (res[0] && form.getAttribute("data-action") !== "label") window.setTimeout(function () { window.location.reload(); }, 600);
      });
    });
  });
})();
