
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("rt-data").textContent);
  var svg = document.getElementById("topo");
  var sel = document.getElementById("vl-select");
  var info = document.getElementById("vl-info");
  var byName = {};
  data.flows.forEach(function (f) {
    byName[f.name] = f;
    var o = document.createElement("option");
    o.value = f.name;
    o.textContent = f.name + " (" + f.cls + "): " + f.source + " \u2192 " + f.destinations.join(", ");
    sel.appendChild(o);
  });
  function clear() {
    svg.querySelectorAll(".hl, .src, .dst").forEach(function (e) { e.classList.remove("hl", "src", "dst"); });
  }
  function show(name) {
    clear();
    var f = byName[name];
    info.textContent = "";
    if (!f) { svg.classList.remove("dim"); return; }
    svg.classList.add("dim");
    f.links.forEach(function (i) {
      var e = svg.querySelector('[data-link="' + i + '"]');
      if (e) { e.classList.add("hl"); }
    });
    f.nodes.forEach(function (i) {
      var e = svg.querySelector('[data-node="' + i + '"]');
      if (e) { e.classList.add("hl"); }
    });
    var s = svg.querySelector('[data-node="' + f.src + '"]');
    if (s) { s.classList.add("src"); }
    f.dst.forEach(function (i) {
      var e = svg.querySelector('[data-node="' + i + '"]');
      if (e) { e.classList.add("dst"); }
    });
    f.paths.forEach(function (p) {
      var d = document.createElement("div");
      d.textContent = (p.plane ? "plane " + p.plane + ": " : "") + p.hops.join(" \u2192 ");
      info.appendChild(d);
    });
  }
  sel.addEventListener("change", function () { show(sel.value); });
  document.querySelectorAll("tr[data-flow]").forEach(function (tr) {
    tr.addEventListener("mouseenter", function () { show(tr.dataset.flow); });
    tr.addEventListener("mouseleave", function () { show(sel.value); });
    tr.addEventListener("click", function () { sel.value = tr.dataset.flow; show(sel.value); });
  });
  svg.querySelectorAll(".node").forEach(function (g) {
    g.addEventListener("mouseenter", function () {
      if (sel.value) { return; }
      var i = Number(g.dataset.node);
      data.links.forEach(function (ends, li) {
        if (ends[0] === i || ends[1] === i) {
          var e = svg.querySelector('[data-link="' + li + '"]');
          if (e) { e.classList.add("hl"); }
        }
      });
      svg.classList.add("dim");
      g.classList.add("hl");
    });
    g.addEventListener("mouseleave", function () { show(sel.value); });
  });
  function key(td) {
    var v = td.getAttribute("data-v");
    return v === null ? td.textContent.trim().toLowerCase() : parseFloat(v);
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var ths = table.querySelectorAll("thead th");
    ths.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        ths.forEach(function (o) { o.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).map(function (r, i) { return [r, i]; });
        rows.sort(function (a, b) {
          var x = key(a[0].cells[col]), y = key(b[0].cells[col]);
          var c = x < y ? -1 : x > y ? 1 : 0;
          return (asc ? c : -c) || a[1] - b[1];
        });
        rows.forEach(function (r) { body.appendChild(r[0]); });
      });
    });
  });
  document.body.dataset.ready = "1";
})();
