"""Reading a generated report back: the findings table rows and the inline script blocks."""

from __future__ import annotations

import re
from html.parser import HTMLParser


class FindingsTable(HTMLParser):
    """Collects ``<tr class="finding">`` rows: their data-* attributes, evidence refs and raw lines."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[dict] = []
        self._row = None
        self._in_raw = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "finding":
            self._row = {k[5:]: v for k, v in a.items() if k.startswith("data-")}
            self._row.update(refs=[], texts=[])
        elif self._row is not None and tag == "span" and a.get("class") == "ref":
            self._row["refs"].append(a.get("title"))
        elif self._row is not None and tag == "pre" and a.get("class") == "raw":
            self._in_raw = True
            self._row["texts"].append("")

    def handle_endtag(self, tag):
        if tag == "pre":
            self._in_raw = False
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._in_raw and self._row is not None:
            self._row["texts"][-1] += data


def finding_rows(page: str) -> list[dict]:
    parser = FindingsTable()
    parser.feed(page)
    for row in parser.rows:
        row["partition"] = int(row["partition"]) if row.get("partition") else None
        row["topic"] = row.get("topic") or None
        row["replica"] = None
    return parser.rows


SCRIPT_RX = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)


def script_blocks(page: str) -> list[tuple[str, str]]:
    """(attributes, body) of every <script> element, in order."""
    return [(m.group("attrs"), m.group("body")) for m in SCRIPT_RX.finditer(page)]


def without_plotly_js(page: str) -> str:
    """The page without the embedded plotly.js (whose source contains "<img", "src=\"http" …)."""
    body = next(b for a, b in script_blocks(page) if 'type="text/javascript"' in a)
    return page.replace(body, "")
