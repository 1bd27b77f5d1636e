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
  var moreRows = null; // the sessions page: loads its next page (a promise), or null when all are there
  function select(n) {
    var all = items();
    if (!all.length) return;
    if (moreRows && n >= all.length - 5) moreRows();
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
    if (e.key === "j") {
      var waiting = moreRows && current >= items().length - 1 ? moreRows() : null;
      if (waiting) waiting.then(function () { select(current + 1); });
      else select(current + 1);
      e.preventDefault();
    }
    else if (e.key === "k") { select(current < 0 ? 0 : current - 1); e.preventDefault(); }
    else if (e.key === "Enter" && current >= 0) { open(); e.preventDefault(); }
    else if (e.key === "/") { var q = document.getElementById("q"); if (q) { q.focus(); q.select(); } e.preventDefault(); }
    else if (e.key === "?") { if (keys && !keys.open) keys.showModal(); e.preventDefault(); }
  });
  var help = document.getElementById("keyshelp");
  if (help && keys) help.addEventListener("click", function () { keys.showModal(); });

  // sessions: the server sends the newest page; the rest arrives through
  // the paged API as the list scrolls (or j walks past its end), and the
  // filter asks the server, so it finds any session of the store
  var filter = document.getElementById("filter");
  var table = document.getElementById("sessions");
  if (filter && table) {
    var count = document.getElementById("count");
    var project = document.getElementById("project");
    var pager = document.getElementById("sessionpager");
    var tbody = table.querySelector("tbody");
    var byId = {};
    var nextOffset = Number(table.getAttribute("data-next")) || 0;
    var total = Number(table.getAttribute("data-total")) || 0;
    var loading = null;
    var generation = 0;
    var pageSize = Number(table.getAttribute("data-size")) || 150;
    var cell = function (cls, text) { var td = document.createElement("td"); td.className = cls; td.textContent = text; return td; };
    var rowOf = function (s) {
      var tr = document.createElement("tr");
      tr.className = "item";
      var title = cell("title", "");
      var a = document.createElement("a");
      a.href = "/s/" + encodeURIComponent(s.id);
      a.textContent = (s.name || s.firstMessage || "(no messages)").slice(0, 200);
      var sub = document.createElement("div"); sub.className = "sub"; sub.textContent = s.id;
      title.appendChild(a); title.appendChild(sub); tr.appendChild(title);
      tr.appendChild(cell("cwd", s.cwd || ""));
      tr.appendChild(cell("num", String(s.messageCount)));
      var whenCell = cell("when", ""); var time = document.createElement("time");
      time.setAttribute("datetime", s.modified || ""); time.textContent = (s.modified || "").slice(0, 16).replace("T", " ");
      whenCell.appendChild(time); tr.appendChild(whenCell);
      tr.setAttribute("data-id", s.id);
      tr.setAttribute("data-href", a.getAttribute("href"));
      return tr;
    };
    Array.prototype.forEach.call(tbody.querySelectorAll("tr"), function (tr) { byId[tr.getAttribute("data-id")] = tr; });
    var params = function (offset, limit) {
      var p = new URLSearchParams();
      var words = filter.value.trim();
      if (words) p.set("q", words);
      if (project && project.value) p.set("project", project.value);
      p.set("offset", String(offset));
      p.set("limit", String(limit));
      return p;
    };
    var showCount = function () {
      if (count) count.textContent = total.toLocaleString("en-US") + (total === 1 ? " session" : " sessions");
      if (pager) pager.hidden = nextOffset >= total;
      var more = document.getElementById("moresessions");
      if (more) {
        var p = params(nextOffset, pageSize); p.delete("limit");
        if (p.get("q")) { p.set("filter", p.get("q")); p.delete("q"); }
        more.href = "/?" + p.toString();
        more.textContent = "sessions " + (nextOffset + 1).toLocaleString("en-US") + "–" + Math.min(total, nextOffset + pageSize).toLocaleString("en-US") +
          " of " + total.toLocaleString("en-US") + " →";
      }
    };
    var get = function (p) {
      return fetch("/api/v1/sessions?" + p.toString(), { credentials: "same-origin" }).then(function (r) { return r.ok ? r.json() : null; });
    };
    // the next page of the current filter, appended (rows already shown skipped)
    var loadMore = function () {
      if (loading) return loading;
      if (nextOffset >= total) return Promise.resolve(false);
      var mine = generation;
      loading = get(params(nextOffset, pageSize)).then(function (j) {
        loading = null;
        if (!j || mine !== generation) return false;
        j.sessions.forEach(function (s) {
          if (byId[s.id]) return;
          var tr = rowOf(s); byId[s.id] = tr; tbody.appendChild(tr);
        });
        nextOffset = j.offset + j.sessions.length;
        total = j.total;
        showCount();
        watchEnd(); // still in view: the next page follows
        return j.sessions.length > 0;
      }).catch(function () { loading = null; return false; });
      return loading;
    };
    moreRows = function () { return nextOffset < total ? loadMore() : null; };
    // the filter and the project: the first page of what matches, from the server
    var timer = null;
    var run = function () {
      generation += 1;
      var mine = generation;
      loading = null;
      get(params(0, pageSize)).then(function (j) {
        if (!j || mine !== generation) return;
        tbody.textContent = "";
        byId = {};
        j.sessions.forEach(function (s) { var tr = rowOf(s); byId[s.id] = tr; tbody.appendChild(tr); });
        nextOffset = j.sessions.length;
        total = j.total;
        current = -1;
        var prev = document.getElementById("prevsessions");
        if (prev) prev.hidden = true; // the list starts at the newest again
        showCount();
        watchEnd();
      }).catch(function () {});
    };
    filter.addEventListener("input", function () { window.clearTimeout(timer); timer = window.setTimeout(run, 120); });
    if (project) project.addEventListener("change", run);
    filter.form.addEventListener("submit", function (e) { e.preventDefault(); window.clearTimeout(timer); run(); });
    var button = document.getElementById("filterbutton");
    if (button) button.hidden = true;
    var more = document.getElementById("moresessions");
    if (more) more.addEventListener("click", function (e) { e.preventDefault(); loadMore(); });
    // scrolling near the end of the list loads the next page
    var observer = null;
    var watchEnd = function () {
      if (!window.IntersectionObserver) return;
      if (observer) observer.disconnect();
      observer = new IntersectionObserver(function (seen) {
        if (seen.some(function (e) { return e.isIntersecting; })) moreRows();
      }, { rootMargin: "600px" });
      if (pager) observer.observe(pager);
    };
    if (table.getAttribute("data-offset") === "0") { showCount(); watchEnd(); }
    // activity: the newest sessions of the current filter, looked at every
    // few seconds; a session written since moves to the top, marked, and a
    // new one is added
    var poll = function () {
      var mine = generation;
      get(params(0, 50)).then(function (j) {
        if (!j || mine !== generation) return;
        j.sessions.slice().reverse().forEach(function (s) {
          var tr = byId[s.id];
          if (tr) {
            var time = tr.querySelector("time");
            if (time && time.getAttribute("datetime") === s.modified) return;
          } else {
            tr = rowOf(s);
            byId[s.id] = tr;
            nextOffset += 1;
          }
          var t = tr.querySelector("time");
          t.setAttribute("datetime", s.modified || "");
          t.textContent = (s.modified || "").slice(0, 16).replace("T", " ");
          var num = tr.querySelector("td.num"); if (num) num.textContent = String(s.messageCount);
          tr.classList.add("active");
          tbody.insertBefore(tr, tbody.firstChild);
        });
        if (j.total !== total) { total = j.total; showCount(); }
      }).catch(function () {});
    };
    if (table.getAttribute("data-offset") === "0") window.setInterval(poll, 3000);
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
    source.onerror = function () {
      // a refused stream (too many open: 429/503) is closed for good; a dropped one reconnects
      if (live) live.textContent = source.readyState === EventSource.CLOSED ? "not live (too many open pages? reload to retry)" : "reconnecting…";
    };
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
