"""`fixloop fix` as a subprocess: diff on stdout, live view on stderr, exit codes, --json, --apply."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from support import fix_script, load_fix, project_python


def fixloop(
    root: Path, *args: str, base_url: str | None = None, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
    if base_url:
        full_env.update(
            FIXLOOP_BASE_URL=base_url,
            FIXLOOP_MODEL="scripted",
            FIXLOOP_MUTANTS="off",
            FIXLOOP_POOL_SHARE="0",
            FIXLOOP_API_KEY="none",
        )
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "fixloop", "fix", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


def test_fix_prints_a_diff_that_git_apply_takes(fixture_project, scripted_model):
    root = fixture_project("demo")
    server = scripted_model(fix_script("demo"))
    ids = load_fix("demo")["test_ids"]
    done = fixloop(root, *ids, base_url=server.base_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("--- a/")
    assert "verified" in done.stderr and "step 1" in done.stderr
    # the user's files are untouched without --apply; the diff applies cleanly
    assert (
        subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
        == ""
    )
    subprocess.run(["git", "apply", "-"], cwd=root, input=done.stdout, text=True, check=True)
    after = subprocess.run(
        [project_python(), "-m", "pytest", "-q", "-p", "no:cacheprovider", *ids],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert after.returncode == 0, after.stdout


def test_fix_json_and_apply(fixture_project, scripted_model):
    root = fixture_project("demo")
    server = scripted_model(fix_script("demo"))
    done = fixloop(root, *load_fix("demo")["test_ids"], "--json", "--apply", "-q", base_url=server.base_url)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "fixed" and result["applied"] is True
    assert set(result) >= {
        "runId",
        "status",
        "testIds",
        "summary",
        "diff",
        "files",
        "applied",
        "steps",
        "attempts",
        "usage",
        "seconds",
        "transcript",
    }
    assert Path(result["transcript"]).is_file()
    assert not str(result["transcript"]).startswith(str(root))
    edited = load_fix("demo")["edits"][0]
    assert edited["new_text"] in (root / edited["path"]).read_text()


def test_not_fixed_exits_1(fixture_project, scripted_model):
    root = fixture_project("demo")
    server = scripted_model([{"tool_calls": [{"name": "submit", "arguments": {"summary": "x"}}]}] * 3)
    done = fixloop(root, *load_fix("demo")["test_ids"], base_url=server.base_url)
    assert done.returncode == 1
    assert done.stdout == ""


@pytest.mark.parametrize(
    "case", ["unknown_test", "unreachable", "bad_key", "outside", "no_model", "bad_setting"]
)
def test_bad_input_gives_one_line_and_exit_2(fixture_project, scripted_model, tmp_path, case):
    root = fixture_project("demo")
    ids = load_fix("demo")["test_ids"]
    server = scripted_model([{"fault": "401"}] if case == "bad_key" else fix_script("demo"))
    args, env, base_url = list(ids), {}, server.base_url
    if case == "unknown_test":
        args = ["tests/test_nope.py::test_missing"]
    elif case == "unreachable":
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        env = {"FIXLOOP_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    elif case == "outside":
        outside = tmp_path / "elsewhere.py"
        outside.write_text("def test_x():\n    assert False\n")
        args = [f"{outside}::test_x"]
    elif case == "no_model":
        base_url, env = None, {}
    elif case == "bad_setting":
        args += ["--max-steps", "0"]
    done = fixloop(root, *args, base_url=base_url, env=env)
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.startswith("fixloop: ")]
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    expected = {
        "unknown_test": "not found",
        "unreachable": "connection refused",
        "bad_key": "FIXLOOP_API_KEY",
        "outside": "outside the project",
        "no_model": "no model configured",
        "bad_setting": "maxSteps",
    }[case]
    assert expected in lines[0]


def test_a_hanging_test_is_killed_and_named(fixture_project, scripted_model):
    root = fixture_project("hangs")
    useless_edit = {
        "path": "lookup/bisect_search.py",
        "old_text": "    return -1",
        "new_text": "    return -1  # absent",
    }
    server = scripted_model(
        [
            {"tool_calls": [{"name": "edit_file", "arguments": useless_edit}]},
            {"tool_calls": [{"name": "submit", "arguments": {"summary": "x"}}]},
        ]
    )
    done = fixloop(
        root,
        *load_fix("hangs")["test_ids"],
        "--attempts",
        "1",
        "--test-timeout",
        "3",
        base_url=server.base_url,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    final = [line for line in done.stderr.splitlines() if line.startswith("not_fixed")]
    assert len(final) == 1 and "timed out" in final[0] and "test_finds_last_item" in final[0]


def test_the_live_view_shows_thoughts_and_one_line_per_call_never_json(fixture_project, scripted_model):
    root = fixture_project("demo")
    edit = load_fix("demo")["edits"][0]
    babble = "\n\n### tests/test_mathutils.py (lines 12-13) the test\n" + "and so on " * 30
    call = {"name": "edit_file", "arguments": {k: edit[k] for k in ("path", "old_text", "new_text")}}
    turns = [
        {
            "content": "It adds where it should multiply.\n```json\n" + json.dumps(call) + "\n```" + babble,
            "chunk_chars": 4,
        },
        {"content": '<tool_call>\n{"name": "run_tests", "arguments": {}}\n</tool_call>' + babble},
        {"content": '```json\n{"name": "submit", "arguments": {"summary": "multiplies"}}\n```' + babble},
    ]
    done = fixloop(root, *load_fix("demo")["test_ids"], base_url=scripted_model(turns).base_url)
    assert done.returncode == 0, done.stderr
    assert "It adds where it should multiply." in done.stderr
    assert f"→ edit_file {edit['path']}" in done.stderr and "→ run_tests" in done.stderr
    assert done.stderr.count(f"→ edit_file {edit['path']}") == 1  # announced while written, not again
    for piece in ('"name"', '"arguments"', "old_text", "```", "<tool_call>", "and so on"):
        assert piece not in done.stderr
