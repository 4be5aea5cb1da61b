"""The bench's figures: one row per case and mode, totals per mode side by side, as plain-text tables."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fixloop.bench.statuses import STATUSES, counts_as_fixed, status_label
from fixloop.bench.store import RunRecord

STATUS_ORDER = STATUSES
CASE_COLUMNS = (
    "case",
    "mode",
    "status",
    "steps",
    "attempts",
    "prompt tok",
    "completion tok",
    "model s",
    "test s",
    "wall s",
    "distinct/round",
)


@dataclass(frozen=True)
class CaseRow:
    """One case in one mode over its repeats: the status (or the success rate) and median figures."""

    case: str
    mode: str
    status: str
    fixed: int  # runs fixed, unchecked ones included
    runs: int
    steps: float
    attempts: float
    prompt_tokens: float
    completion_tokens: float
    model_seconds: float
    test_seconds: float
    wall_seconds: float
    per_round: str  # distinct candidates / drawn, the mean of its sampling rounds ("-": none)
    note: str
    transcripts: tuple[str, ...]

    def cells(self) -> tuple[str, ...]:
        return (
            self.case,
            self.mode,
            self.status,
            _number(self.steps),
            _number(self.attempts),
            _number(self.prompt_tokens),
            _number(self.completion_tokens),
            _seconds(self.model_seconds),
            _seconds(self.test_seconds),
            _seconds(self.wall_seconds),
            self.per_round,
        )


def _kinds_tried(record: RunRecord) -> float:
    """Kinds of round a run moved through (next suspect, line-level, the loop): 0 to 3."""
    return len([kind for kind in record.rounds_tried.split(",") if kind])


def _median(records: Sequence[RunRecord], value: Callable[[RunRecord], float]) -> float:
    return statistics.median(value(record) for record in records) if records else 0.0


def reported_median(value: Callable[[RunRecord], int | None]) -> Callable[[Sequence[RunRecord]], str]:
    """The median of a figure over the runs whose server reported it; "-" when none did."""

    def figure(records: Sequence[RunRecord]) -> str:
        known = [number for number in map(value, records) if number is not None]
        return _number(statistics.median(known)) if known else "-"

    return figure


def _number(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def _share(flags: Sequence[bool | None]) -> str:
    known = [flag for flag in flags if flag is not None]
    return f"{sum(known)}/{len(known)}" if known else "-"


def _seconds(value: float) -> str:
    return f"{value:.1f}"


def distinct_per_round(records: Sequence[RunRecord]) -> str:
    """ "distinct/drawn": the mean over every sampling round of the runs of the distinct change sets its
    candidates made and the candidates drawn; "-" when no run sampled."""
    rounds = [(d, n) for record in records for d, n in zip(record.distinct, record.drawn, strict=False)]
    if not rounds:
        return "-"
    distinct = statistics.mean(d for d, _ in rounds)
    drawn = statistics.mean(n for _, n in rounds)
    return f"{_number(round(distinct, 1))}/{_number(round(drawn, 1))}"


def case_rows(records: Sequence[RunRecord]) -> list[CaseRow]:
    """Rows in the order the records' cases and modes first appear."""
    groups: dict[tuple[str, str], list[RunRecord]] = {}
    for record in records:
        groups.setdefault((record.case, record.mode), []).append(record)
    rows = []
    for (case, mode), runs in groups.items():
        rows.append(
            CaseRow(
                case,
                mode,
                _repeats_status(runs),
                sum(counts_as_fixed(run.status) for run in runs),
                len(runs),
                _median(runs, lambda r: r.steps),
                _median(runs, lambda r: r.attempts),
                _median(runs, lambda r: r.prompt_tokens),
                _median(runs, lambda r: r.completion_tokens),
                _median(runs, lambda r: r.model_seconds),
                _median(runs, lambda r: r.test_seconds),
                _median(runs, lambda r: r.wall_seconds),
                distinct_per_round(runs),
                _note(runs),
                tuple(run.transcript for run in runs if run.transcript),
            )
        )
    return rows


def _repeats_status(runs: Sequence[RunRecord]) -> str:
    """The status of a case's runs in one mode: the one they share, or how many of them were fixed
    ("fixed 2/3"; "fixed (unchecked) 2/3" on a case without hidden checks; both when both happened)."""
    if len({run.status for run in runs}) == 1:
        return status_label(runs[0].status)
    fixed = sum(run.status == "fixed" for run in runs)
    unchecked = sum(run.status == "fixed_unchecked" for run in runs)
    if unchecked and not fixed:
        return f"fixed (unchecked) {unchecked}/{len(runs)}"
    return f"fixed {fixed}/{len(runs)}" + (f" + {unchecked} unchecked" if unchecked else "")


def _note(runs: Sequence[RunRecord]) -> str:
    """The judge's reason of the last run not fixed (else of the last run); a plausible run's with the case's
    reference, the original text where the bug is."""
    run = next((run for run in reversed(runs) if run.status != "fixed"), runs[-1])
    return run.note + (f"; reference {run.reference}" if run.reference else "")


def _fix_rate(runs: Sequence[RunRecord]) -> str:
    """Fixed runs (hidden checks passed too) over all runs; runs fixed on cases without hidden checks said
    apart."""
    fixed = sum(run.status == "fixed" for run in runs)
    unchecked = sum(run.status == "fixed_unchecked" for run in runs)
    more = f" (+{unchecked} unchecked)" if unchecked else ""
    return f"{fixed}/{len(runs)} = {100 * fixed / len(runs):.0f}%{more}" if runs else "-"


def mode_totals(records: Sequence[RunRecord], modes: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(figure, one value per mode) lines: runs, each status, fix rate, medians, totals."""
    by_mode = {mode: [record for record in records if record.mode == mode] for mode in modes}

    def line(label: str, value: Callable[[list[RunRecord]], str]) -> tuple[str, list[str]]:
        return label, [value(by_mode[mode]) for mode in modes]

    def count(status: str) -> Callable[[list[RunRecord]], str]:
        return lambda runs: str(sum(run.status == status for run in runs))

    def fixed_median(value: Callable[[RunRecord], float]) -> Callable[[list[RunRecord]], str]:
        def figure(runs: list[RunRecord]) -> str:
            fixed = [run for run in runs if counts_as_fixed(run.status)]
            return _number(round(_median(fixed, value), 1)) if fixed else "-"

        return figure

    return [
        line("runs", lambda runs: str(len(runs))),
        line("fix rate", _fix_rate),
        *(line(status_label(status), count(status)) for status in STATUS_ORDER),
        line("edited a bug file", lambda runs: _share([r.edited_bug_file for r in runs])),
        line("median steps", lambda runs: _number(_median(runs, lambda r: r.steps))),
        line("median kinds of round tried", lambda runs: _number(_median(runs, _kinds_tried))),
        line("median prompt tokens", lambda runs: _number(_median(runs, lambda r: r.prompt_tokens))),
        line("median completion tokens", lambda runs: _number(_median(runs, lambda r: r.completion_tokens))),
        line("median prompt tokens processed", reported_median(lambda r: r.prompt_processed)),
        line("median prompt tokens cached", reported_median(lambda r: r.prompt_cached)),
        line("median model requests", lambda runs: _number(_median(runs, lambda r: r.model_requests))),
        line("median model s", lambda runs: _seconds(_median(runs, lambda r: r.model_seconds))),
        line("median test s", lambda runs: _seconds(_median(runs, lambda r: r.test_seconds))),
        line("median wall s", lambda runs: _seconds(_median(runs, lambda r: r.wall_seconds))),
        line("median tokens, fixed runs", fixed_median(lambda r: r.prompt_tokens + r.completion_tokens)),
        line("median wall s, fixed runs", fixed_median(lambda r: r.wall_seconds)),
        line("distinct/drawn per round", distinct_per_round),
        line("total tokens", lambda runs: _number(sum(r.prompt_tokens + r.completion_tokens for r in runs))),
        line("total wall s", lambda runs: _seconds(sum(r.wall_seconds for r in runs))),
    ]


def status_matrix(records: Sequence[RunRecord], modes: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(case, its status in each mode) for comparing modes case by case."""
    rows = {(row.case, row.mode): row.status for row in case_rows(records)}
    cases = list(dict.fromkeys(record.case for record in records))
    return [(case, [rows.get((case, mode), "-") for mode in modes]) for case in cases]


def uniquely_fixed(records: Sequence[RunRecord], modes: Sequence[str]) -> dict[str, list[str]]:
    """Per mode, the cases it fixed (in at least one repeat; unchecked fixes too) that no other mode fixed."""
    fixed = {
        mode: {r.case for r in records if r.mode == mode and counts_as_fixed(r.status)} for mode in modes
    }
    return {
        mode: sorted(fixed[mode] - set().union(*(fixed[m] for m in modes if m != mode))) for mode in modes
    }


def render(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table, columns padded; numbers right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def fmt(cells: Sequence[str]) -> str:
        parts = [
            cell.rjust(width) if _numeric(cell) else cell.ljust(width)
            for cell, width in zip(cells, widths, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return "\n".join([fmt(header), fmt(["-" * width for width in widths]), *(fmt(row) for row in rows)])


def _numeric(cell: str) -> bool:
    return bool(cell) and cell.replace(",", "").replace(".", "").replace("%", "").isdigit()


def bench_text(records: Sequence[RunRecord], modes: Sequence[str]) -> str:
    """Everything the terminal shows at the end: per case, per mode side by side, the comparison."""
    parts = [render(CASE_COLUMNS, [row.cells() for row in case_rows(records)])]
    parts.append(render(["", *modes], [[label, *values] for label, values in mode_totals(records, modes)]))
    if len(modes) > 1:
        parts.append(
            render(["case", *modes], [[case, *values] for case, values in status_matrix(records, modes)])
        )
        unique = uniquely_fixed(records, modes)
        parts.append(
            "\n".join(f"fixed only by {mode}: {', '.join(cases) or 'none'}" for mode, cases in unique.items())
        )
    return "\n\n".join(parts)
