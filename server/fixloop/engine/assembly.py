"""The run's plan and wiring: `RunPlan`, what the settings decide for one run (read once, here), and the
loop's sampling assembled from it and the run's model, gate and shadow."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from fixloop.agent.asking import Drawer
from fixloop.agent.call_protocols import ProtocolSetting
from fixloop.agent.candidates import BaseFiles, shadow_reader
from fixloop.agent.draws import DrawVariety
from fixloop.agent.edit_forms import focus_points
from fixloop.agent.fix_pool import KeepSearching
from fixloop.agent.line_round import LineRound, ShortDraws
from fixloop.agent.mutant_round import SCREEN_SECONDS, SCREEN_TIMES, MutantRound, Spot
from fixloop.agent.round_kinds import RoundKinds
from fixloop.agent.round_result import RoundFigures
from fixloop.agent.run_state import LoopLimits
from fixloop.agent.sampling import CandidateSearch, SampleLimits
from fixloop.agent.sampling_turns import SamplingTurns, round_tools
from fixloop.agent.tried import TriedFixes
from fixloop.agent.warm_start import ShownFunction
from fixloop.agent.written_checks import RunCheck, WrittenChecks, failing_test
from fixloop.config import Settings
from fixloop.errors import FixloopError
from fixloop.events import Event, Notice
from fixloop.model.local import local_slots
from fixloop.pytest_runner.failing_inputs import FailingInputs
from fixloop.pytest_runner.results import TestOutcome, TestRun
from fixloop.shadow import ShadowWorkspace
from fixloop.tools.code_placement import PlacementHints
from fixloop.verify.baseline import target_outcomes
from fixloop.verify.port import Gate


@dataclass(frozen=True)
class RunPlan:
    """Everything the settings decide for one run, and every flag derived from them, computed once."""

    loop: LoopLimits  # its `teach` (`feedback: full`) holds for the rounds too
    protocol: ProtocolSetting
    local: bool  # the managed local model (`model: local[:name]`)
    compact_tools: bool  # one-line tool schemas (always for the managed local model)
    start_samples: int  # 0: no start round; 1: the code form's best guess alone; N: a whole round
    samples: int  # candidates a later round draws
    rounds: int  # later rounds (after a rejection, a repeat or a stuck call)
    focus: bool  # point sampled candidates at different functions of the prompt's code
    slots: int  # requests the endpoint serves at once
    sample_limits: SampleLimits
    localize: bool  # rank the code by coverage when the failure is an assertion in the test
    warm_start_chars: int
    output_cap: int
    allow_test_edits: bool
    # issue 20's round ingredients, each off for an ablation
    reask_unchanged: bool = False  # a copy back is asked again, with the failing call
    draw_variety: bool = True  # each sampled draw is shown its own failing call and the fixes tried
    round_kinds: bool = True  # silence and repeats move the run to the next kind of round (round_kinds.py)
    failing_inputs: bool = True  # prompts that show a failure show its failing call
    code_answer_placement: bool = True  # answers replace nested defs, methods and module constants
    mutants: bool = True  # one-token changes of the suspect lines first (agent/mutant_round.py)
    keep_searching: KeepSearching = field(default_factory=KeepSearching)  # after the first verified fix

    @property
    def samples_at_all(self) -> bool:
        return bool(self.start_samples or self.rounds)


# the search's ingredients (settings and plan fields of one name), each off for an ablation
INGREDIENTS = (
    "reask_unchanged",
    "draw_variety",
    "round_kinds",
    "failing_inputs",
    "code_answer_placement",
    "mutants",
)


def is_local(settings: Settings) -> bool:
    """The managed local model (`model: local[:name]`)."""
    return settings.model == "local" or settings.model.startswith("local:")


def plan_run(settings: Settings) -> RunPlan:
    """The plan of a run with these settings (its model's profile applied)."""
    slots, local = slot_count(settings), is_local(settings)
    return RunPlan(
        loop=LoopLimits(
            max_steps=settings.max_steps,
            attempts=settings.attempts,
            max_tokens=settings.max_tokens,
            max_seconds=settings.max_seconds,
            context_chars=settings.context_chars,
            teach=settings.feedback == "full",
        ),
        protocol=cast(ProtocolSetting, settings.protocol),
        local=local,
        compact_tools=settings.compact_tools or local,
        start_samples=start_samples(settings),
        samples=settings.samples,
        rounds=settings.sample_rounds if settings.samples > 1 else 0,
        focus=settings.sample_focus,
        slots=slots,
        sample_limits=SampleLimits(
            parallel=settings.sample_parallel,
            draws_at_once=1 if local else slots,  # the managed model's slots share a prompt only by `n`
            choices_at_once=slots if local else 0,
            temperature=sampled_temperature(settings),
            best_guess_temperature=settings.temperature or 0.0,
            seconds=settings.sample_seconds,
            tokens=settings.sample_tokens,
            batch=slots > 1 or not local,  # llama-cpp-python's one-slot server ignores `n`
        ),
        localize=settings.localize != "off",
        warm_start_chars=settings.warm_start_chars,
        output_cap=settings.output_cap,
        allow_test_edits=settings.allow_test_edits,
        keep_searching=KeepSearching(settings.pool_size, min(1.0, settings.pool_share)),
        **{name: getattr(settings, name) for name in INGREDIENTS},
    )


def slot_count(settings: Settings) -> int:
    """Requests the endpoint serves at once: the managed model's slots (one on llama-cpp-python's server, a
    slot per sampled candidate on llama-server), else as many as a round judges at a time."""
    if not is_local(settings):
        return settings.sample_parallel
    try:
        return local_slots(settings)
    except FixloopError:  # an unknown local model: the run's model step says so, in one line
        return 1


def start_samples(settings: Settings) -> int:
    """Candidates the run's start round draws: all of a round under `strategy: sample`, the code form's
    best guess alone under `edit_form: code`, else 0 (no start round: the first turn is the loop's)."""
    if settings.strategy == "sample" and settings.samples > 1:
        return settings.samples
    return int(settings.edit_form == "code")


def sampled_temperature(settings: Settings) -> float | None:
    """The sampled candidates' temperature; none is sent when the model's own is not (a model that rejects
    it, or one nothing is known of), unless `sampleTemperature` is set."""
    if settings.temperature is None and "sample_temperature" not in settings.explicit:
        return None
    return settings.sample_temperature


Schemas = list[dict[str, Any]] | None


def placement_hints(
    plan: RunPlan, suspects: Sequence[str], lines_run: Mapping[str, Collection[int]]
) -> PlacementHints:
    """Where a code answer lands: the run's suspects ("path::name", best first), then the lines the failing
    tests ran (by file), tell two definitions of one name apart; `codeAnswerPlacement` off keeps answers to
    top-level functions and unique methods."""
    return PlacementHints(tuple(suspects), dict(lines_run), anywhere=plan.code_answer_placement)


def first_request_tools(settings: Settings, tools: Schemas) -> Schemas:
    """The schemas of a run's first request (what a prompt cache is warmed with): the start round's, if
    the run has one, else the loop's."""
    return round_tools("start", tools) if start_samples(settings) else tools


def baseline_inputs(run: TestRun, failing: Sequence[str]) -> tuple[FailingInputs, ...]:
    """The failing calls of the targets failing in the baseline run (each parameter's own), in order."""
    outcomes = [outcome for target in failing for outcome in target_outcomes(run, target)]
    return tuple(o.inputs for o in outcomes if o.failing and o.inputs is not None)


@dataclass(frozen=True)
class RoundMaterial:
    """What a run's rounds are pointed at: the warm start's functions (one to each draw), the baseline's
    failing calls (a draw's own, a copy back's re-ask), the failing outcomes (the line round's lines) and
    the placement hints (which of two definitions of one name a code answer replaces)."""

    focus: Sequence[ShownFunction] = ()
    inputs: Sequence[FailingInputs] = ()
    failures: Sequence[TestOutcome] = ()
    hints: PlacementHints | None = None


def sampling_for(
    plan: RunPlan,
    model: Drawer,
    gate: Gate,
    shadow: ShadowWorkspace,
    emit: Callable[[Event], None],
    tried: TriedFixes,
    material: RoundMaterial = RoundMaterial(),
) -> SamplingTurns | None:
    """The run's sampling as its plan says (None: none at all); candidates apply to the files as the run
    found them, and the gate writes the winner."""
    if not plan.samples_at_all:
        return None
    base = baseline_files(shadow, material.hints, emit)
    variety = DrawVariety(plan.draw_variety, tuple(material.inputs))
    search = CandidateSearch(
        model,
        gate,
        base,
        plan.sample_limits,
        emit=emit,
        tried=tried,
        variety=variety,
        reask=plan.reask_unchanged,
    )
    lines = (
        line_round(plan, model, gate, base, emit, tried, material.focus, material.failures, search.figures)
        if plan.round_kinds
        else None
    )
    return SamplingTurns(
        search,
        start_samples=plan.start_samples,
        samples=plan.samples,
        rounds=plan.rounds,
        focus=focus_points(material.focus) if plan.focus else (),
        teach=plan.loop.teach,
        kinds=RoundKinds() if plan.round_kinds else None,
        lines=lines,
    )


def baseline_files(
    shadow: ShadowWorkspace, hints: PlacementHints | None, emit: Callable[[Event], None]
) -> Callable[[], Awaitable[BaseFiles]]:
    """The files as the run found them (the shadow's baseline), read when a round applies candidates; where
    a code answer lands is chosen by `hints`, the choice said in the progress."""

    async def base() -> BaseFiles:
        changes = await asyncio.to_thread(shadow.changes)
        read = shadow_reader(shadow.root, {change.path: change.old_text for change in changes})
        return BaseFiles(read, hints=hints, say=lambda text: emit(Notice(text, 0, "placement")))

    return base


LINE_SAMPLES = 8  # a line-level round's draws (short ones)
LINE_TOKENS = 96  # a line answer's length at most


def line_round(
    plan: RunPlan,
    model: Drawer,
    gate: Gate,
    base: Callable[[], Awaitable[BaseFiles]],
    emit: Callable[[Event], None],
    tried: TriedFixes,
    functions: Sequence[ShownFunction],
    failures: Sequence[TestOutcome],
    figures: list[RoundFigures] | None = None,
) -> LineRound:
    """The line-level round: many short draws, each judged by the gate like any candidate; its rounds'
    figures join `figures` (the run's candidate rounds' list, so that the result and the bench count them)."""
    drawer = ShortDraws(model, LINE_TOKENS)
    # A line answer is short and plain: no per-draw hints, no code-form re-ask.
    search = CandidateSearch(
        drawer,
        gate,
        base,
        plan.sample_limits,
        emit=emit,
        tried=tried,
        variety=DrawVariety(False),
        reask=False,
        figures=figures,
    )
    return LineRound(search, functions, failures, max(LINE_SAMPLES, plan.samples))


def mutant_round(
    plan: RunPlan,
    gate: Gate,
    shadow: ShadowWorkspace,
    spots: Sequence[Spot],
    emit: Callable[[Event], None],
    baseline_seconds: float,
) -> MutantRound | None:
    """The run's mutant round (None when `mutants` is off or no line is suspect): each change screened on
    the targets within a few times the baseline's test time."""
    if not plan.mutants or not spots:
        return None
    screen = max(SCREEN_SECONDS, SCREEN_TIMES * baseline_seconds)
    base = baseline_files(shadow, None, emit)
    return MutantRound(gate, base, spots, emit, parallel=plan.sample_limits.parallel, screen_seconds=screen)


def written_checks(
    root: Path,
    failing: Sequence[str],
    choose: Callable[..., Awaitable[tuple[str, dict[str, float]]]],
    run_check: RunCheck,
    emit: Callable[[Event], None],
) -> WrittenChecks | None:
    """The ranking's model-written checks, written beside the first failing target's test (`root`: the
    shadow); None when that test's function cannot be read."""
    test_id = next(iter(failing), "")
    try:
        test = failing_test(test_id, (root / test_id.split("::")[0]).read_text("utf-8")) if test_id else None
    except (OSError, UnicodeError):
        test = None
    if test is None:
        return None

    async def write(messages: list[dict[str, str]]) -> str:
        return (await choose(messages, most_tokens=400))[0]

    return WrittenChecks(write, run_check, test, lambda text: emit(Notice(text, 0, "checks")))
