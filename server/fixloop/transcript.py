"""The JSONL transcript of a run, under the user cache directory (never in the project), secrets redacted."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import platformdirs

from fixloop.events import event_name

REDACTED = "[REDACTED]"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
_MIN_SECRET_LENGTH = 8  # shorter env values ("1", "true") would redact ordinary words
_PATTERNS = (
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"), "sk-" + REDACTED),
    (re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._\-~+/]+=*", re.IGNORECASE), r"\1 " + REDACTED),
    (re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
    (
        re.compile(
            r"""(?i)\b([\w-]*(?:api[_-]?key|token|secret|password)["']?\s*[:=]\s*["']?)([^\s"',;]{6,})"""
        ),
        r"\1" + REDACTED,
    ),
)


def transcripts_dir() -> Path:
    return Path(platformdirs.user_cache_dir("fixloop")) / "transcripts"


def _secret_values() -> list[str]:
    values = {
        value
        for name, value in os.environ.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """`text` with API keys, bearer tokens and the values of secret-named environment variables hidden."""
    for value in _secret_values():
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(key)): _redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_redact_value(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _redact_value(dataclasses.asdict(value))
    if isinstance(value, Path):
        return redact(str(value))
    if value is None or isinstance(value, bool | int | float):
        return value
    return redact(str(value))


class Transcript:
    """One run's records, one JSON object a line, flushed as they come so a crash loses nothing."""

    def __init__(self, path: Path, file: IO[str]) -> None:
        self.path = path
        self._file: IO[str] | None = file
        self._started = time.monotonic()

    @classmethod
    def open(cls, run_id: str, meta: dict[str, Any], directory: Path | None = None) -> Transcript:
        """Start `<date>-<run_id>.jsonl` in `directory` (default: the user cache dir) with a meta record."""
        folder = Path(directory) if directory is not None else transcripts_dir()
        folder.mkdir(parents=True, exist_ok=True)
        safe_id = re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)
        path = folder / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{safe_id}.jsonl"
        transcript = cls(path, path.open("a", encoding="utf-8"))
        transcript.write("meta", run_id=run_id, started=datetime.now(UTC).isoformat(), **meta)
        return transcript

    def event(self, event: Any) -> None:
        """Record a `fixloop.events` event: {"t": seconds, "type": its name, ...its fields}."""
        self.write(event_name(event), **dataclasses.asdict(event))

    def write(self, kind: str, /, **data: Any) -> None:
        """Record anything else (tool results, verdict details, the result); silently ignored once closed."""
        if self._file is None:
            return
        record = {"t": round(time.monotonic() - self._started, 3), "type": kind}
        record.update({key: _redact_value(value) for key, value in data.items() if key not in record})
        self._file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """The records of a transcript; a torn last line (the process died mid-write) is skipped."""
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records
