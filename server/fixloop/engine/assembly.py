"""The run's plan and wiring: `RunPlan`, what the settings decide for one run (read once, here), and the
loop's sampling assembled from it and the run's model, gate and shadow."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from fixloop.agent.call_protocols import ProtocolSetting
from fixloop.agent.candidates import BaseFiles, shadow_reader
from fixloop.agent.edit_forms import focus_points
from fixloop.agent.run_state import LoopLimits
from fixloop.agent.sampling import CandidateSearch, Drawer, SampleLimits
from fixloop.agent.sampling_turns import SamplingTurns, round_tools
from fixloop.agent.tried import TriedFixes
from fixloop.agent.warm_start import ShownFunction
from fixloop.config import Settings
from fixloop.events import Event, Notice
from fixloop.shadow import ShadowWorkspace
from fixloop.tools.code_placement import PlacementHints
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
    # issue 20, what a failure shows and where a code answer lands (each setting turns its part off)
    failing_inputs: bool = True  # prompts that show a failure show its failing call
    code_answer_placement: bool = True  # answers replace nested defs, methods and module constants

    @property
    def samples_at_all(self) -> bool:
        return bool(self.start_samples or self.rounds)


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
            draws_at_once=slots,
            temperature=sampled_temperature(settings),
            best_guess_temperature=settings.temperature or 0.0,
            seconds=settings.sample_seconds,
            tokens=settings.sample_tokens,
            batch=not local,  # the managed llama.cpp model ignores `n`
        ),
        localize=settings.localize != "off",
        warm_start_chars=settings.warm_start_chars,
        output_cap=settings.output_cap,
        allow_test_edits=settings.allow_test_edits,
        failing_inputs=settings.failing_inputs,
        code_answer_placement=settings.code_answer_placement,
    )


def slot_count(settings: Settings) -> int:
    """Requests the endpoint serves at once: one for the managed llama.cpp model, else as many as a round
    judges at a time (`sampleParallel`)."""
    return 1 if is_local(settings) else settings.sample_parallel


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


def sampling_for(
    plan: RunPlan,
    model: Drawer,
    gate: Gate,
    shadow: ShadowWorkspace,
    emit: Callable[[Event], None],
    tried: TriedFixes,
    focus: Sequence[ShownFunction] = (),
    hints: PlacementHints | None = None,
) -> SamplingTurns | None:
    """The run's sampling as its plan says (None: none at all); candidates are applied to the files as the
    run found them (the shadow's baseline), and the gate writes the winner. `focus`: the functions the warm
    start shows, one pointed out to each sampled candidate; `hints` (`placement_hints`) decide which of two
    definitions of one name a code answer replaces, the choice said in the progress."""
    if not plan.samples_at_all:
        return None

    async def base() -> BaseFiles:
        changes = await asyncio.to_thread(shadow.changes)
        read = shadow_reader(shadow.root, {change.path: change.old_text for change in changes})
        return BaseFiles(read, hints=hints, say=lambda text: emit(Notice(text, 0, "placement")))

    search = CandidateSearch(model, gate, base, plan.sample_limits, emit=emit, tried=tried)
    return SamplingTurns(
        search,
        start_samples=plan.start_samples,
        samples=plan.samples,
        rounds=plan.rounds,
        focus=focus_points(focus) if plan.focus else (),
        teach=plan.loop.teach,
    )
