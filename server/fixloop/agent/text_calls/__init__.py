"""Tool calls a model wrote into its text: ReAct Action lines, <tool_call> tags, bare or fenced JSON.

`reader.parse_content` is the entry; `react` holds the ReAct text format (its labels for every reader),
`embedded` the tags and bare JSON, `shapes` the JSON forms a call takes, `loose_json` reads JSON as small
models write it (`JsonScan` finds where a value ends, for the whole text and for the stream alike), and
`stream` reads calls as a reply streams. Fences are read by `tools.fences`.
"""

from fixloop.agent.text_calls.react import REACT_STOP, format_observation, format_react_call
from fixloop.agent.text_calls.reader import ParsedContent, parse_content
from fixloop.agent.text_calls.shapes import ParsedCall

__all__ = [
    "REACT_STOP",
    "ParsedCall",
    "ParsedContent",
    "format_observation",
    "format_react_call",
    "parse_content",
]
