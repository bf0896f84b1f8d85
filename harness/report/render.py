"""The report rendered as Markdown (figures linked from figures/) and as self-contained HTML
(figures embedded as base64 PNG; nothing is fetched)."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterator

from harness.report.elements import FIGURES_DIR, Section
from harness.report.header import provenance_line
from harness.results.model import RunResults

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")

CONTENTS = "Contents"


def anchor(title: str) -> str:
    """A section's anchor as GitHub and the HTML report make it: lower case, punctuation
    dropped, spaces as hyphens ("Gain over the floor" -> "gain-over-the-floor")."""
    kept = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def _blocks(lines: list[str]) -> Iterator[tuple[str, list[str]]]:
    """("p", [line]) per paragraph and ("ul", items) per run of "- " lines."""
    items: list[str] = []
    for line in lines:
        if line.startswith("- "):
            items.append(line[2:])
            continue
        if items:
            yield "ul", items
            items = []
        yield "p", [line]
    if items:
        yield "ul", items


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(results: RunResults, sections: list[Section]) -> str:
    """The Markdown report of `sections`."""
    lines = [f"# V2S report: {results.name}", "", provenance_line(results), ""]
    if len(sections) > 1:
        lines += [f"**{CONTENTS}**", ""]
        lines += [f"- [{s.title}](#{anchor(s.title)})" for s in sections] + [""]
    for section in sections:
        lines += [f"## {section.title}", ""]
        for kind, block in _blocks(section.text):
            lines += [f"- {item}" for item in block] if kind == "ul" else block
            lines.append("")
        for name in section.figures:
            lines += [f"![{section.title}]({FIGURES_DIR}/{name})", ""]
        for caption, header, rows in section.tables:
            if caption:
                lines += [f"**{caption}**", ""]
            lines += ["| " + " | ".join(_md_cell(h) for h in header) + " |",
                      "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(_md_cell(c) for c in cells) + " |" for cells in rows]
            lines.append("")
    return "\n".join(lines)


_STYLE = ("body{font-family:sans-serif;margin:2em;max-width:1400px}"
          "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
          "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right;white-space:nowrap}"
          "td:first-child,th:first-child{text-align:left}"
          "table.text td,table.text th{text-align:left}"
          "table.text td:last-child,table.samples td:last-child{white-space:normal}"
          "table.samples td:last-child{text-align:left;font-family:monospace}"
          "table.samples th:last-child{text-align:left}"
          "img{max-width:100%;height:auto;display:block;margin:0.5em 0}"
          "img.scatter{max-width:32%;display:inline-block;margin:0.5em 1% 0.5em 0}"
          "caption{text-align:left;font-weight:bold;padding:0.3em 0}"
          ".scroll{overflow-x:auto}")


def _inline(text: str) -> str:
    """Escaped text with its Markdown links as anchors."""
    return _LINK.sub(lambda m: f"<a href='{m.group(2)}'>{m.group(1)}</a>", html.escape(text))


def page(results: RunResults, sections: list[Section], figures: dict[str, bytes]) -> str:
    """The self-contained HTML report of `sections`, embedding `figures`."""
    esc = html.escape
    parts = [f"<h1>V2S report: {esc(results.name)}</h1>",
             f"<p>{esc(provenance_line(results))}</p>"]
    if len(sections) > 1:
        parts.append(f"<nav id='contents'><h2>{CONTENTS}</h2><ol>"
                     + "".join(f"<li><a href='#{anchor(s.title)}'>{esc(s.title)}</a></li>"
                               for s in sections) + "</ol></nav>")
    for section in sections:
        parts.append(f"<section id='{anchor(section.title)}'><h2>{esc(section.title)}</h2>")
        for kind, block in _blocks(section.text):
            if kind == "ul":
                parts.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in block) + "</ul>")
            else:
                parts.append(f"<p>{_inline(block[0])}</p>")
        for name in section.figures:
            data = base64.b64encode(figures[name]).decode("ascii")
            stem = name.rsplit(".", 1)[0]
            style = " class='scatter'" if stem.startswith("scatter-") else ""
            parts.append(f"<img id='{esc(stem)}'{style} alt='{esc(section.title)}' "
                         f"src='data:image/png;base64,{data}'>")
        for caption, header, rows in section.tables:
            kind = f" class='{esc(section.kind)}'" if section.kind else ""
            parts.append(f"<div class='scroll'><table{kind}>"
                         + (f"<caption>{esc(caption)}</caption>" if caption else "")
                         + "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>")
            parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>"
                      for cells in rows]
            parts.append("</table></div>")
        parts.append("</section>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>V2S report: "
            f"{esc(results.name)}</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>\n")
