#!/usr/bin/env bash
# Runs fixloop's whole test suite on a fresh machine: makes .venv, installs fixloop with its test
# tools, sets up the real editors for the e2e tests (apt, Node 24, code-server; cached, idempotent),
# then runs pytest in two parts:
#   1. every test but the real-editor and real-model ones, spread over pytest-xdist workers
#      (FIXLOOP_TEST_WORKERS, default 3 on a 2-core machine: most tests wait on a child process), one
#      file per worker at a time, slowest first; the editors are set up in the background meanwhile;
#   2. apart from the rest, so they do not fight it over the cores: the real-editor (e2e) tests, two at a
#      time (FIXLOOP_EDITOR_WORKERS), and the real-model (live) tests, one at a time (with `-m "not e2e"`
#      and no live model set, FIXLOOP_LIVE_MODEL or FIXLOOP_MODEL, there is nothing to run here).
# The venv and pip steps are skipped while pyproject.toml and the interpreter are those of the last
# install (recorded in .venv/.installed-from; delete it to install again).
# Extra arguments go to both parts (e.g. `-m "not e2e"` skips the editors and part 2, `-k NAME`, a path).
# The last line sums both parts up: "suite: N passed, N failed, N skipped".
#   usage: scripts/test.sh [PYTEST_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
installed_from="$(python3 --version) $(sha256sum pyproject.toml)"
if [ ! -x .venv/bin/python ] || [ "$(cat .venv/.installed-from 2>/dev/null)" != "$installed_from" ]; then
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[dev]'
  echo "$installed_from" >.venv/.installed-from
fi

skip_e2e=0
for arg in "$@"; do case "$arg" in *"not e2e"*) skip_e2e=1 ;; esac; done
counts="$(mktemp -d)"
setup_pid=""
if [ "$skip_e2e" = 0 ] && [ "${FIXLOOP_SKIP_E2E_SETUP:-0}" != 1 ] && [ -f scripts/setup-e2e.sh ]; then
  bash scripts/setup-e2e.sh >"$counts/setup-e2e.log" 2>&1 &
  setup_pid=$!
  export FIXLOOP_E2E_REQUIRED="${FIXLOOP_E2E_REQUIRED:-${CI:+1}}"
fi
trap '[ -n "$setup_pid" ] && kill "$setup_pid" 2>/dev/null; rm -rf "$counts"' EXIT

part() {  # part NAME PYTEST_ARGS...: runs pytest, keeps its exit code and outcome counts
  local name="$1" code=0
  shift
  .venv/bin/python -m pytest --suite-counts "$counts/$name.json" "$@" || code=$?
  echo "$code" >"$counts/$name.code"
}

set +e
part main --suite-part main -n "${FIXLOOP_TEST_WORKERS:-3}" --dist loadfile --no-loadscope-reorder "$@"
if [ -n "$setup_pid" ]; then
  wait "$setup_pid"
  setup_code=$?
  setup_pid=""
  cat "$counts/setup-e2e.log"
  [ "$setup_code" = 0 ] || echo "scripts/setup-e2e.sh failed (exit $setup_code); the e2e tests say what is missing" >&2
fi
if [ "$skip_e2e" = 1 ] && [ -z "${FIXLOOP_LIVE_MODEL:-}${FIXLOOP_MODEL:-}" ]; then
  echo 5 >"$counts/apart.code"  # pytest's "no tests ran": no editors asked for, no live model set
else
  part apart --suite-part apart -n "${FIXLOOP_EDITOR_WORKERS:-2}" --dist loadgroup "$@"
fi
code=0
.venv/bin/python scripts/suite_total.py "$counts" || code=$?  # not exec'd: the EXIT trap removes $counts
exit "$code"

