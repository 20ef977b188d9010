"""The viewer's own stylesheet and script, served from the service (no CDN: the pages work offline).

The script only follows a live run: it reads the page's run id and last sequence from ``data-`` attributes,
listens to ``/runs/{id}/events`` (Server-Sent Events from the service's event hub) and adds each event as text
(``textContent``, never HTML). Finished runs need no script.
"""

from __future__ import annotations

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1em 2em; color: #1d2330; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; border-bottom: 1px solid #d8dde6; padding-bottom: .2em; }
table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: .25em .5em; vertical-align: top; }
tr:nth-child(even) { background: #f4f6f9; } th { background: #e6eaf0; }
pre.json { background: #f7f8fa; border: 1px solid #d8dde6; padding: .6em; overflow-x: auto; font-size: 12px; }
mark { background: #ffe27a; } mark a { color: inherit; text-decoration: none; }
mark:target { outline: 2px solid #d9534f; }
.claim:target { outline: 2px solid #d9534f; }
.claim { margin: .3em 0; padding: .4em .6em; border-left: 4px solid #8aa4c8; }
.claim.direct_observation { border-color: #3c8d40; } .claim.unsupported, .claim.contradicted { border-color: #c9302c; }
.claim.overstated, .claim.reasonable_inference { border-color: #e0a800; }
.muted { color: #667085; } .verdict { font-weight: 700; } .live { color: #0b63c5; }
svg.chart { background: #fbfcfd; border: 1px solid #d8dde6; display: block; margin: .4em 0; }
svg.chart .series { stroke: #3a6fb0; stroke-width: 1.5; } svg.chart .bound { fill: #d9534f; }
form.filters { margin: .6em 0; } form.filters select, form.filters button { margin-right: .5em; }
"""

JS = """'use strict';
(function () {
  var page = document.getElementById('run');
  if (!page || page.getAttribute('data-live') !== 'true' || !window.EventSource) { return; }
  var runId = page.getAttribute('data-run-id');
  var after = page.getAttribute('data-last-sequence') || '0';
  var table = document.getElementById('path-rows');
  var state = document.getElementById('live-state');
  var source = new EventSource('/runs/' + encodeURIComponent(runId) + '/events?after=' + encodeURIComponent(after));
  source.addEventListener('node', function (message) {
    var event = JSON.parse(message.data);
    var row = document.createElement('tr');
    row.className = 'live-event';
    [String(event.sequence), event.node, event.outcome, event.reason_code || '', String(event.attempt),
     String(event.duration_ms) + ' ms'].forEach(function (text) {
      var cell = document.createElement('td');
      cell.textContent = text;
      row.appendChild(cell);
    });
    table.appendChild(row);
  });
  source.onerror = function () {
    // A broken stream would be re-opened from the page's first sequence: stop and say so instead.
    if (state.getAttribute('data-ended') !== 'true') {
      source.close();
      state.textContent = 'live updates stopped - reload to follow the run';
    }
  };
  source.addEventListener('ended', function (message) {
    source.close();
    var ended = JSON.parse(message.data);
    state.textContent = 'ended: ' + ended.status + ' (' + ended.verdict + ') - reload for the answer';
    state.setAttribute('data-ended', 'true');
  });
})();
"""
