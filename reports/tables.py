"""HTML tables of the report: the findings table (sortable, filterable) and small summary tables.

Every value that came from a log is passed through ``html.escape``; the only markup here is ours.
Sorting and filtering are done by ``FINDINGS_JS`` on ``data-*`` attributes, so no log text is ever
read back into markup by the script (it compares ``textContent`` / attribute strings only).
"""

from __future__ import annotations

import html
import os
from typing import Callable, Iterable, Optional

from .figures import plot_time
from .model import SEVERITY_ORDER, FindingRow


def esc(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def severity_chip(severity: str) -> str:
    return f'<span class="sev sev-{esc(severity)}">{esc(severity)}</span>'


def common_prefix(refs: Iterable[str]) -> str:
    """The directory every cited file is under (shown once, so rows show short paths)."""
    files = [r.rsplit(":", 1)[0] for r in refs if r]
    if not files:
        return ""
    try:
        prefix = os.path.commonpath(files)
    except ValueError:  # mixed absolute and relative paths, or schemes
        return ""
    if prefix in files:  # one file only: keep its name visible
        prefix = os.path.dirname(prefix)
    return prefix + "/" if prefix and not prefix.endswith("/") else prefix


def _short(ref: str, prefix: str) -> str:
    return ref[len(prefix) :] if prefix and ref.startswith(prefix) else ref


def findings_table(findings: list[FindingRow], prefix: str, evidence_limit: int) -> str:
    """One row per finding: severity, rule, where, time, summary, evidence (file:line + the line)."""
    if not findings:
        return '<p class="hint">No finding.</p>'
    rules = sorted({f.rule for f in findings})
    controls = (
        '<div class="controls">'
        '<input type="search" id="findings-filter" placeholder="Filter findings (any text)…" '
        'aria-label="filter findings">'
        '<select id="findings-severity" aria-label="severity"><option value="">all severities</option>'
        + "".join(f'<option value="{esc(s)}">{esc(s)}</option>' for s in SEVERITY_ORDER)
        + '</select><select id="findings-rule" aria-label="rule"><option value="">all rules</option>'
        + "".join(f'<option value="{esc(r)}">{esc(r)}</option>' for r in rules)
        + '</select><span id="findings-count" class="muted"></span></div>'
    )
    head = (
        "<thead><tr>"
        '<th data-key="sev" data-type="num">severity</th><th data-key="rule">rule</th>'
        '<th data-key="where">partition</th><th data-key="ts">episode (UTC)</th>'
        '<th data-key="summary">summary</th><th>evidence (file:line and the line)</th>'
        "</tr></thead>"
    )
    rows = [_finding_row(f, prefix, evidence_limit) for f in findings]
    return (
        controls
        + '<table class="findings" id="findings-table">'
        + head
        + "<tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _finding_row(f: FindingRow, prefix: str, evidence_limit: int) -> str:
    rank = SEVERITY_ORDER.index(f.severity) if f.severity in SEVERITY_ORDER else len(SEVERITY_ORDER)
    ts = plot_time(f.ts) or ""
    partition = "" if f.partition is None else str(f.partition)
    attrs = (
        f'data-sev="{rank}" data-severity="{esc(f.severity)}" data-rule="{esc(f.rule)}" '
        f'data-where="{esc(f.where)}" data-ts="{esc(ts or "~")}" data-summary="{esc(f.summary)}" '
        f'data-topic="{esc(f.topic or "")}" data-partition="{esc(partition)}" '
        f'data-cluster="{esc(f.cluster)}" data-finding-id="{esc(f.finding_id)}"'
    )
    evidence = "".join(
        f'<li><span class="ref" title="{esc(e.ref)}">{esc(_short(e.ref, prefix))}</span>'
        + (
            f'<pre class="raw">{esc(e.text)}</pre>'
            if e.text is not None
            else '<div class="more">(line not in the events or quarantine tables)</div>'
        )
        + "</li>"
        for e in f.evidence
    )
    more = ""
    if f.evidence_count > len(f.evidence):
        more = (
            f'<div class="more">showing {len(f.evidence)} of {f.evidence_count:,} cited lines '
            f"(the report shows at most {evidence_limit} per finding; findings.jsonl has them all)</div>"
        )
    epoch = ""
    if f.controller_epoch is not None:
        last = f.controller_epoch_end
        epochs = (
            f"epoch {f.controller_epoch}"
            if last in (None, f.controller_epoch)
            else f"epochs {f.controller_epoch}..{last}"
        )
        epoch = f'<div class="more">controller {epochs}</div>'
    end = plot_time(f.ts_end) if f.ts_end is not None and f.ts is not None and f.ts_end > f.ts else ""
    span = esc(ts) + (f'<div class="more">to {esc(end)}</div>' if end else "")
    lines = f'<div class="more">{f.evidence_count:,} line{"s" if f.evidence_count != 1 else ""}</div>'
    return (
        f'<tr class="finding" {attrs}><td>{severity_chip(f.severity)}</td><td>{esc(f.rule)}</td>'
        f'<td>{esc(f.where)}{epoch}</td><td>{span}{lines}</td><td class="summary">{esc(f.summary)}</td>'
        f'<td><ul class="evidence">{evidence}</ul>{more}</td></tr>'
    )


def key_value_table(rows: list[tuple[str, str]], html_values: bool = False) -> str:
    """Two columns; values are escaped unless the caller built them (``html_values``)."""
    body = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{v if html_values else esc(v)}</td></tr>' for k, v in rows)
    return f'<table class="kv">{body}</table>'


def grid_table(
    headers: list[str],
    rows: list[list[str]],
    numeric: Optional[Callable[[int], bool]] = None,
    table_id: Optional[str] = None,
) -> str:
    """A plain table; cells are pre-built HTML (callers escape what came from logs)."""
    numeric = numeric or (lambda _i: False)
    head = "".join(f'<th class="{"num" if numeric(i) else ""}">{esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"num" if numeric(i) else ""}">{c}</td>' for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    ident = f' id="{esc(table_id)}"' if table_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# Sorting by a column header; filtering by text, severity and rule. Reads data-* attributes only.
FINDINGS_JS = r"""
(function () {
  var table = document.getElementById('findings-table');
  if (!table) return;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var text = document.getElementById('findings-filter');
  var sev = document.getElementById('findings-severity');
  var rule = document.getElementById('findings-rule');
  var count = document.getElementById('findings-count');
  function apply() {
    var q = text.value.toLowerCase(), shown = 0;
    rows.forEach(function (r) {
      var ok = (!sev.value || r.dataset.severity === sev.value) && (!rule.value || r.dataset.rule === rule.value)
        && (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
      r.hidden = !ok; if (ok) shown++;
    });
    count.textContent = shown + ' of ' + rows.length + ' shown';
  }
  [text, sev, rule].forEach(function (el) { el.addEventListener('input', apply); el.addEventListener('change', apply); });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    var key = th.dataset.key; if (!key) return;
    th.addEventListener('click', function () {
      var asc = th.getAttribute('aria-sort') !== 'ascending';
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
      var num = th.dataset.type === 'num';
      rows.sort(function (a, b) {
        var x = a.dataset[key], y = b.dataset[key];
        var c = num ? (Number(x) - Number(y)) : (x < y ? -1 : x > y ? 1 : 0);
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  apply();
})();
"""
