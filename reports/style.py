"""Colours and the page's stylesheet: one place, so charts and tables agree on what red means."""

from __future__ import annotations

from kafka_forensics.statemachines.states import PartitionState as P
from kafka_forensics.statemachines.states import ReplicaState as R

SEVERITY_COLORS = {
    "critical": "#991b1b",
    "error": "#dc2626",
    "warning": "#d97706",
    "info": "#64748b",
}

STATE_COLORS: dict[str, str] = {
    # partition states
    P.OnlinePartition: "#16a34a",
    P.OfflinePartition: "#dc2626",
    P.NewPartition: "#3b82f6",
    P.NonExistentPartition: "#9ca3af",
    # replica states
    R.OnlineReplica: "#16a34a",
    R.OfflineReplica: "#dc2626",
    R.NewReplica: "#3b82f6",
    R.ReplicaDeletionStarted: "#f59e0b",
    R.ReplicaDeletionSuccessful: "#6b7280",
    R.ReplicaDeletionIneligible: "#a855f7",
    R.NonExistentReplica: "#9ca3af",
    # broker liveness
    "alive": "#16a34a",
    "shutting_down": "#f59e0b",
    "dead": "#dc2626",
    "fenced": "#7c3aed",
}
UNKNOWN_COLOR = "#d1d5db"

# impact kinds (replay.impact.KINDS), from the mildest to the worst: drawn in this order, each narrower on top
IMPACT_COLORS = {
    "under_replicated": "#fde68a",
    "under_min_isr": "#f59e0b",
    "leader_lost": "#9f1239",
    "unavailable": "#dc2626",
}
ROLE_COLORS = {"leader": "#1d4ed8", "in ISR": "#93c5fd", "out of ISR": "#fca5a5"}

# Controllers get distinct hues (colour = who, label = epoch).
CONTROLLER_PALETTE = ("#0f766e", "#7c3aed", "#c2410c", "#0369a1", "#be185d", "#4d7c0f", "#b45309", "#1e40af")

FONT_STACK = (
    '-apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, '
    '"Noto Sans", "Liberation Sans", sans-serif'
)
MONO_STACK = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", "DejaVu Sans Mono", monospace'


def state_color(state) -> str:
    return STATE_COLORS.get(state or "", UNKNOWN_COLOR)


CSS = """
:root { --fg:#111827; --muted:#6b7280; --line:#e5e7eb; --bg:#f8fafc; --card:#ffffff; --accent:#1d4ed8; }
* { box-sizing: border-box; }
body { margin:0; font-family: %(font)s; color:var(--fg); background:var(--bg); font-size:14px; line-height:1.45; }
header { background:#0f172a; color:#f8fafc; padding:16px 28px; }
header h1 { margin:0; font-size:20px; font-weight:600; letter-spacing:.2px; }
header .sub { color:#cbd5e1; font-size:13px; margin-top:4px; word-break:break-all; }
nav { position:sticky; top:0; z-index:10; background:#1e293b; padding:6px 28px; display:flex; gap:18px; flex-wrap:wrap; }
nav a { color:#e2e8f0; text-decoration:none; font-size:13px; }
nav a:hover { text-decoration:underline; }
main { padding:16px 28px 48px; max-width:1600px; margin:0 auto; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:16px 20px; margin:16px 0; }
h2 { font-size:17px; margin:0 0 10px; font-weight:600; }
h3 { font-size:14px; margin:14px 0 6px; font-weight:600; }
p.hint { color:var(--muted); margin:4px 0 10px; font-size:13px; }
.cards { display:grid; grid-template-columns:repeat(auto-fit, minmax(210px, 1fr)); gap:12px; }
.card { border:1px solid var(--line); border-radius:6px; padding:10px 12px; background:#fdfdfd; }
.card .k { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.4px; }
.card .v { font-size:18px; font-weight:600; margin-top:2px; }
.card .d { color:var(--muted); font-size:12.5px; margin-top:2px; }
.ok { color:#15803d; } .bad { color:#b91c1c; } .muted { color:var(--muted); }
table { border-collapse:collapse; width:100%%; font-size:13px; }
th, td { border-bottom:1px solid var(--line); padding:6px 8px; text-align:left; vertical-align:top; }
th { background:#f1f5f9; font-weight:600; }
table.findings thead th { position:sticky; top:34px; z-index:1; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
.sev { display:inline-block; padding:1px 8px; border-radius:10px; color:#fff; font-size:12px; font-weight:600; }
%(sev_css)s
.leftout { background:#fffbeb; border:1px solid #fde68a; border-radius:6px; padding:8px 12px; margin:8px 0; font-size:13px; }
.leftout ul { margin:4px 0 0 18px; padding:0; }
.chart { width:100%%; min-height:320px; }
.grid2 { display:grid; grid-template-columns:repeat(auto-fit, minmax(520px, 1fr)); gap:16px; }
.controls { display:flex; gap:10px; align-items:center; flex-wrap:wrap; margin:6px 0 10px; }
.controls input, .controls select { font:inherit; padding:4px 8px; border:1px solid #cbd5e1; border-radius:4px; background:#fff; }
.controls input[type=search] { min-width:280px; }
table.findings th { cursor:pointer; user-select:none; white-space:nowrap; }
table.findings th[aria-sort=ascending]::after { content:" \\25B2"; font-size:10px; }
table.findings th[aria-sort=descending]::after { content:" \\25BC"; font-size:10px; }
table.findings td.summary { max-width:520px; }
.evidence { margin:0; padding:0; list-style:none; }
.evidence li { margin:0 0 6px; }
.ref { font-family:%(mono)s; font-size:12px; color:#1e3a8a; word-break:break-all; }
ol.story { padding-left:1.5em; } ol.story li { margin:2px 0; }
ol.story .when { font-family:%(mono)s; font-size:12px; color:#475569; }
ol.story li.story-finding { color:#7f1d1d; }
pre.raw { margin:2px 0 0; padding:4px 6px; background:#f8fafc; border:1px solid var(--line); border-radius:4px;
          font-family:%(mono)s; font-size:11.5px; white-space:pre-wrap; word-break:break-word; max-height:9em; overflow:auto; }
.more { color:var(--muted); font-size:12px; }
.verdict-passed { color:#15803d; } .verdict-failed { color:#b91c1c; } .verdict-not-run { color:var(--muted); }
footer { color:var(--muted); font-size:12px; text-align:center; padding:12px; }
"""


def page_css() -> str:
    sev_css = "\n".join(f".sev-{name} {{ background:{color}; }}" for name, color in SEVERITY_COLORS.items())
    return CSS % {"font": FONT_STACK, "mono": MONO_STACK, "sev_css": sev_css}
