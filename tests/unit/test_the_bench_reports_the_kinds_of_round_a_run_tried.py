"""The bench records which kinds of round a run moved through and reports their median per mode."""

from __future__ import annotations

import json

from fixloop.bench.store import ResultsStore, RunRecord
from fixloop.bench.table import mode_totals


def test_rounds_tried_survive_the_results_file_and_reach_the_table(tmp_path) -> None:
    store = ResultsStore(tmp_path / "results.jsonl")
    store.append(RunRecord("a", "sample", 1, "m", "not_fixed", rounds_tried="suspect,lines,loop"))
    store.append(RunRecord("b", "sample", 1, "m", "fixed", rounds_tried="suspect"))
    store.append(RunRecord("c", "sample", 1, "m", "fixed"))
    loaded = list(store.load().values())
    assert sorted(record.rounds_tried for record in loaded) == ["", "suspect", "suspect,lines,loop"]
    rows = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    assert rows["rounds_tried"] == "suspect,lines,loop"
    totals = dict(mode_totals(loaded, ["sample"]))
    assert totals["median kinds of round tried"] == ["1"]
