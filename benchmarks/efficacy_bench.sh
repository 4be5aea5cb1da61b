#!/usr/bin/env bash
# The efficacy comparison on the bench's small-model subset with the managed 1.5B model: fixloop with
# sampling first (`sample`), fixloop's loop with its sampling rounds (`react`) and the one-prompt baseline
# (`oneshot`), one mode after the other so the headline comes first; results are resumable.
#
#   benchmarks/efficacy_bench.sh [CASES_DIR] [RESULTS_DIR] [MODES]
#
# CASES_DIR: the library cases `python fixtures/bench/build.py --out DIR` built (default fixtures/bench/cases);
# RESULTS_DIR: where results.jsonl and the reports go (default ~/.cache/fixloop/bench/efficacy); MODES:
# default "sample react oneshot". Ablations switch one ingredient off through its environment variable, e.g.
#   FIXLOOP_SAMPLES=1 FIXLOOP_LOCALIZE=off FIXLOOP_EDIT_FORM=tools FIXLOOP_FEEDBACK=reasons
#   FIXLOOP_SAMPLE_FOCUS=0
# with their own RESULTS_DIR (the results file keys runs by case, mode and model, not by settings).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cases=${1:-$here/fixtures/bench/cases}
out=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/fixloop/bench/efficacy}
modes=${3:-sample react oneshot}
fixloop=${FIXLOOP_BIN:-$here/.venv/bin/fixloop}
mkdir -p "$out"
for mode in $modes; do
  "$fixloop" bench "$here/fixtures/bench/projects" "$cases" \
    --subset "$here/fixtures/bench/subsets/small-model.txt" \
    --mode "$mode" --model local --max-steps 15 --jobs 1 \
    --results "$out/results.jsonl" --report "$out/$mode.md"
done
"$fixloop" bench "$here/fixtures/bench/projects" "$cases" --subset "$here/fixtures/bench/subsets/small-model.txt" \
  --mode "$(echo "$modes" | tr ' ' ',')" --model local --max-steps 15 --jobs 1 \
  --results "$out/results.jsonl" --report "$out/all.md"
