"""The ReAct loop: model turn, tool calls, observations, verified submit; every limit is a named field."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fixloop.agent import prompts
from fixloop.agent.context import Conversation
from fixloop.agent.text_calls import REACT_STOP, format_observation, parse_content
from fixloop.events import (
    Action,
    Event,
    Notice,
    Observation,
    Thought,
    ThoughtDelta,
    Usage,
    Verdict,
)
from fixloop.model.client import ChatModel, ModelReply, ToolsUnsupported

DURATION = re.compile(r"\b\d+(\.\d+)?\s?m?s\b")  # "in 0.91s" differs between otherwise equal runs
REFUSAL = re.compile(r"^\s*(i'?m sorry|i am sorry|i cannot|i can'?t|i am unable|i'?m unable|"
                     r"i won'?t|as an ai)\b", re.IGNORECASE)


class GateAnswer(Protocol):
    accepted: bool
    reasons: tuple[str, ...]


class ToolboxLike(Protocol):
    names: list[str]

    def schemas(self, compact: bool = False) -> list[dict]: ...
    def text_descriptions(self) -> str: ...
    def is_read_only(self, name: str) -> bool: ...
    async def call(self, name: str, arguments: str | dict | None) -> Any: ...


@dataclass(frozen=True)
class LoopLimits:
    """Budgets of one run; the first one reached ends it as not_fixed."""

    max_steps: int = 30
    attempts: int = 3
    max_tokens: int = 400_000
    max_seconds: float = 1800.0
    max_refusals: int = 2
    stuck_nudge_at: int = 2
    stuck_stop_at: int = 3
    context_chars: int = 48_000


@dataclass
class LoopOutcome:
    status: str  # fixed | not_fixed
    summary: str
    steps: int = 0
    attempts: int = 0
    reasons: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class _Call:
    id: str
    name: str
    arguments: str | dict[str, Any]


class ReActLoop:
    """Runs turns until a submit is verified or a budget ends the run.

    Modes: "native" (OpenAI tool calls), "content" (tools still offered, calls read from the text, as
    llama.cpp-served models write them) and "text" (a short tool list in the system prompt, no `tools`
    parameter; calls read from ReAct Thought/Action lines, `<tool_call>` blocks or bare/fenced JSON).
    `auto` starts native and switches once: to "text" on an HTTP 400 about tools, to "content" on tool
    calls written into the text.
    """

    def __init__(self, model: ChatModel, toolbox: ToolboxLike, *, task: str,
                 verify: Callable[[str], Awaitable[GateAnswer]], emit: Callable[[Event], None],
                 protocol: str = "auto", limits: LoopLimits | None = None,
                 single_arg: dict[str, str] | None = None, compact_tools: bool = False) -> None:
        self.model = model
        self.toolbox = toolbox
        self.verify = verify
        self.emit = emit
        self.protocol = protocol
        self.compact_tools = compact_tools
        self.limits = limits or LoopLimits()
        self.mode = "text" if protocol == "text" else "native"
        self.single_arg = single_arg or {"read_file": "path", "list_files": "path", "search": "pattern",
                                         "submit": "summary"}
        self.conversation = Conversation(budget_chars=self.limits.context_chars)
        self.conversation.add({"role": "system", "content": self._system_prompt()})
        self.conversation.add({"role": "user", "content": task})
        self.step = 0
        self.attempts = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._seen: Counter[str] = Counter()
        self._refusals = 0
        self._started = time.monotonic()

    def _system_prompt(self) -> str:
        return prompts.system_prompt(self.mode == "text", self.toolbox.text_descriptions())

    def _outcome(self, status: str, summary: str, reasons: Sequence[str] = ()) -> LoopOutcome:
        return LoopOutcome(status, summary, self.step, self.attempts, list(reasons),
                           self.prompt_tokens, self.completion_tokens)

    def _budget_left(self) -> str | None:
        if self.step >= self.limits.max_steps:
            return f"step budget used up ({self.limits.max_steps} model turns)"
        if self.prompt_tokens + self.completion_tokens >= self.limits.max_tokens:
            return f"token budget used up ({self.limits.max_tokens} tokens)"
        if time.monotonic() - self._started >= self.limits.max_seconds:
            return f"time budget used up ({self.limits.max_seconds:g} s)"
        return None

    async def run(self) -> LoopOutcome:
        last_reasons: list[str] = []
        while True:
            exhausted = self._budget_left()
            if exhausted:
                self.emit(Notice(exhausted, self.step, "budget"))
                return await self._final_check(exhausted, last_reasons or [exhausted])
            self.step += 1
            reply = await self._turn()
            calls = self._calls_of(reply)
            if not calls:
                stop = self._handle_no_call(reply)
                if stop is not None:
                    return stop
                continue
            self._record_assistant(reply, calls)
            outcome = await self._act(calls)
            if isinstance(outcome, LoopOutcome):
                return outcome
            if outcome:
                last_reasons = outcome

    async def _turn(self) -> ModelReply:
        shrunk = self.conversation.fit()
        if shrunk:
            self.emit(Notice(f"context budget: shortened {shrunk} older observation(s)",
                             self.step, "context"))
        step = self.step

        def on_delta(text: str) -> None:
            self.emit(ThoughtDelta(text, step))

        while True:
            tools = None if self.mode == "text" else self.toolbox.schemas(compact=self.compact_tools)
            stop = list(REACT_STOP) if self.mode != "native" else None
            try:
                reply = await self.model.complete(self.conversation.messages, tools=tools, stop=stop,
                                                  on_delta=on_delta)
                break
            except ToolsUnsupported as error:
                if self.protocol != "auto" or self.mode == "text":
                    raise
                self.mode = "text"
                self.conversation.messages[0]["content"] = self._system_prompt()
                self.emit(Notice(f"switching to the text protocol for this run: {error.message}",
                                 step, "protocol"))
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.emit(Usage(reply.prompt_tokens, reply.completion_tokens, self.prompt_tokens,
                        self.completion_tokens, step))
        return reply

    def _calls_of(self, reply: ModelReply) -> list[_Call]:
        if reply.tool_calls:
            if reply.content.strip():
                self.emit(Thought(reply.content.strip(), self.step))
            return [_Call(c.id, c.name, c.arguments) for c in reply.tool_calls]
        if self.protocol == "tools":
            if reply.content.strip():
                self.emit(Thought(reply.content.strip(), self.step))
            return []
        parsed = parse_content(reply.content, self.toolbox.names, single_arg=self.single_arg)
        if parsed.thought:
            self.emit(Thought(parsed.thought, self.step))
        if parsed.calls and self.mode == "native":
            # The model writes its calls as text (llama.cpp-served models do, given `tools`). The tools stay
            # offered: the prompt prefix does not change, and Qwen-class models fix more bugs with their
            # own tool template (measured on the fixtures) than with a text-protocol prompt.
            self.mode = "content"
            self.emit(Notice(f"the model writes its tool calls as text ({parsed.style}); "
                             "reading them from the text for the rest of this run", self.step, "protocol"))
        if not parsed.calls and parsed.final_answer is not None:
            return [_Call(f"text_{self.step}_0", "submit", {"summary": parsed.final_answer})]
        return [_Call(f"text_{self.step}_{i}", call.name, call.arguments)
                for i, call in enumerate(parsed.calls)]

    def _handle_no_call(self, reply: ModelReply) -> LoopOutcome | None:
        text = reply.content
        refused = bool(reply.refusal) or reply.finish_reason == "content_filter" or bool(REFUSAL.match(text))
        self.conversation.add({"role": "assistant", "content": text or reply.refusal or ""})
        if refused:
            self._refusals += 1
            if self._refusals > self.limits.max_refusals:
                reason = f"the model refused {self._refusals} times"
                self.emit(Notice(reason, self.step, "refusal"))
                return self._outcome("not_fixed", f"not fixed: {reason}", [reason])
            self.emit(Notice("the model refused; asking it to continue", self.step, "refusal"))
            nudge = prompts.REFUSAL_NUDGE
        elif reply.finish_reason == "length":
            nudge = prompts.LENGTH_NUDGE
        else:
            nudge = prompts.NO_TOOL_NUDGE_TEXT if self.mode == "text" else prompts.NO_TOOL_NUDGE
        self.emit(Notice("no tool call; nudging the model to continue", self.step, "nudge"))
        self.conversation.add({"role": "user", "content": nudge})
        return None

    def _record_assistant(self, reply: ModelReply, calls: list[_Call]) -> None:
        if self.mode == "native" and reply.tool_calls:
            self.conversation.add({
                "role": "assistant",
                "content": reply.content or None,
                "tool_calls": [{"id": c.id, "type": "function",
                                "function": {"name": c.name, "arguments": _history_arguments(c.arguments)}}
                               for c in calls],
            })
        else:
            self.conversation.add({"role": "assistant", "content": reply.content})

    async def _act(self, calls: list[_Call]) -> LoopOutcome | list[str] | None:
        for call in calls:
            self.emit(Action(call.id, call.name, _display_arguments(call.arguments), self.step))
        results = await self._run_calls(calls)
        texts: list[str] = []
        outcome: LoopOutcome | list[str] | None = None
        stuck_stop: str | None = None
        for call, result in zip(calls, results, strict=True):
            text, is_error = result.text, result.is_error
            if result.submitted is not None and outcome is None:
                verdict_outcome, text, is_error = await self._verify(result.submitted)
                outcome = verdict_outcome
            elif isinstance(outcome, LoopOutcome):
                text, is_error = "not run: the fix was already accepted", False
            else:
                key = json.dumps([call.name, _display_arguments(call.arguments), DURATION.sub("", text)],
                                 sort_keys=True)
                self._seen[key] += 1
                seen = self._seen[key]
                if seen >= self.limits.stuck_stop_at:
                    stuck_stop = f"stuck: the same {call.name} call gave the same result {seen} times"
                elif seen >= self.limits.stuck_nudge_at:
                    text = f"{text}\n\n{prompts.STUCK_NUDGE}"
            self.emit(Observation(call.id, call.name, text, is_error, self.step))
            texts.append(text)
            if self.mode == "native":
                self.conversation.add({"role": "tool", "tool_call_id": call.id, "content": text},
                                      observation=True)
        if self.mode != "native":
            if len(calls) == 1:
                body = format_observation(texts[0])
            else:
                body = "\n\n".join(format_observation(f"[{c.name}] {t}") for c, t in zip(calls, texts,
                                                                                          strict=True))
            self.conversation.add({"role": "user", "content": body}, observation=True)
        if isinstance(outcome, LoopOutcome):
            return outcome
        if stuck_stop:
            self.emit(Notice(stuck_stop, self.step, "stuck"))
            return await self._final_check(stuck_stop, [stuck_stop])
        return outcome

    async def _run_calls(self, calls: list[_Call]) -> list[Any]:
        """Read-only calls run concurrently; writes and test runs in order; results in the model's order."""
        results: list[Any] = [None] * len(calls)
        batch: list[int] = []

        async def flush() -> None:
            if batch:
                outputs = await asyncio.gather(*(self.toolbox.call(calls[i].name, calls[i].arguments)
                                                 for i in batch))
                for i, output in zip(batch, outputs, strict=True):
                    results[i] = output
                batch.clear()

        submitted = False
        for index, call in enumerate(calls):
            if submitted:  # calls after a submit are not run
                results[index] = _Skipped()
                continue
            if self.toolbox.is_read_only(call.name):
                batch.append(index)
                continue
            await flush()
            results[index] = await self.toolbox.call(call.name, call.arguments)
            submitted = results[index].submitted is not None
        await flush()
        return results

    async def _check(self, summary: str, notice: str) -> GateAnswer:
        """One attempt at the verification gate, counted and reported."""
        self.attempts += 1
        self.emit(Notice(notice, self.step, "verify"))
        verdict = await self.verify(summary)
        self.emit(Verdict(verdict.accepted, tuple(verdict.reasons), self.attempts, self.step))
        return verdict

    async def _final_check(self, why: str, reasons: list[str]) -> LoopOutcome:
        """The run is ending without an accepted submit; a change already in the shadow that the gate
        accepts is still a verified fix (small models often fix the bug and then never call submit)."""
        if self.attempts < self.limits.attempts:
            verdict = await self._check("", f"{why}; checking the changes made so far")
            if verdict.accepted:
                return self._outcome("fixed", f"verified fix (the model did not submit; {why})")
        return self._outcome("not_fixed", f"not fixed: {why}", reasons)

    async def _verify(self, summary: str) -> tuple[LoopOutcome | list[str], str, bool]:
        verdict = await self._check(summary, "verifying the fix in the shadow copy")
        if verdict.accepted:
            return self._outcome("fixed", summary.strip() or "fixed"), "accepted: the fix is verified", False
        reasons = list(verdict.reasons)
        text = prompts.rejection_text(reasons, self.attempts, self.limits.attempts)
        if self.attempts >= self.limits.attempts:
            return self._outcome("not_fixed", "not fixed: " + "; ".join(reasons), reasons), text, True
        return reasons, text, True


@dataclass(frozen=True)
class _Skipped:
    text: str = "not run: it came after submit"
    is_error: bool = False
    submitted: str | None = None


def _display_arguments(arguments: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"_unparsed": arguments[:500]}
    return value if isinstance(value, dict) else {"_unparsed": arguments[:500]}


def _history_arguments(arguments: str | dict[str, Any]) -> str:
    if isinstance(arguments, dict):
        return json.dumps(arguments)
    try:
        json.loads(arguments)
        return arguments
    except ValueError:
        return json.dumps({"_unparsed": arguments[:2000]})
