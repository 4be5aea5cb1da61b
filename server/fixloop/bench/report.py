"""The bench report file: the tables as Markdown or HTML, each case linked to its run's transcript."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from fixloop.bench.store import RunRecord
from fixloop.bench.table import CASE_COLUMNS, case_rows, mode_totals, status_matrix, uniquely_fixed
from fixloop.errors import ConfigError

REPORT_SUFFIXES = (".md", ".markdown", ".html", ".htm")


def check_report_path(path: Path | None) -> None:
    if path is not None and path.suffix.lower() not in REPORT_SUFFIXES:
        raise ConfigError(f"--report {path}: name an .html or .md file")


def _link(path: str) -> str:
    return Path(path).resolve().as_uri() if path else ""


Table = tuple[str, list[str], list[list[str]]]


def _tables(records: Sequence[RunRecord], modes: Sequence[str]) -> list[Table]:
    """(title, header, rows) of every table; a transcript cell holds the paths, one a line."""
    rows = []
    for row in case_rows(records):
        rows.append([*row.cells(), row.note, "\n".join(row.transcripts)])
    tables = [
        ("Cases", [*CASE_COLUMNS, "note", "transcript"], rows),
        ("Modes", ["", *modes], [[label, *values] for label, values in mode_totals(records, modes)]),
    ]
    if len(modes) > 1:
        matrix = [[case, *values] for case, values in status_matrix(records, modes)]
        tables.append(("Case by case", ["case", *modes], matrix))
    return tables


def markdown_report(records: Sequence[RunRecord], modes: Sequence[str], title: str) -> str:
    out = [f"# {title}", ""]
    for name, header, rows in _tables(records, modes):
        out += [f"## {name}", "", "| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        for row in rows:
            cells = [_md_cell(cell, header[index] == "transcript") for index, cell in enumerate(row)]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if len(modes) > 1:
        out += [
            f"- fixed only by {mode}: {', '.join(cases) or 'none'}"
            for mode, cases in uniquely_fixed(records, modes).items()
        ]
        out.append("")
    return "\n".join(out)


def _md_cell(cell: str, transcript: bool) -> str:
    if transcript:
        return " ".join(f"[{index}]({_link(path)})" for index, path in enumerate(cell.split("\n"), 1) if path)
    return cell.replace("|", "\\|").replace("\n", " ")


def html_report(records: Sequence[RunRecord], modes: Sequence[str], title: str) -> str:
    out = [
        "<!doctype html>",
        '<html><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif}table{border-collapse:collapse;margin-bottom:2em}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}td.n{text-align:right}"
        ".fixed{color:#080}.plausible{color:#b60;font-weight:bold}.claimed_but_wrong{color:#c00;font-weight:bold}"
        "</style>",
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    for name, header, rows in _tables(records, modes):
        out.append(
            f"<h2>{html.escape(name)}</h2><table><tr>"
            + "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
            + "</tr>"
        )
        for row in rows:
            out.append(
                "<tr>"
                + "".join(_html_cell(cell, header[index] == "transcript") for index, cell in enumerate(row))
                + "</tr>"
            )
        out.append("</table>")
    if len(modes) > 1:
        items = [
            f"<li>fixed only by {html.escape(mode)}: {html.escape(', '.join(cases) or 'none')}</li>"
            for mode, cases in uniquely_fixed(records, modes).items()
        ]
        out.append("<ul>" + "".join(items) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out)


def _html_cell(cell: str, transcript: bool) -> str:
    if transcript:
        links = [
            f'<a href="{html.escape(_link(path))}">{index}</a>'
            for index, path in enumerate(cell.split("\n"), 1)
            if path
        ]
        return f"<td>{' '.join(links)}</td>"
    numeric = cell.replace(",", "").replace(".", "").isdigit()
    kind = ' class="n"' if numeric else f' class="{html.escape(cell)}"' if " " not in cell else ""
    return f"<td{kind}>{html.escape(cell)}</td>"


def write_report(path: Path, records: Sequence[RunRecord], modes: Sequence[str], title: str) -> None:
    renderer = html_report if path.suffix.lower() in (".html", ".htm") else markdown_report
    text = renderer(records, modes, title)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot write the report {path}: {error.strerror or error}") from None
