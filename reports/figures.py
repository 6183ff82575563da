"""Plotly figures of the report, built from ``reports.model`` values only.

Every string that came from a log goes through ``_t`` (HTML escaping): plotly renders a subset of
HTML in labels and hover text (``<a href>``, ``<b>``, ``<br>``), so a topic or message must never
reach it raw. Times are plotted in UTC.
"""

from __future__ import annotations

import html
from datetime import datetime, timedelta, timezone
from typing import Iterable, Optional

import plotly.graph_objects as go

from .model import (
    SEVERITY_ORDER,
    BrokerInterval,
    ControllerEpoch,
    Count,
    FindingRow,
    ImpactEpisode,
    ImpactPartition,
    PartitionStory,
    RateSeries,
    ReportData,
    StateInterval,
    TransitionMatrix,
)
from .style import (
    CONTROLLER_PALETTE,
    FONT_STACK,
    IMPACT_COLORS,
    ROLE_COLORS,
    SEVERITY_COLORS,
    UNKNOWN_COLOR,
    state_color,
)

MAX_MARKED_FAILOVERS = 40  # vertical failover lines with a label; more would be unreadable
_BAR_MIN_FRACTION = 0.004  # an interval shorter than this share of the window is drawn this wide


def _t(value) -> str:
    """Log text made inert for plotly's pseudo-HTML (it shows entities as the characters)."""
    return html.escape("" if value is None else str(value), quote=True)


def plot_time(ts: Optional[datetime]) -> Optional[str]:
    """UTC wall-clock text plotly's date axis reads (it ignores offsets)."""
    if ts is None:
        return None
    if ts.tzinfo is not None:
        ts = ts.astimezone(timezone.utc)
    return ts.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _ints(values) -> str:
    return "?" if values is None else "[" + ",".join(str(v) for v in values) + "]"


def _base_layout(**extra) -> dict:
    layout = dict(
        template="plotly_white",
        font=dict(family=FONT_STACK, size=12, color="#111827"),
        margin=dict(l=150, r=30, t=40, b=40),
        hoverlabel=dict(font=dict(family=FONT_STACK, size=12), align="left"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
    )
    layout.update(extra)
    return layout


class _Window:
    """The time window intervals are clipped to; open-ended intervals run to its end."""

    def __init__(self, start: Optional[datetime], end: Optional[datetime]):
        self.start, self.end = start, end
        span = (end - start) if (start and end) else timedelta(seconds=1)
        self.min_width = max(span * _BAR_MIN_FRACTION, timedelta(milliseconds=1))

    def bar(self, start: Optional[datetime], end: Optional[datetime]) -> Optional[tuple[str, float]]:
        """(base, length in ms) for an interval, or None when it has no start."""
        if start is None:
            return None
        stop = end or self.end or start
        length = max(stop - start, self.min_width)
        return plot_time(start), length.total_seconds() * 1000.0


def _bars(
    name: str,
    color: str,
    rows: list[tuple[str, str, float, str]],
    legendgroup: str,
    showlegend=True,
    text: Optional[list[str]] = None,
    visible=True,
) -> go.Bar:
    """Horizontal bars on a date axis: rows of (lane, base, length ms, hover html)."""
    return go.Bar(
        name=name,
        legendgroup=legendgroup,
        showlegend=showlegend,
        visible=visible,
        orientation="h",
        y=[r[0] for r in rows],
        base=[r[1] for r in rows],
        x=[r[2] for r in rows],
        hovertext=[r[3] for r in rows],
        hovertemplate="%{hovertext}<extra></extra>",
        marker=dict(color=color, line=dict(color="rgba(255,255,255,0.9)", width=1)),
        text=text,
        textposition="inside",
        insidetextanchor="middle",
        textfont=dict(color="#ffffff", size=11),
        cliponaxis=True,
    )


def _markers(
    name: str,
    lane: str,
    points: list[tuple[str, str]],
    color: str,
    symbol: str,
    size=11,
    visible=True,
    legendgroup: Optional[str] = None,
) -> go.Scatter:
    return go.Scatter(
        name=name,
        legendgroup=legendgroup or name,
        visible=visible,
        mode="markers",
        x=[p[0] for p in points],
        y=[lane] * len(points),
        hovertext=[p[1] for p in points],
        hovertemplate="%{hovertext}<extra></extra>",
        marker=dict(color=color, symbol=symbol, size=size, line=dict(color="#111827", width=1)),
    )


def _finding_hover(f: FindingRow) -> str:
    return f"<b>{_t(f.severity)}</b> {_t(f.rule)}<br>{_t(f.where)} · {_t(plot_time(f.ts))}<br>{_wrap(f.summary)}"


def _wrap(text: str, width: int = 90, max_lines: int = 6) -> str:
    """Escape, then break long text into lines for a hover box."""
    words, lines, line = (text or "").split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["…"]
    return "<br>".join(_t(x) for x in lines)


# ---- controller and broker lanes ---------------------------------------------------------------
def _lane(prefix: str, cluster: str) -> str:
    return f"{prefix} [{cluster}]" if cluster else prefix


def lanes_figure(data: ReportData) -> go.Figure:
    """Who was controller (epoch) and which brokers were alive, with failovers and findings marked."""
    win = _Window(data.window_start, data.window_end)
    traces: list = []
    lanes: list[str] = []
    controller_ids = sorted({c.controller_id for c in data.controllers}, key=lambda cid: (cid is None, cid or 0))
    colors = {cid: CONTROLLER_PALETTE[i % len(CONTROLLER_PALETTE)] for i, cid in enumerate(controller_ids)}
    for cluster in data.clusters or [""]:
        if data.findings:
            lanes.append(_lane("findings", cluster))
        lanes.append(_lane("controller", cluster))
        lanes.extend(
            _lane(f"broker {b}", cluster)
            for b in sorted({b.broker for b in data.broker_intervals if b.cluster == cluster})
        )
    for cid in controller_ids:
        rows, labels = [], []
        for c in (c for c in data.controllers if c.controller_id == cid):
            bar = win.bar(c.ts_start, c.ts_end)
            if bar:
                rows.append((_lane("controller", c.cluster), *bar, _controller_hover(c)))
                labels.append(f"{c.controller_label} · e{c.epoch}")
        if rows:
            name = "controller " + ("unknown" if cid is None else str(cid))
            traces.append(_bars(name, colors[cid], rows, name, text=labels))
    for state in ("alive", "shutting_down", "dead", "fenced"):
        rows = []
        for b in (b for b in data.broker_intervals if b.state == state):
            bar = win.bar(b.ts_start, b.ts_end)
            if bar:
                rows.append((_lane(f"broker {b.broker}", b.cluster), *bar, _broker_hover(b)))
        if rows:
            traces.append(_bars(f"broker {state.replace('_', ' ')}", state_color(state), rows, f"broker {state}"))
    elected = [(plot_time(c.ts_start), _controller_hover(c)) for c in data.controllers if c.elected and c.ts_start]
    if elected:
        trace = _markers("election", "", elected, "#facc15", "star", size=14)
        trace.y = [_lane("controller", c.cluster) for c in data.controllers if c.elected and c.ts_start]
        traces.append(trace)
    for sev in SEVERITY_ORDER:
        found = [f for f in data.findings if f.severity == sev and f.ts is not None]
        if found:
            trace = _markers(
                f"finding: {sev}",
                "",
                [(plot_time(f.ts), _finding_hover(f)) for f in found],
                SEVERITY_COLORS[sev],
                "diamond",
                size=10,
            )
            trace.y = [_lane("findings", f.cluster) for f in found]
            traces.append(trace)
    shapes, annotations = _failover_marks(data.controllers)
    fig = go.Figure(traces)
    fig.update_layout(
        **_base_layout(
            barmode="overlay",
            height=max(300, 150 + 34 * len(lanes)),
            shapes=shapes,
            annotations=annotations,
            xaxis=dict(type="date"),
            yaxis=dict(type="category", categoryorder="array", categoryarray=lanes, autorange="reversed"),
            margin=dict(l=150, r=30, t=40, b=110),
            legend=dict(orientation="h", yanchor="top", y=-0.12, xanchor="left", x=0, font=dict(size=11)),
        )
    )
    return fig


def _controller_hover(c: ControllerEpoch) -> str:
    how = "elected" if c.elected else "inferred from its own lines"
    ev = "<br>".join(_t(e) for e in c.evidence[:3])
    return (
        f"<b>controller {c.controller_label}, epoch {c.epoch}</b> ({how})<br>{_t(plot_time(c.ts_start))} → "
        f"{_t(plot_time(c.ts_end)) if c.ts_end else 'end of logs'}<br>{c.n_actions:,} action line(s)<br>{ev}"
    )


def _broker_hover(b: BrokerInterval) -> str:
    return (
        f"<b>broker {b.broker}: {_t(b.state)}</b><br>{_t(plot_time(b.ts_start))} → "
        f"{_t(plot_time(b.ts_end)) if b.ts_end else 'end of logs'}<br>{_t(b.evidence)}"
    )


def _failover_marks(controllers: list[ControllerEpoch]) -> tuple[list[dict], list[dict]]:
    seen: set[str] = set()
    shapes, annotations = [], []
    for c in sorted(controllers, key=lambda c: (c.cluster, c.ts_start or datetime.min.replace(tzinfo=timezone.utc))):
        if c.cluster not in seen:
            seen.add(c.cluster)
            continue
        if c.ts_start is None or len(shapes) >= MAX_MARKED_FAILOVERS:
            continue
        x = plot_time(c.ts_start)
        shapes.append(
            dict(
                type="line",
                xref="x",
                yref="paper",
                x0=x,
                x1=x,
                y0=0,
                y1=1,
                line=dict(color="#0f172a", width=1.5, dash="dash"),
            )
        )
        annotations.append(
            dict(
                x=x,
                xref="x",
                y=1.0,
                yref="paper",
                yanchor="bottom",
                showarrow=False,
                text=f"failover → {c.controller_label} (epoch {c.epoch})",
                font=dict(size=11, color="#0f172a"),
                bgcolor="rgba(255,255,255,0.85)",
            )
        )
    return shapes, annotations


# ---- per-partition leader / ISR Gantt ------------------------------------------------------------
def _interval_hover(title: str, i: StateInterval) -> str:
    return (
        f"<b>{title}</b><br>{_t(plot_time(i.ts_start))} → "
        f"{_t(plot_time(i.ts_end)) if i.ts_end else 'end of logs'}<br>state {_t(i.state or 'not logged')}, "
        f"leader {_t(i.leader)}, ISR {_ints(i.isr)}, replicas {_ints(i.replicas)}<br>leader epoch "
        f"{_t(i.leader_epoch)}, controller epoch {_t(i.controller_epoch)}<br>opened by {_t(i.cause_event_type)} at "
        f"{_t(i.cause)}"
    )


def _role_hover(name: str, broker: int, role: str, i: StateInterval) -> str:
    """Shorter than the state lane's hover (one bar per broker per interval: the bulk of the bytes)."""
    return (
        f"<b>{name}: broker {broker} {role}</b><br>{_t(plot_time(i.ts_start))} → "
        f"{_t(plot_time(i.ts_end)) if i.ts_end else 'end of logs'}<br>leader {_t(i.leader)}, ISR {_ints(i.isr)}"
    )


def _story_traces(story: PartitionStory, win: _Window, visible: bool) -> tuple[list, list[str]]:
    """The traces and lanes (top to bottom) of one partition's Gantt."""
    traces, lanes = [], []
    name = _t(story.label)
    if story.marks:
        lanes.append("findings")
    lanes.append("partition state")
    brokers = sorted(
        {b for i in story.intervals for b in (i.replicas or ()) + (i.isr or ())}
        | {i.leader for i in story.intervals if i.leader is not None and i.leader >= 0}
        | {r.replica for r in story.replica_intervals if r.replica is not None}
    )
    for b in brokers:
        lanes.append(f"broker {b} · role")
        if any(r.replica == b for r in story.replica_intervals):
            lanes.append(f"broker {b} · replica")
    by_state: dict[str, list] = {}
    for i in story.intervals:
        bar = win.bar(i.ts_start, i.ts_end)
        if bar:
            by_state.setdefault(i.state or "not logged", []).append(
                ("partition state", *bar, _interval_hover(f"{name}: {_t(i.state or 'not logged')}", i))
            )
    for state, rows in sorted(by_state.items()):
        traces.append(_bars(state, state_color(state), rows, f"state {state}", visible=visible))
    by_role: dict[str, list] = {}
    for i in story.intervals:
        bar = win.bar(i.ts_start, i.ts_end)
        if not bar:
            continue
        isr = set(i.isr or ())
        for b in brokers:
            if i.leader == b:
                role = "leader"
            elif b in isr:
                role = "in ISR"
            elif b in (i.replicas or ()):
                role = "out of ISR"
            else:
                continue
            by_role.setdefault(role, []).append((f"broker {b} · role", *bar, _role_hover(name, b, role, i)))
    for role in ("leader", "in ISR", "out of ISR"):
        if role in by_role:
            traces.append(_bars(role, ROLE_COLORS[role], by_role[role], f"role {role}", visible=visible))
    by_rstate: dict[str, list] = {}
    for r in story.replica_intervals:
        bar = win.bar(r.ts_start, r.ts_end)
        if bar:
            by_rstate.setdefault(r.state or "not logged", []).append(
                (
                    f"broker {r.replica} · replica",
                    *bar,
                    _interval_hover(f"{name}: replica {r.replica} {_t(r.state or 'not logged')}", r),
                )
            )
    for state, rows in sorted(by_rstate.items()):
        traces.append(_bars(state, state_color(state), rows, f"state {state}", visible=visible))
    traces.extend(_change_markers(story, name, visible))
    for sev in SEVERITY_ORDER:
        pts = [
            (plot_time(m.ts), f"<b>{_t(m.severity)}</b> {_t(m.rule)}<br>{_wrap(m.summary)}")
            for m in story.marks
            if m.severity == sev and m.ts is not None
        ]
        if pts:
            traces.append(
                _markers(f"finding: {sev}", "findings", pts, SEVERITY_COLORS[sev], "diamond", visible=visible)
            )
    return traces, lanes


def _change_markers(story: PartitionStory, name: str, visible: bool) -> list:
    """Leader changes and ISR shrink/expand, where one interval's leader or ISR differs from the last."""
    leader_pts, shrink_pts, expand_pts = [], [], []
    prev: Optional[StateInterval] = None
    for i in story.intervals:
        if prev is not None and i.ts_start is not None:
            x = plot_time(i.ts_start)
            if i.leader != prev.leader and prev.leader is not None:
                leader_pts.append((x, f"<b>{name}: leader {prev.leader} → {i.leader}</b><br>{_t(i.cause)}"))
            old, new = set(prev.isr or ()), set(i.isr or ())
            if prev.isr is not None and i.isr is not None:
                if new < old or (old - new and not new - old):
                    shrink_pts.append(
                        (x, f"<b>{name}: ISR shrink {_ints(prev.isr)} → {_ints(i.isr)}</b><br>{_t(i.cause)}")
                    )
                elif new > old or (new - old and not old - new):
                    expand_pts.append(
                        (x, f"<b>{name}: ISR expand {_ints(prev.isr)} → {_ints(i.isr)}</b><br>{_t(i.cause)}")
                    )
        prev = i
    out = []
    if leader_pts:
        out.append(_markers("leader change", "partition state", leader_pts, "#facc15", "star", 14, visible))
    if shrink_pts:
        out.append(_markers("ISR shrink", "partition state", shrink_pts, "#ef4444", "triangle-down", 12, visible))
    if expand_pts:
        out.append(_markers("ISR expand", "partition state", expand_pts, "#22c55e", "triangle-up", 12, visible))
    return out


def partitions_figure(stories: list[PartitionStory], window_start, window_end) -> tuple[go.Figure, list[dict]]:
    """One figure holding every selected partition's traces, the first visible; and per partition
    the ``Plotly.update`` arguments that show it (the page's selector applies them)."""
    win = _Window(window_start, window_end)
    traces, spans = [], []
    lane_sets = []
    for n, story in enumerate(stories):
        story_traces, lanes = _story_traces(story, win, visible=(n == 0))
        spans.append((len(traces), len(traces) + len(story_traces)))
        traces.extend(story_traces)
        lane_sets.append(lanes)
    views = []
    for n, story in enumerate(stories):
        lo, hi = spans[n]
        visible = [lo <= k < hi for k in range(len(traces))]
        views.append(
            {
                "visible": visible,
                "layout": {
                    "title.text": _title(story),
                    "yaxis.categoryarray": lane_sets[n],
                    "height": _gantt_height(lane_sets[n]),
                    "xaxis.autorange": True,
                },
            }
        )
    fig = go.Figure(traces)
    first = stories[0] if stories else None
    fig.update_layout(
        **_base_layout(
            barmode="overlay",
            height=_gantt_height(lane_sets[0] if lane_sets else []),
            title=dict(text=_title(first) if first else "", x=0, xanchor="left", font=dict(size=14)),
            xaxis=dict(type="date"),
            yaxis=dict(
                type="category",
                categoryorder="array",
                categoryarray=lane_sets[0] if lane_sets else [],
                autorange="reversed",
            ),
            margin=dict(l=150, r=30, t=50, b=110),
            legend=dict(orientation="h", yanchor="top", y=-0.08, xanchor="left", x=0, font=dict(size=11)),
        )
    )
    return fig, views


def _title(story: PartitionStory) -> str:
    shown = (
        f"{len(story.intervals):,} interval(s)"
        if len(story.intervals) == story.intervals_total
        else f"first {len(story.intervals):,} of {story.intervals_total:,} intervals"
    )
    return f"<b>{_t(story.label)}</b> · {story.findings:,} finding(s) · {shown}"


# ---- impact strip ---------------------------------------------------------------------------------
_IMPACT_WIDTH = {"under_replicated": 0.8, "under_min_isr": 0.6, "leader_lost": 0.4, "unavailable": 0.4}


def _impact_hover(e: ImpactEpisode) -> str:
    end = "open: still so when the logs end" if e.ts_end is None else _t(plot_time(e.ts_end))
    why = f" ({_t(e.reason)})" if e.reason else ""
    how = f", ended by {_t(e.ended_by)}" if e.ended_by else ""
    lines = "<br>".join(_t(r) for r in (e.start_evidence, e.end_evidence) if r)
    return (
        f"<b>{_t(e.label)}</b> {_t(e.kind.replace('_', ' '))}{why}<br>{_t(plot_time(e.ts_start))} → {end}"
        f"<br>{e.known_seconds:,.3f} s{' (so far)' if e.ts_end is None else ''}{how}<br>{lines}"
    )


def impact_figure(
    partitions: list[ImpactPartition], episodes: list[ImpactEpisode], window_start, window_end
) -> go.Figure:
    """The timeline strip: one lane per partition shown, its episodes as bars coloured by kind (the mildest
    widest, so a leaderless stretch shows on top of the under-replicated one); open episodes run to the end."""
    win = _Window(window_start, window_end)
    lanes = [p.label for p in partitions]
    traces = []
    for kind, color in IMPACT_COLORS.items():
        rows = []
        for e in (e for e in episodes if e.kind == kind):
            bar = win.bar(e.ts_start, e.ts_end)
            if bar:
                rows.append((e.label, *bar, _impact_hover(e)))
        if rows:
            trace = _bars(kind.replace("_", " "), color, rows, kind)
            trace.width = _IMPACT_WIDTH.get(kind, 0.5)
            traces.append(trace)
    fig = go.Figure(traces)
    fig.update_layout(
        **_base_layout(
            barmode="overlay",
            height=max(160, 90 + 26 * len(lanes)),
            xaxis=dict(type="date"),
            yaxis=dict(type="category", categoryorder="array", categoryarray=lanes, autorange="reversed"),
            margin=dict(l=170, r=30, t=30, b=40),
        )
    )
    return fig


def _gantt_height(lanes: list[str]) -> int:
    return max(280, 150 + 30 * len(lanes))


# ---- transition matrix ---------------------------------------------------------------------------
def matrix_figure(matrix: TransitionMatrix) -> go.Figure:
    """From-state (rows) × to-state (columns) counts; cells the era's state machine forbids are boxed red."""
    states = list(matrix.states)
    index = {s: k for k, s in enumerate(states)}
    z = [[None] * len(states) for _ in states]
    hover = [[f"{_t(a)} → {_t(b)}: none" for b in states] for a in states]
    illegal_x, illegal_y, illegal_text = [], [], []
    for cell in matrix.cells:
        r, c = index.get(cell.from_state), index.get(cell.to_state)
        if r is None or c is None:
            continue
        z[r][c] = cell.count
        note = (
            f"<br><b>{cell.illegal_count:,} illegal</b> in the era that wrote them"
            if cell.illegal_count
            else "<br>legal in the era that wrote them"
        )
        hover[r][c] = (
            f"<b>{_t(cell.from_state)} → {_t(cell.to_state)}</b>: {cell.count:,} line(s){note}"
            f"<br>eras: {_t(', '.join(cell.eras))}"
        )
        if cell.illegal_count:
            illegal_x.append(cell.to_state)
            illegal_y.append(cell.from_state)
            illegal_text.append(hover[r][c])
    heat = go.Heatmap(
        x=states,
        y=states,
        z=z,
        text=[[("" if v is None else f"{v:,}") for v in row] for row in z],
        texttemplate="%{text}",
        hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>",
        colorscale="Blues",
        showscale=False,
        xgap=2,
        ygap=2,
        name="transitions",
    )
    traces = [heat]
    if illegal_x:
        traces.append(
            go.Scatter(
                x=illegal_x,
                y=illegal_y,
                mode="markers",
                name="illegal in its era",
                hovertext=illegal_text,
                hovertemplate="%{hovertext}<extra></extra>",
                marker=dict(symbol="square-open", size=38, color="#dc2626", line=dict(width=3)),
            )
        )
    fig = go.Figure(traces)
    fig.update_layout(
        **_base_layout(
            title=dict(
                text=f"<b>{matrix.entity}</b>: from-state (rows) → to-state (columns)",
                x=0,
                xanchor="left",
                y=0.99,
                yanchor="top",
                yref="container",
                font=dict(size=14),
            ),
            height=max(300, 130 + 46 * len(states)),
            showlegend=bool(illegal_x),
            xaxis=dict(type="category", side="top", tickangle=-30),
            yaxis=dict(type="category", autorange="reversed"),
            margin=dict(l=190, r=20, t=150, b=30),
            legend=dict(orientation="h", yanchor="top", y=-0.02, xanchor="left", x=0),
        )
    )
    return fig


# ---- event rate, quarantine ---------------------------------------------------------------------
RATE_COLORS = (
    "#2563eb",
    "#16a34a",
    "#dc2626",
    "#d97706",
    "#7c3aed",
    "#0891b2",
    "#db2777",
    "#65a30d",
    "#ea580c",
    "#4f46e5",
    "#0d9488",
    "#a16207",
    "#9333ea",
)
OTHER_TYPES = "other types"


def rate_figure(rates: list[RateSeries], bucket_seconds: int) -> go.Figure:
    traces = []
    for n, series in enumerate(rates):
        color = "#9ca3af" if series.event_type == OTHER_TYPES else RATE_COLORS[n % len(RATE_COLORS)]
        traces.append(
            go.Bar(
                marker=dict(color=color),
                name=_t(series.event_type),
                x=[plot_time(p[0]) for p in series.points],
                y=[p[1] for p in series.points],
                width=bucket_seconds * 1000.0,
                hovertemplate=f"{_t(series.event_type)}: %{{y:,}}<br>%{{x}}<extra></extra>",
            )
        )
    fig = go.Figure(traces)
    fig.update_layout(
        **_base_layout(
            barmode="stack",
            bargap=0.05,
            height=380,
            xaxis=dict(type="date", title=dict(text=f"time (UTC), {_bucket_text(bucket_seconds)} buckets")),
            yaxis=dict(title=dict(text="events")),
            margin=dict(l=60, r=20, t=90, b=50),
        )
    )
    return fig


def _bucket_text(seconds: int) -> str:
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def quarantine_figure(counts: Iterable[Count]) -> go.Figure:
    counts = list(counts)
    short = [_t(c.label if len(c.label) <= 60 else c.label[:57] + "…") for c in counts]
    fig = go.Figure(
        [
            go.Bar(
                orientation="h",
                y=short,
                x=[c.count for c in counts],
                marker=dict(color="#d97706"),
                hovertext=[_wrap(c.label) for c in counts],
                hovertemplate="%{hovertext}: %{x:,} line(s)<extra></extra>",
                name="quarantined",
            )
        ]
    )
    fig.update_layout(
        **_base_layout(
            height=max(200, 90 + 32 * len(counts)),
            showlegend=False,
            bargap=0.35,
            yaxis=dict(type="category", autorange="reversed", automargin=True),
            xaxis=dict(title=dict(text="quarantined lines"), rangemode="tozero"),
            margin=dict(l=20, r=20, t=20, b=50),
        )
    )
    return fig


__all__ = [
    "UNKNOWN_COLOR",
    "lanes_figure",
    "matrix_figure",
    "partitions_figure",
    "plot_time",
    "quarantine_figure",
    "rate_figure",
]
