"""Replies the loop cannot act on: one without a tool call (a nudge, a refusal, a reason for a round) and one
that began copying the context back (cut, and asked for a short one). Each says how its turn ends."""

from __future__ import annotations

import re
from collections.abc import Callable

from fixloop.agent import prompts
from fixloop.agent.call_protocols import CallProtocol
from fixloop.agent.round_kinds import RoundKinds
from fixloop.agent.run_state import RunEnds, Spent, TurnEnds
from fixloop.events import Event, Notice
from fixloop.model.replies import ModelReply

REFUSAL = re.compile(
    r"^\s*(i'?m sorry|i am sorry|i cannot|i can'?t|i am unable|i'?m unable|"
    r"i won'?t|as an ai)\b",
    re.IGNORECASE,
)
ECHO_SAID = (
    "the model began copying the context back; stopped it and asked for a short reply with one tool call"
)


def echo_ends(reply: ModelReply, spent: Spent, emit: Callable[[Event], None]) -> TurnEnds:
    """The reply began copying the prompt's context back: keep what came before, ask for a short one."""
    spent.echo_cuts += 1
    kept = reply.content.strip()
    messages = [{"role": "assistant", "content": kept}] if kept else []
    emit(Notice(ECHO_SAID, spent.steps, "echo"))
    return TurnEnds([*messages, {"role": "user", "content": prompts.ECHO_NUDGE}])


def no_call_ends(
    reply: ModelReply,
    protocol: CallProtocol,
    spent: Spent,
    kinds: RoundKinds | None,
    emit: Callable[[Event], None],
) -> TurnEnds | RunEnds:
    """A reply without a call: nudged, and after `silent_turns` in a row a reason to sample (a model that
    keeps answering without a call is stuck too); too many refusals end the run."""
    text, limits, step = reply.content, spent.limits, spent.steps
    refused = bool(reply.refusal) or reply.finish_reason == "content_filter" or bool(REFUSAL.match(text))
    said = {"role": "assistant", "content": text or reply.refusal or ""}
    nudge = protocol.no_tool_nudge()
    if refused:
        spent.refusals += 1
        if spent.refusals > limits.max_refusals:
            reason = f"the model refused {spent.refusals} times"
            emit(Notice(reason, step, "refusal"))
            return RunEnds("not_fixed", f"not fixed: {reason}", [reason])
        emit(Notice("the model refused; asking it to continue", step, "refusal"))
        nudge = prompts.REFUSAL_NUDGE
    elif reply.finish_reason == "length":
        nudge = prompts.LENGTH_NUDGE
    spent.silent_turns += 1
    if kinds is not None and spent.silent_turns >= kinds.silent_limit(limits.silent_turns):
        kinds.silent_switches += 1
        return TurnEnds([said], sample="silent")  # the next kind of round, not another nudge
    emit(Notice("no tool call; nudging the model to continue", step, "nudge"))
    silent = spent.silent_turns >= limits.silent_turns
    return TurnEnds([said, {"role": "user", "content": nudge}], sample="repeated" if silent else None)
