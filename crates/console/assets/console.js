// The console's script: draws each chart from the figures its page carries (uPlot), and makes a call's
// transcript follow its recording, checks phrases as they are typed and follows a rescoring. The pages
// work without it: every chart's figures are also a table, and a save is checked by the API.
(function () {
  "use strict";

  var COLOURS = ["#1f5fae", "#b3471d", "#2e7d32", "#7b3fa0", "#8a6d00", "#00796b"];

  function day(text) {
    // YYYYMMDD, as the API writes dates, to seconds since the epoch (UTC midnight: a tick per day).
    var y = +text.slice(0, 4), m = +text.slice(4, 6), d = +text.slice(6, 8);
    return Date.UTC(y, m - 1, d) / 1000;
  }

  function clock(seconds) {
    var s = Math.round(seconds), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    s = s % 60;
    return h + ":" + (m < 10 ? "0" : "") + m + ":" + (s < 10 ? "0" : "") + s;
  }

  function draw(figure) {
    var holder = figure.querySelector(".plot");
    var source = figure.querySelector("script.chart-data");
    if (!holder || !source || typeof uPlot === "undefined") return;
    var chart = JSON.parse(source.textContent);
    var data = [chart.dates.map(day)];
    var series = [{}];
    chart.series.forEach(function (line, i) {
      data.push(line.values);
      series.push({ label: line.label, stroke: COLOURS[i % COLOURS.length], width: 2,
                    points: { show: true }, spanGaps: false });
    });
    var value = chart.unit === "seconds" ? function (u, v) { return v == null ? "" : clock(v); } : null;
    var options = {
      width: Math.max(260, holder.clientWidth || 600),
      height: 220,
      series: series,
      axes: [
        // Daily figures: a tick per day at most, written as the date.
        { incrs: [86400, 2 * 86400, 7 * 86400, 30 * 86400],
          values: function (u, vals) { return vals.map(function (v) { return new Date(v * 1000).toISOString().slice(0, 10); }); } },
        value ? { incrs: [1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600],
                  values: function (u, vals) { return vals.map(function (v) { return clock(v); }); }, size: 70 } : {}
      ],
      scales: { x: { time: true } }
    };
    if (value) series.forEach(function (s, i) { if (i > 0) s.value = value; });
    var plot = new uPlot(options, data, holder);
    figure.classList.add("drawn");
    window.addEventListener("resize", function () {
      plot.setSize({ width: Math.max(260, holder.clientWidth || 600), height: 220 });
    });
  }

  // A call's page: the turn being played is marked as the recording plays, and a turn's time plays
  // the recording from there.
  function follow(audio) {
    var turns = Array.prototype.slice.call(document.querySelectorAll("li.turn"));
    var current = null;
    audio.addEventListener("timeupdate", function () {
      var t = audio.currentTime, found = null;
      for (var i = 0; i < turns.length; i++) {
        if (t >= +turns[i].dataset.start && t < +turns[i].dataset.end) { found = turns[i]; break; }
      }
      if (found === current) return;
      if (current) { current.classList.remove("playing"); current.removeAttribute("aria-current"); }
      if (found) { found.classList.add("playing"); found.setAttribute("aria-current", "true"); }
      current = found;
    });
    document.querySelectorAll("button.seek").forEach(function (button) {
      button.addEventListener("click", function () {
        audio.currentTime = +button.dataset.start;
        audio.play();
      });
    });
  }

  // The session's CSRF token, which the console's JSON calls carry in a header.
  function csrf() {
    var field = document.querySelector("input[name=csrf]");
    return field ? field.value : "";
  }

  // An application's editor: each phrase box is checked by the phrase parser as it is typed, its
  // problems listed under it by line.
  function checkAsTyped(form) {
    var url = form.dataset.check;
    form.querySelectorAll("textarea.phrases").forEach(function (box) {
      var list = document.getElementById(box.getAttribute("aria-describedby"));
      var timer = null, asked = 0;
      function check() {
        var numbers = [], lines = [];
        box.value.split("\n").forEach(function (line, i) {
          if (line.trim()) { numbers.push(i + 1); lines.push(line.trim()); }
        });
        var mine = ++asked;
        fetch(url, { method: "POST", credentials: "same-origin",
                     headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
                     body: JSON.stringify(lines) })
          .then(function (r) { return r.ok ? r.json() : null; })
          .then(function (answers) {
            if (!answers || mine !== asked) return;
            list.textContent = "";
            var wrong = false;
            answers.forEach(function (problem, i) {
              if (!problem) return;
              wrong = true;
              var item = document.createElement("li");
              item.className = "error";
              item.textContent = "Line " + numbers[i] + ": " + problem.reason + " at position " + problem.position;
              list.appendChild(item);
            });
            if (wrong) box.setAttribute("aria-invalid", "true"); else box.removeAttribute("aria-invalid");
          });
      }
      box.addEventListener("input", function () {
        clearTimeout(timer);
        timer = setTimeout(check, 300);
      });
    });
  }

  // After a save: the rescoring's progress, asked every two seconds until every call is scored.
  function followRescoring(holder) {
    var bar = holder.querySelector("progress"), count = holder.querySelector(".count");
    function ask() {
      fetch(holder.dataset.source, { credentials: "same-origin", headers: { "X-CSRF-Token": csrf() } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (p) {
          if (!p) return;
          bar.max = Math.max(1, p.calls);
          bar.value = p.scored;
          count.textContent = p.scored + " of " + p.calls;
          if (p.scored < p.calls) setTimeout(ask, 2000);
        });
    }
    setTimeout(ask, 1000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form.editor").forEach(checkAsTyped);
    document.querySelectorAll("div.rescoring").forEach(followRescoring);
    document.querySelectorAll("figure.chart").forEach(draw);
    var audio = document.querySelector("audio.recording");
    if (audio) follow(audio);
  });
})();
