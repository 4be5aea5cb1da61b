"""How tool calls travel, one object per mode: the request's arguments, reading calls, writing the history.

- `NativeCalls` ("native"): OpenAI tool calls; each result goes back as a `tool` message.
- `ContentCalls` ("content"): tools still offered, but the model writes its calls into its text (as
  llama.cpp-served models do); calls are read from the text and results go back in one user message.
- `TextCalls` ("text"): no `tools` parameter, a short tool list in the system prompt; calls are read from
  ReAct Thought/Action lines, `<tool_call>` blocks or bare/fenced JSON.

`protocol: auto` starts native and switches once: to text on an HTTP 400 about tools (`on_tools_rejected`),
to content when the model writes its calls into the text (`ReadReply.switch_to`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from fixloop.agent import prompts
from fixloop.agent.echo import EchoIndex
from fixloop.agent.reply_watch import ReplyWatch
from fixloop.agent.text_calls import REACT_STOP, ParsedContent, format_observation, parse_content
from fixloop.model.replies import ModelReply

Mode = Literal["native", "content", "text"]
ProtocolSetting = Literal["auto", "tools", "text"]
Message = dict[str, Any]
SINGLE_ARG = {"read_file": "path", "list_files": "path", "search": "pattern", "submit": "summary"}


class ToolDescriptions(Protocol):
    """What the prompt needs of `fixloop.tools.Toolbox`."""

    names: list[str]

    def schemas(self, compact: bool = False) -> list[dict[str, Any]]: ...
    def text_descriptions(self) -> str: ...


@dataclass(frozen=True)
class ToolCall:
    """One call the model made, whichever way it was written; `arguments` raw text or an object."""

    id: str
    name: str
    arguments: str | dict[str, Any]

    def shown_arguments(self) -> dict[str, Any]:
        """The arguments as an object for events and stuck detection (unreadable text kept as `_unparsed`)."""
        if isinstance(self.arguments, dict):
            return self.arguments
        try:
            value = json.loads(self.arguments) if self.arguments.strip() else {}
        except ValueError:
            return {"_unparsed": self.arguments[:500]}
        return value if isinstance(value, dict) else {"_unparsed": self.arguments[:500]}

    def history_arguments(self) -> str:
        """The arguments as the JSON text a native `tool_calls` history entry must carry."""
        if isinstance(self.arguments, dict):
            return json.dumps(self.arguments)
        try:
            json.loads(self.arguments)
            return self.arguments
        except ValueError:
            return json.dumps({"_unparsed": self.arguments[:2000]})


@dataclass(frozen=True)
class RequestArgs:
    """What a mode adds to the chat request: the tool schemas and the stop sequences."""

    tools: list[dict[str, Any]] | None
    stop: list[str] | None


@dataclass(frozen=True)
class ReadReply:
    """The calls in one reply, the thought around them, and the mode to switch to (with why), if any."""

    thought: str
    calls: tuple[ToolCall, ...]
    switch_to: CallProtocol | None = None
    switch_notice: str = ""


class CallProtocol:
    """What every mode shares; `NativeCalls`, `ContentCalls` and `TextCalls` say what differs."""

    mode: Mode
    text_prompt = False  # whether the system prompt lists the tools in text

    def __init__(
        self,
        setting: ProtocolSetting,
        tool_names: Sequence[str],
        single_arg: Mapping[str, str] | None = None,
    ) -> None:
        self.setting = setting
        self.tool_names = list(tool_names)
        self.single_arg = dict(SINGLE_ARG if single_arg is None else single_arg)

    def request(self, schemas: list[dict[str, Any]]) -> RequestArgs:
        return RequestArgs(tools=schemas, stop=list(REACT_STOP))

    def system_prompt(self, tool_descriptions: str) -> str:
        return prompts.system_prompt(self.text_prompt, tool_descriptions)

    def no_tool_nudge(self) -> str:
        return prompts.NO_TOOL_NUDGE

    def watch(
        self,
        *,
        on_prose: Callable[[str], None],
        on_calling: Callable[[str, str], None],
        echo: EchoIndex | None,
    ) -> ReplyWatch:
        """What follows this turn's stream: the prose to show, the calls as they start, where to close it."""
        return ReplyWatch(
            self.tool_names,
            on_prose=on_prose,
            on_calling=on_calling,
            single_arg=self.single_arg,
            read_text=self.reads_text(),
            echo=echo,
        )

    def reads_text(self) -> bool:
        """Whether calls written into the text count (they end the stream once complete)."""
        return True

    def on_tools_rejected(self) -> CallProtocol | None:
        """The mode to use after the endpoint refused `tools`: text under `auto`, else none (an error)."""
        return self._become(TextCalls) if self.setting == "auto" else None

    def read(self, reply: ModelReply, step: int) -> ReadReply:
        """The calls in `reply`: native ones when it has them, else those written into its text."""
        if reply.tool_calls:
            calls = tuple(ToolCall(c.id, c.name, c.arguments) for c in reply.tool_calls)
            return ReadReply(reply.content.strip(), calls)
        return self._read_text(reply.content, step)[0]

    def assistant_message(self, reply: ModelReply, calls: Sequence[ToolCall]) -> Message:
        return {"role": "assistant", "content": reply.content}

    def observation_messages(self, calls: Sequence[ToolCall], texts: Sequence[str]) -> list[Message]:
        """The results of one turn's calls as one user message."""
        if len(calls) == 1:
            body = format_observation(texts[0])
        else:
            pairs = zip(calls, texts, strict=True)
            body = "\n\n".join(format_observation(f"[{call.name}] {text}") for call, text in pairs)
        return [{"role": "user", "content": body}]

    def _read_text(self, content: str, step: int) -> tuple[ReadReply, ParsedContent]:
        parsed = parse_content(content, self.tool_names, single_arg=self.single_arg)
        if not parsed.calls and parsed.final_answer is not None:
            submit = ToolCall(f"text_{step}_0", "submit", {"summary": parsed.final_answer})
            return ReadReply(parsed.thought, (submit,)), parsed
        calls = tuple(ToolCall(f"text_{step}_{i}", c.name, c.arguments) for i, c in enumerate(parsed.calls))
        return ReadReply(parsed.thought, calls), parsed

    def _become(self, kind: type[CallProtocol]) -> CallProtocol:
        return kind(self.setting, self.tool_names, self.single_arg)


class NativeCalls(CallProtocol):
    """OpenAI tool calls; each result goes back as a `tool` message. Text calls switch to content (auto)."""

    mode: Mode = "native"

    def request(self, schemas: list[dict[str, Any]]) -> RequestArgs:
        return RequestArgs(tools=schemas, stop=None)

    def reads_text(self) -> bool:
        return self.setting != "tools"

    def read(self, reply: ModelReply, step: int) -> ReadReply:
        if reply.tool_calls:
            return super().read(reply, step)
        if self.setting == "tools":
            return ReadReply(reply.content.strip(), ())
        found, parsed = self._read_text(reply.content, step)
        if not parsed.calls:
            return found
        # The model writes its calls as text (llama.cpp-served models do, given `tools`). The tools stay
        # offered: the prompt prefix does not change, and Qwen-class models fix more bugs with their own
        # tool template (measured on the fixtures) than with a text-protocol prompt.
        notice = (
            f"the model writes its tool calls as text ({parsed.style}); reading them from the text "
            "for the rest of this run"
        )
        return ReadReply(found.thought, found.calls, self._become(ContentCalls), notice)

    def assistant_message(self, reply: ModelReply, calls: Sequence[ToolCall]) -> Message:
        if not reply.tool_calls:
            return super().assistant_message(reply, calls)
        return {
            "role": "assistant",
            "content": reply.content or None,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.history_arguments()},
                }
                for c in calls
            ],
        }

    def observation_messages(self, calls: Sequence[ToolCall], texts: Sequence[str]) -> list[Message]:
        return [
            {"role": "tool", "tool_call_id": call.id, "content": text}
            for call, text in zip(calls, texts, strict=True)
        ]


class ContentCalls(CallProtocol):
    """Tools still offered, calls read from the text; results go back as one user message."""

    mode: Mode = "content"


class TextCalls(CallProtocol):
    """No `tools` parameter: the tools are listed in the system prompt and calls read from the text."""

    mode: Mode = "text"
    text_prompt = True

    def request(self, schemas: list[dict[str, Any]]) -> RequestArgs:
        return RequestArgs(tools=None, stop=list(REACT_STOP))

    def no_tool_nudge(self) -> str:
        return prompts.NO_TOOL_NUDGE_TEXT

    def on_tools_rejected(self) -> CallProtocol | None:
        return None


def call_protocol(
    setting: ProtocolSetting, tool_names: Sequence[str], single_arg: Mapping[str, str] | None = None
) -> CallProtocol:
    """The mode a run starts in: text for `protocol: text`, else native."""
    kind: type[CallProtocol] = TextCalls if setting == "text" else NativeCalls
    return kind(setting, tool_names, single_arg)


def fixed_prefix(
    setting: ProtocolSetting, tools: ToolDescriptions, compact: bool
) -> tuple[list[Message], list[dict[str, Any]] | None]:
    """How every request of a run begins, the same in every run and turn: the system message and the tool
    schemas (a server's prompt cache keeps them, so only the task is new in a run's first turn)."""
    protocol = call_protocol(setting, tools.names)
    system = {"role": "system", "content": protocol.system_prompt(tools.text_descriptions())}
    return [system], protocol.request(tools.schemas(compact=compact)).tools
