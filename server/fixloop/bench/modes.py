"""The ways the bench fixes a case: `react` (fixloop's engine), `oneshot` (one prompt), `sample` (a hook)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixloop.bench.cases import BenchCase
from fixloop.bench.mode_run import ModeRun
from fixloop.config import Settings
from fixloop.errors import ConfigError, FixloopError

if TYPE_CHECKING:
    from fixloop.engine import FixRun

Mode = Callable[[BenchCase, Path, Settings], Awaitable[ModeRun]]


async def run_react(case: BenchCase, root: Path, settings: Settings) -> ModeRun:
    """fixloop itself: the ReAct loop with its warm start and verification gate (`strategy: react` unless
    the settings name another, whatever the model's profile prefers: a mode means one thing)."""
    from fixloop.engine import FixRequest, FixRun

    if "strategy" not in settings.explicit:
        settings = settings.given(strategy="react")
    run = FixRun(FixRequest(root, case.failing_test_ids), settings)
    try:
        result = await run.execute()
    except FixloopError as error:
        return ModeRun(
            False,
            "",
            steps=run.steps,
            attempts=run.attempts,
            model_seconds=run.model_seconds,
            test_seconds=run.test_seconds,
            error=error.message,
            transcript=str(run.transcript_path) if run.transcript_path else None,
            **round_figures(run),
            **request_figures(run),
        )
    return ModeRun(
        result.status == "fixed",
        result.diff,
        result.summary,
        result.steps,
        result.attempts,
        result.prompt_tokens,
        result.completion_tokens,
        result.model_seconds,
        result.test_seconds,
        result.transcript,
        **round_figures(run),
        rounds_tried=",".join(result.rounds_tried),
        **request_figures(run),
        origin=str(result.pool[0].get("round", "")) if result.pool else "",
    )


def round_figures(run: FixRun) -> dict[str, Any]:
    """Per sampling round of a finished run: the distinct change sets and the candidates drawn; over its
    line-level rounds: the answers refused as invalid and drawn; over all its rounds: the candidates that
    copied the code back unchanged and drawn."""
    figures = run.round_figures
    lines = [f for f in figures if f.kind == "lines"]
    return {
        "distinct": tuple(f.distinct for f in figures),
        "drawn": tuple(f.drawn for f in figures),
        "line_answers_invalid": sum(f.count("invalid") for f in lines),
        "line_answers_drawn": sum(f.drawn for f in lines),
        "candidates_unchanged": sum(f.count("unchanged") for f in figures),
        "candidates_drawn": sum(f.drawn for f in figures),
    }


def request_figures(run: FixRun) -> dict[str, int | None]:
    """A run's model requests and the prompt tokens the server read anew and found cached (None: unsaid)."""
    tally = run.model_tally
    processed, cached = tally.prompt_processed, tally.prompt_cached
    return {"prompt_processed": processed, "prompt_cached": cached, "model_requests": tally.requests}


def sampling_available() -> bool:
    """Whether this fixloop has the sampling strategy (a `strategy` setting) that `--mode sample` runs."""
    return any(field.name == "strategy" for field in fields(Settings))


async def run_sample(case: BenchCase, root: Path, settings: Settings) -> ModeRun:
    """fixloop with the generate-and-validate strategy: candidates drawn and verified in parallel."""
    return await run_react(case, root, settings.given(strategy="sample"))


def _oneshot() -> Mode:
    from fixloop.bench.oneshot import run_oneshot

    return run_oneshot


MODES: dict[str, Callable[[], Mode]] = {
    "react": lambda: run_react,
    "oneshot": _oneshot,
    "sample": lambda: run_sample,
}


def parse_modes(values: Sequence[str] | None) -> tuple[str, ...]:
    """`--mode a --mode b` or `--mode a,b` as known mode names, in order; react when none is given."""
    names = [name.strip() for value in (values or ["react"]) for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in MODES]
    if unknown or not names:
        raise ConfigError(f"unknown mode {', '.join(unknown) or '(empty)'}: choose from {', '.join(MODES)}")
    if "sample" in names and not sampling_available():
        raise ConfigError(
            "--mode sample is not available yet: this fixloop has no sampling strategy "
            "(the generate-and-validate issue); use --mode react or --mode oneshot"
        )
    return tuple(dict.fromkeys(names))


def mode(name: str) -> Mode:
    return MODES[name]()
