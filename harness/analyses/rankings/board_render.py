"""`harness leaderboard`'s renderings: a Markdown table, a CSV row per encoder, and a
self-contained HTML page that sorts by any column (`harness.analyses.rankings.leaderboard`
builds the table)."""

from __future__ import annotations

import csv
import html
import io
import json
import math
from typing import Any

from harness.analyses.rankings.leaderboard import Cell, Entry, Leaderboard


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _span(low: Any, high: Any, digits: int = 1) -> str:
    if low is None or high is None:
        return ""
    if isinstance(low, int) and isinstance(high, int):
        return f"{low}–{high}"
    return f"[{_num(low, digits)}, {_num(high, digits)}]"


def _cell_text(cell: Cell | None) -> str:
    if cell is None:
        return "–"
    text = f"{_num(cell.value)} {_span(*cell.ci95)}".strip()
    if cell.rank is not None:
        text += f" #{cell.rank} ({_span(*cell.rank_ci95)}) G{cell.group}"
    return text


def _score_text(score: tuple[float, float | None] | None) -> str:
    if score is None:
        return "–"
    value, sd = score
    return _num(value) + (f" ±{_num(sd)}" if sd is not None else "")


def _label(entry: Entry) -> str:
    marks = (["joined"] if entry.joined else []) + (["control"] if entry.control else [])
    return entry.encoder + (f" ({', '.join(marks)})" if marks else "")


def legend(board: Leaderboard) -> str:
    """What the cells say, in one paragraph."""
    return (f"Decoder {board.decoder}; protocol {board.signature}. Each diagnostic: value "
            "[95% interval] #rank (rank interval) G tie group. Every pair of ranked encoders is "
            f"tested on the same {board.sentences} test sentences (paired), Holm-corrected over "
            "the diagnostic's pairs; a tie group ends where every encoder above is "
            "significantly better than every encoder below. Controls are shown, not ranked. "
            "Downstream: score ±sd over classifier seeds where there were several. joined: "
            "the row came from a bundle.")


def render(board: Leaderboard, form: str) -> str:
    """The leaderboard as Markdown (`md`), a sortable HTML page (`html`) or CSV (`csv`)."""
    if form == "csv":
        return render_csv(board)
    if form == "html":
        return render_html(board)
    header = ["encoder", *board.diagnostics, *board.tasks]
    lines = ["# Leaderboard", "", legend(board), "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for entry in board.entries:
        cells = [_label(entry)] + [_cell_text(entry.cells.get(d)) for d in board.diagnostics]
        cells += [_score_text(entry.downstream.get(t)) for t in board.tasks]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_csv(board: Leaderboard) -> str:
    """One row per encoder: its marks, then per diagnostic value, interval, rank, rank interval
    and tie group, then per downstream column its score and sd."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["encoder", "source", "joined", "control"]
    for d in board.diagnostics:
        header += [f"{d}", f"{d}_ci_low", f"{d}_ci_high", f"{d}_rank", f"{d}_rank_low",
                   f"{d}_rank_high", f"{d}_group"]
    for t in board.tasks:
        header += [t, f"{t}_sd"]
    writer.writerow(header)
    for entry in board.entries:
        row: list[Any] = [entry.encoder, entry.source, entry.joined, entry.control]
        for d in board.diagnostics:
            cell = entry.cells.get(d) or Cell(value=None)
            row += [cell.value, *cell.ci95, cell.rank, *cell.rank_ci95, cell.group]
        for t in board.tasks:
            row += list(entry.downstream.get(t, (None, None)))
        writer.writerow(["" if v is None else v for v in row])
    return buffer.getvalue()


SORT_SCRIPT = """
function sortBy(index, descending) {
  const body = document.querySelector("#board tbody");
  const rows = Array.from(body.rows);
  const key = row => {
    const value = row.cells[index].dataset.value;
    const number = parseFloat(value);
    return isNaN(number) ? value : number;
  };
  rows.sort((a, b) => {
    const x = key(a), y = key(b);
    const missing = (x === "" ? 1 : 0) - (y === "" ? 1 : 0);
    if (missing) return missing;
    const order = typeof x === "number" && typeof y === "number" ? x - y
      : String(x).localeCompare(String(y));
    return descending ? -order : order;
  });
  rows.forEach(row => body.appendChild(row));
  document.querySelectorAll("#board th").forEach((th, i) => {
    th.setAttribute("aria-sort", i === index ? (descending ? "descending" : "ascending") : "none");
  });
}
document.querySelectorAll("#board th").forEach((th, i) => {
  th.addEventListener("click", () => sortBy(i, th.getAttribute("aria-sort") === "ascending"));
});
const wanted = new URLSearchParams(location.hash.slice(1)).get("sort");
if (wanted) {
  const headers = Array.from(document.querySelectorAll("#board th"));
  const index = headers.findIndex(th => th.dataset.column === wanted);
  if (index >= 0) sortBy(index, headers[index].dataset.descending === "true");
}
"""


def render_html(board: Leaderboard) -> str:
    """A self-contained page: the table sorts by any column on a click (by value; a rank
    column by rank), and by the column named in the address's `#sort=COLUMN` on load."""
    esc = html.escape
    heads = ['<th data-column="encoder">encoder</th>']
    for d in board.diagnostics:
        heads.append(f'<th data-column="{esc(d)}" data-descending='
                     f'"{str(board.higher_is_better.get(d, True)).lower()}">{esc(d)}</th>')
        heads.append(f'<th data-column="{esc(d)}-rank">{esc(d)} rank</th>')
    heads += [f'<th data-column="{esc(t)}" data-descending="true">{esc(t)}</th>'
              for t in board.tasks]
    body = []
    for entry in board.entries:
        cells = [f'<td data-value="{esc(entry.encoder)}">{esc(_label(entry))}</td>']
        for d in board.diagnostics:
            cell = entry.cells.get(d)
            value = "" if cell is None or cell.value is None else json.dumps(cell.value)
            text = "–" if cell is None else f"{_num(cell.value)} {_span(*cell.ci95)}".strip()
            cells.append(f'<td data-value="{value}">{esc(text)}</td>')
            rank = "" if cell is None or cell.rank is None else str(cell.rank)
            rank_text = ("–" if not rank or cell is None else
                         f"#{cell.rank} ({_span(*cell.rank_ci95)}) G{cell.group}")
            cells.append(f'<td data-value="{rank}">{esc(rank_text)}</td>')
        for t in board.tasks:
            score = entry.downstream.get(t)
            cells.append(f'<td data-value="{"" if score is None else score[0]}">'
                         f"{esc(_score_text(score))}</td>")
        classes = " ".join(c for c, on in (("joined", entry.joined),
                                           ("control", entry.control)) if on)
        body.append(f'<tr class="{classes}" data-encoder="{esc(entry.encoder)}">'
                    + "".join(cells) + "</tr>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Leaderboard</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }}
th {{ cursor: pointer; background: #f4f4f4; }}
td:first-child {{ text-align: left; }}
tr.joined td:first-child {{ font-style: italic; }}
tr.control {{ color: #777; }}
</style></head><body>
<h1>Leaderboard</h1>
<p>{esc(legend(board))} Click a column to sort by it.</p>
<table id="board"><thead><tr>{"".join(heads)}</tr></thead>
<tbody>
{chr(10).join(body)}
</tbody></table>
<script>{SORT_SCRIPT}</script>
</body></html>
"""
