"""Bench results as JSON lines, one finished run a line, appended as runs finish, so a bench resumes."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import platformdirs

from fixloop.errors import ConfigError


@dataclass(frozen=True)
class RunRecord:
    """One finished run of one case in one mode, as the judge scored it."""

    case: str
    mode: str
    repeat: int  # 1-based
    model: str
    status: str  # one of fixloop.bench.statuses.STATUSES
    claimed: bool = False  # the mode said its fix works
    note: str = ""  # the judge's reason, or the error
    summary: str = ""  # the mode's own summary
    steps: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0
    test_seconds: float = 0.0
    wall_seconds: float = 0.0  # copy, setup and the mode's run (the judge not included)
    judge_seconds: float = 0.0
    transcript: str | None = None
    diff: str = ""
    kind: str = ""
    edited_bug_file: bool | None = None  # the diff touches one of the case's bug_files (None: none listed)
    finished: str = ""
    commit: str = ""  # fixloop's git revision, or its version when not a checkout
    model_id: str = ""  # the model's name; a local model's with its file's sha256 prefix
    machine: str = ""  # cores, memory, CPU model
    distinct: tuple[int, ...] = ()  # per sampling round: the distinct change sets its candidates made
    drawn: tuple[int, ...] = ()  # per sampling round: the candidates drawn (re-asks included)
    rounds_tried: str = ""  # the kinds of round the run moved through (suspect, lines, loop), comma-separated
    hidden_checks: int | None = None  # the case's hidden test files (0: none; None: a row from before them)
    reference: str = ""  # a plausible run's case reference: the original text where the bug is
    line_answers_invalid: int = 0  # of its line-level rounds' answers, those refused as invalid
    line_answers_drawn: int = 0  # its line-level rounds' answers drawn (0: none, or a row from before them)
    candidates_unchanged: int = 0  # of the candidates of all its rounds, copies back of the code unchanged
    candidates_drawn: int = 0  # the candidates of all its rounds (line answers and re-asks included)
    prompt_processed: int | None = None  # prompt tokens the server read anew (None: it did not say)
    prompt_cached: int | None = None  # prompt tokens it found in its prompt cache (None: it did not say)
    model_requests: int = 0  # chat requests answered (0 in a row from before they were counted)
    origin: str = ""  # the round that found the proposed fix ("mutants": one-token search; "": none, unsaid)

    @property
    def key(self) -> tuple[str, str, int, str]:
        return run_key(self.case, self.mode, self.repeat, self.model)

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        for name in ("model_seconds", "test_seconds", "wall_seconds", "judge_seconds"):
            data[name] = round(data[name], 2)
        return data


def run_key(case: str, mode: str, repeat: int, model: str) -> tuple[str, str, int, str]:
    return case, mode, repeat, model


_FIELDS = {field.name for field in fields(RunRecord)}


def read_row(data: dict[str, Any]) -> RunRecord:
    """One results line as a record. A row from before hidden checks (no `hidden_checks` field) was judged
    on the visible tests alone: its `fixed` reads as `fixed_unchecked`."""
    known = {key: value for key, value in data.items() if key in _FIELDS}
    if "hidden_checks" not in data and known.get("status") == "fixed":
        known["status"] = "fixed_unchecked"
    return RunRecord(**known)


def default_results_path() -> Path:
    return Path(platformdirs.user_cache_dir("fixloop")) / "bench" / "results.jsonl"


class ResultsStore:
    """A bench's JSONL file: the last record of each (case, mode, repeat, model) is the one that counts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.exists() and not path.is_file():
            raise ConfigError(f"--results {path} is not a file")

    def check_writable(self) -> None:
        """Fail before a long bench, not after it, when the file cannot be written."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8"):
                pass
        except OSError as error:
            reason = error.strerror or error
            raise ConfigError(f"cannot write the results file {self.path}: {reason}") from None

    def load(self) -> dict[tuple[str, str, int, str], RunRecord]:
        """The finished runs in the file (unreadable lines, e.g. cut by a kill, are skipped)."""
        records: dict[tuple[str, str, int, str], RunRecord] = {}
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return records
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read the results file {self.path}: {error}") from None
        for line in lines:
            try:
                record = read_row(json.loads(line))
            except (ValueError, TypeError, AttributeError):
                continue
            records[record.key] = record
        return records

    def append(self, record: RunRecord) -> RunRecord:
        """Write one finished run at once (flushed), stamped with the time it finished."""
        stamped = RunRecord(**{**record.to_json(), "finished": time.strftime("%Y-%m-%dT%H:%M:%S")})
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as file:
                file.write(json.dumps(stamped.to_json(), ensure_ascii=False) + "\n")
        except OSError as error:
            raise ConfigError(f"cannot write the results file {self.path}: {error}") from None
        return stamped
