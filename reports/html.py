"""The report page: one self-contained HTML file (plotly.js inlined once, no network request).

Figures travel as JSON in ``<script type="application/json">`` blocks with ``<``, ``>``, ``&``
escaped as ``\\u003c`` etc., so no log string can close the block; a Content-Security-Policy
forbids every fetch, so even a missed link could not load anything.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Optional

import plotly.io as pio
from plotly.offline import get_plotlyjs

from .figures import (
    impact_figure,
    lanes_figure,
    matrix_figure,
    partitions_figure,
    plot_time,
    quarantine_figure,
    rate_figure,
)
from .model import SEVERITY_ORDER, ReportData
from .style import page_css
from .tables import FINDINGS_JS, common_prefix, esc, findings_table, grid_table, severity_chip

CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
    "font-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'"
)
PLOT_CONFIG = {
    "displaylogo": False,
    "responsive": True,
    "typesetMath": False,
    "modeBarButtonsToRemove": ["select2d", "lasso2d"],
}

_BOOT_JS = r"""
(function () {
  var config = JSON.parse(document.getElementById('plot-config').textContent);
  var pending = [];
  document.querySelectorAll('[data-figure]').forEach(function (div) {
    var spec = JSON.parse(document.getElementById(div.getAttribute('data-figure')).textContent);
    pending.push(Plotly.newPlot(div, spec.data, spec.layout, config));
  });
  var select = document.getElementById('partition-select');
  if (select) {
    var views = JSON.parse(document.getElementById('partition-views').textContent);
    select.addEventListener('change', function () {
      var view = views[Number(select.value)];
      Plotly.update('chart-partitions', {visible: view.visible}, view.layout);
    });
  }
  Promise.all(pending).then(function () { document.body.setAttribute('data-charts-ready', String(pending.length)); });
})();
"""


def safe_json(obj) -> str:
    """JSON that is inert inside a <script> block (no ``</script>``, ``<!--`` or line separators)."""
    text = json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False, default=str)
    return _inert(text)


def _inert(text: str) -> str:
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def figure_json(fig) -> str:
    # plotly's encoder already swaps < > / (plotly/io/_json.py _swap_json); _inert also covers & and U+2028.
    return _inert(pio.to_json(fig, validate=False, pretty=False, remove_uids=True))


class _Page:
    def __init__(self):
        self.parts: list[str] = []
        self.figures = 0

    def add(self, markup: str) -> None:
        self.parts.append(markup)

    def chart(self, chart_id: str, fig, css_class: str = "chart") -> None:
        self.figures += 1
        data_id = f"fig-{chart_id}"
        self.add(
            f'<div id="chart-{chart_id}" class="{css_class}" data-figure="{data_id}"></div>'
            f'<script type="application/json" id="{data_id}">{figure_json(fig)}</script>'
        )


def render_report(data: ReportData, *, evidence_limit: int) -> str:
    """The whole page as one string."""
    refs = (
        [e.ref for f in data.findings for e in f.evidence]
        + [e for c in data.controllers for e in c.evidence]
        + [e for s in data.story for e in s.evidence]
    )
    prefix = common_prefix(refs)
    page = _Page()
    page.add(_impact_section(data, page, prefix))
    page.add(_summary(data, prefix))
    page.add(
        '<section id="lanes"><h2>Controllers and brokers over time</h2><p class="hint">Times are UTC. Top lane: '
        "the findings listed below. Controller bars are coloured by broker and labelled with the epoch; dashed "
        "lines mark failovers, stars elections. Broker lanes show liveness (alive, shutting down, dead, "
        "fenced) as the controller saw it.</p>"
    )
    if data.controllers or data.broker_intervals or data.findings:
        page.chart("lanes", lanes_figure(data))
    else:
        page.add('<p class="hint">The logs name no controller and no broker liveness change.</p>')
    page.add("</section>")
    page.add(_story_section(data, prefix))
    page.add(
        f'<section id="findings"><h2>Findings ({len(data.findings):,} of {data.findings_total:,})</h2>'
        '<p class="hint">One finding per episode: one anomaly of one rule on one partition (or the cluster), '
        "with every line that shows it, from its first to its last line. Most severe first. Click a column "
        "header to sort; type to filter. Evidence paths are"
        + (f' relative to <span class="ref">{esc(prefix)}</span>.' if prefix else " as cited.")
        + "</p>"
        + findings_table(data.findings, prefix, evidence_limit)
        + "</section>"
    )
    page.add(_partitions_section(data, page))
    page.add(
        '<section id="transitions"><h2>State transitions</h2><p class="hint">Logged '
        "<code>Changed state … from X to Y</code> lines, counted per from-state and to-state. A red box marks "
        "a transition that the controller state machine of the era that wrote the line forbids (judged by "
        "the line's dialect; the replay narrows it further with the broker's <code>Kafka version</code> "
        "line).</p>"
    )
    if any(m.cells for m in data.matrices):
        page.add('<div class="grid2">')
        for m in data.matrices:
            if m.cells:
                page.chart(f"matrix-{m.entity}", matrix_figure(m))
        page.add("</div>")
    else:
        page.add(
            '<p class="hint">No state transition is logged (KRaft, or a ZooKeeper controller logging at INFO).</p>'
        )
    page.add("</section>")
    page.add('<section id="rates"><h2>Event rate by event type</h2>')
    if data.rates:
        page.chart("rates", rate_figure(data.rates, data.rate_bucket_seconds))
    else:
        page.add('<p class="hint">No timestamped event.</p>')
    page.add("</section>")
    page.add(_quarantine_section(data, page))
    body = "".join(page.parts)
    return _document(data, body)


def _document(data: ReportData, body: str) -> str:
    window = _window_text(data.window_start, data.window_end)
    nav = "".join(
        f'<a href="#{a}">{t}</a>'
        for a, t in (
            ("impact", "Impact"),
            ("summary", "Summary"),
            ("lanes", "Controllers &amp; brokers"),
            ("findings", "Findings"),
            ("partitions", "Partitions"),
            ("transitions", "Transitions"),
            ("rates", "Event rate"),
            ("quarantine", "Quarantine"),
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{esc(data.title)}</title><style>{page_css()}</style>"
        f'<script type="text/javascript">{get_plotlyjs()}</script>'
        f"</head><body><header><h1>{esc(data.title)}</h1>"
        f'<div class="sub">{esc(window)} · from <span class="ref" style="color:#cbd5e1">{esc(data.source_dir)}</span>'
        f"</div></header><nav>{nav}</nav><main>{body}</main>"
        "<footer>kafka-forensics report · one self-contained file: it loads nothing from the network.</footer>"
        f'<script type="application/json" id="plot-config">{safe_json(PLOT_CONFIG)}</script>'
        f"<script>{FINDINGS_JS}</script><script>{_BOOT_JS}</script></body></html>\n"
    )


def _window_text(start: Optional[datetime], end: Optional[datetime]) -> str:
    if start is None or end is None:
        return "no timestamped line"
    return f"{plot_time(start)} → {plot_time(end)} UTC ({_duration(end - start)})"


def _duration(delta) -> str:
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        f"{days} d" if days else "",
        f"{hours} h" if hours else "",
        f"{minutes} min" if minutes else "",
        f"{secs} s" if secs or not (days or hours or minutes) else "",
    ]
    return " ".join(p for p in parts if p)


def _card(key: str, value_html: str, detail_html: str = "", card_id: str = "") -> str:
    ident = f' id="{card_id}"' if card_id else ""
    return (
        f'<div class="card"{ident}><div class="k">{esc(key)}</div><div class="v">{value_html}</div>'
        f'<div class="d">{detail_html}</div></div>'
    )


def _summary(data: ReportData, prefix: str) -> str:
    rec = data.reconciliation
    by_sev = {s: sum(v.get(s, 0) for v in data.findings_by_rule.values()) for s in SEVERITY_ORDER}
    sev_html = " ".join(f"{severity_chip(s)} {by_sev[s]:,}" for s in SEVERITY_ORDER if by_sev[s]) or "none"
    brokers = ", ".join(str(b) for b in data.brokers)
    if data.brokers_total > len(data.brokers):
        brokers += f" … ({data.brokers_total:,} in all)"
    versions = "; ".join(f"{esc(c.label)}" for c in data.kafka_versions) or "no <code>Kafka version</code> line"
    dialects = ", ".join(f"{esc(c.label)} ({c.count:,} lines)" for c in data.dialects)
    kinds = ", ".join(f"{esc(c.label)} {c.count:,}" for c in data.events_by_kind)
    rec_ok = '<span class="ok">✔ reconciled</span>' if rec.reconciled else '<span class="bad">✘ NOT reconciled</span>'
    cards = [
        _card(
            "time window (UTC)",
            esc(_duration(data.window_end - data.window_start)) if data.window_start and data.window_end else "unknown",
            esc(f"{plot_time(data.window_start)} → {plot_time(data.window_end)}") if data.window_start else "",
        ),
        _card("brokers", f"{data.brokers_total:,}", esc(brokers)),
        _card(
            "Kafka",
            esc(data.kafka_versions[0].label.split(" (")[0])
            if data.kafka_versions
            else (esc(data.dialects[0].label) if data.dialects else "unknown"),
            f"versions: {versions}<br>dialects: {dialects}",
        ),
        _card(
            "controllers",
            f"{data.controllers_total:,} epoch(s)",
            f"{data.failovers:,} failover(s); "
            + esc(", ".join(f"{c.controller_label} (epoch {c.epoch})" for c in data.controllers[:12])),
        ),
        _card("events", f"{data.events:,}", kinds),
        _card("findings", f"{data.findings_total:,}", sev_html, card_id="card-findings"),
        _card(
            "lines read",
            f"{rec.lines_read:,}",
            f"= records {rec.records:,} + continuation {rec.continuation_lines:,} + quarantined "
            f"{rec.quarantined:,} · {rec_ok} · {rec.files:,} file(s)"
            + (f', <span class="bad">{rec.read_errors:,} unreadable</span>' if rec.read_errors else ""),
            card_id="card-reconciliation",
        ),
        _verdict_card(data),
    ]
    out = ['<section id="summary"><h2>Summary</h2><div class="cards">', "".join(cards), "</div>"]
    if data.left_out:
        out.append(
            '<div class="leftout" id="left-out"><b>What this report leaves out</b> (the tables in the '
            "output directory have everything):<ul>"
            + "".join(f"<li>{esc(s)}</li>" for s in data.left_out)
            + "</ul></div>"
        )
    if data.findings_by_rule:
        rows = []
        for rule, sev in data.findings_by_rule.items():
            rows.append(
                [f"<b>{esc(rule)}</b>", esc(data.rule_sentences.get(rule, ""))]
                + [f"{sev[s]:,}" if sev.get(s) else "" for s in SEVERITY_ORDER]
            )
        out.append(
            "<h3>Findings (episodes) by rule and severity</h3>"
            + grid_table(
                ["rule", "what it means"] + list(SEVERITY_ORDER), rows, numeric=lambda i: i >= 2, table_id="by-rule"
            )
        )
    if data.controllers:
        rows = [
            [
                esc(c.cluster) if c.cluster else "",
                c.controller_label,
                str(c.epoch),
                esc(plot_time(c.ts_start)),
                esc(plot_time(c.ts_end)) if c.ts_end else "end of logs",
                "elected" if c.elected else "inferred",
                f"{c.n_actions:,}",
                "<br>".join(
                    f'<span class="ref">{esc(e[len(prefix) :] if prefix and e.startswith(prefix) else e)}</span>'
                    for e in c.evidence[:3]
                ),
            ]
            for c in data.controllers
        ]
        out.append(
            "<h3>Controllers and epochs</h3>"
            + grid_table(
                ["cluster", "controller", "epoch", "from", "to", "how known", "actions", "evidence"],
                rows,
                numeric=lambda i: i in (1, 2, 6),
                table_id="controllers",
            )
        )
    if data.verdict.suites:
        rows = [
            [
                esc(s.name),
                _verdict_word(s.passed),
                "" if s.evaluated is None else f"{s.evaluated:,}",
                "" if s.failed is None else f"{s.failed:,}",
            ]
            for s in data.verdict.suites
        ]
        out.append(
            "<h3>Expectation suites</h3>"
            + grid_table(
                ["suite", "result", "expectations", "failed"], rows, numeric=lambda i: i >= 2, table_id="suites"
            )
        )
    out.append("</section>")
    return "".join(out)


_IMPACT_HEADS = {
    "leader_lost": "leader lost (s)",
    "unavailable": "unavailable (s)",
    "under_min_isr": "under min ISR (s)",
    "under_replicated": "under-replicated (s)",
}


def _seconds(value: float) -> str:
    return f"{value:,.1f}" if value else ""


def _impact_section(data: ReportData, page: _Page, prefix: str) -> str:
    """What the incident cost: totals per kind, the worst partitions, and their episodes on a strip."""
    from kafka_forensics.replay.impact import KINDS

    page.add(
        '<section id="impact"><h2>Impact</h2><p class="hint">How long partitions had no leader (<b>unavailable</b>: '
        "leader -1 or on a dead or fenced broker, as <code>kafka-topics --unavailable-partitions</code>; "
        "<b>leader lost</b>: before that, from the session timeout before the leader's logged death to it), ran "
        "<b>under min ISR</b> (acks=all writes fail; when min.insync.replicas is known) or <b>under-replicated</b>. "
        "An episode still so when the logs end is <i>open</i> and counted up to the last line. The impact and "
        "impact_totals tables have every episode.</p>"
    )
    if not data.impact_totals:
        return '<p class="hint">No partition was unavailable, under min ISR or under-replicated in these logs.</p></section>'
    rows = [
        [
            esc(t.cluster),
            esc(t.kind.replace("_", " ")),
            f"{t.partitions:,}",
            f"{t.episodes:,}",
            f"{t.open_episodes:,}" if t.open_episodes else "",
            f"{t.seconds:,.1f}",
            f"{t.longest_seconds:,.1f}",
            esc(t.longest),
        ]
        for t in sorted(
            data.impact_totals, key=lambda t: (t.cluster, list(KINDS).index(t.kind) if t.kind in KINDS else 99)
        )
    ]
    page.add(
        "<h3>Totals</h3>"
        + grid_table(
            ["cluster", "kind", "partitions", "episodes", "open", "seconds", "longest (s)", "longest partition"],
            rows,
            numeric=lambda i: 2 <= i <= 6,
            table_id="impact-totals",
        )
    )
    worst = []
    for p in data.impact_partitions:
        end = "open" if p.worst_start is not None and p.worst_end is None else esc(plot_time(p.worst_end) or "")
        worst.append(
            [esc(p.label)]
            + [_seconds(p.seconds.get(k, 0.0)) for k in _IMPACT_HEADS]
            + [
                f"{p.episodes:,}" + (f" ({p.open_episodes:,} open)" if p.open_episodes else ""),
                (f"{esc(plot_time(p.worst_start))} → {end}" if p.worst_start else "")
                + (f" ({esc(p.worst_ended_by)})" if p.worst_ended_by else ""),
                "<br>".join(
                    f'<span class="ref">{esc(r[len(prefix) :] if prefix and r.startswith(prefix) else r)}</span>'
                    for r in p.worst_evidence
                ),
            ]
        )
    page.add(
        f"<h3>Worst partitions ({len(data.impact_partitions):,} of {data.impact_partitions_total:,}), "
        "longest without a leader first</h3>"
        + grid_table(
            ["partition", *_IMPACT_HEADS.values(), "episodes", "longest leaderless episode (UTC)", "its lines"],
            worst,
            numeric=lambda i: 1 <= i <= 4,
            table_id="impact-worst",
        )
    )
    if data.impact_episodes:
        page.chart(
            "impact", impact_figure(data.impact_partitions, data.impact_episodes, data.window_start, data.window_end)
        )
    return "</section>"


def _verdict_word(passed: Optional[bool]) -> str:
    if passed is None:
        return '<span class="muted">unknown</span>'
    return '<span class="ok">passed</span>' if passed else '<span class="bad">failed</span>'


def _verdict_card(data: ReportData) -> str:
    v = data.verdict
    css = {"passed": "verdict-passed", "failed": "verdict-failed"}.get(v.status, "verdict-not-run")
    detail = esc(v.note) if v.note else ""
    if v.status == "not run":
        detail = detail or "no verdict.json in the output directory (run <code>kafka-forensics check</code>)"
    if v.failing:
        detail += ("<br>" if detail else "") + "failed: " + ", ".join(esc(n) for n in v.failing)
    if v.warnings:
        detail += ("<br>" if detail else "") + "warnings: " + ", ".join(esc(n) for n in v.warnings)
    return _card("expectations", f'<span class="{css}">{esc(v.status)}</span>', detail, card_id="card-verdict")


def _story_section(data: ReportData, prefix: str) -> str:
    """The incident in order and in words (``replay.story``), each sentence with the lines it cites."""
    head = (
        '<section id="story"><h2>Story</h2><p class="hint">What happened, in order: controller changes with the '
        "reason Kafka logged, broker deaths and returns, controlled shutdowns, leader elections by kind and the "
        "first and last line of each finding. Times are UTC."
        + (f' Evidence paths are relative to <span class="ref">{esc(prefix)}</span>.' if prefix else "")
        + "</p>"
    )
    if not data.story:
        return head + '<p class="hint">No story: the replay wrote no story.json, or the logs name no controller, '
        "broker, election or finding.</p></section>"
    multi = len({s.cluster for s in data.story}) > 1
    items = []
    for s in data.story:
        refs = " ".join(
            f'<span class="ref">{esc(e[len(prefix) :].lstrip("/") if prefix and e.startswith(prefix) else e)}</span>'
            for e in s.evidence
        )
        cluster = f"[{esc(s.cluster)}] " if multi and s.cluster else ""
        when = esc(plot_time(s.ts)) if s.ts is not None else "?"
        items.append(
            f'<li class="story-{esc(s.kind.split(":", 1)[0])}"><span class="when">{when}</span> {cluster}'
            f'{esc(s.text)} <span class="cites">({refs})</span></li>'
        )
    notes = "".join(f'<p class="hint">{esc(n)}</p>' for n in data.story_notes)
    return head + '<ol class="story">' + "".join(items) + "</ol>" + notes + "</section>"


def _partitions_section(data: ReportData, page: _Page) -> str:
    head = (
        f'<section id="partitions"><h2>Partition timelines ({len(data.partitions):,} of '
        f"{data.partitions_total:,} partitions)</h2>"
        '<p class="hint">The most affected partitions (most findings, then most state changes). Lanes: '
        "findings; the partition's state (stars: leader changes, triangles: ISR shrink ▼ / expand ▲); per "
        "broker its role (leader, in ISR, out of ISR) and its replica state. Hover for the log line that "
        "opened each interval.</p>"
    )
    if not data.partitions:
        return head + '<p class="hint">No partition state is logged.</p></section>'
    fig, views = partitions_figure(data.partitions, data.window_start, data.window_end)
    options = "".join(
        f'<option value="{n}">{esc(s.label)} — {s.findings:,} finding(s)</option>'
        for n, s in enumerate(data.partitions)
    )
    page.add(
        head + '<div class="controls"><label for="partition-select">Partition:</label>'
        f'<select id="partition-select">{options}</select></div>'
        f'<script type="application/json" id="partition-views">{safe_json(views)}</script>'
    )
    page.chart("partitions", fig)
    return "</section>"


def _quarantine_section(data: ReportData, page: _Page) -> str:
    page.add(f'<section id="quarantine"><h2>Quarantine by reason ({data.quarantine_total:,} lines)</h2>')
    if not data.quarantine:
        return '<p class="hint">No line was quarantined: the grammar read every line.</p></section>'
    page.chart("quarantine", quarantine_figure(data.quarantine))
    rows = [
        [esc(c.label), f"{c.count:,}", f'<pre class="raw">{esc(c.sample)}</pre>' if c.sample else ""]
        for c in data.quarantine
    ]
    return (
        "<h3>First line of each reason</h3>"
        + grid_table(
            ["reason", "lines", "first line (file:line, text)"],
            rows,
            numeric=lambda i: i == 1,
            table_id="quarantine-table",
        )
        + "</section>"
    )
