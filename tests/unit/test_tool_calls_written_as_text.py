"""Unit tests for finding tool calls in model text (ReAct, <tool_call> tags, bare or fenced JSON)."""

from __future__ import annotations

import json
import time

import pytest

from fixloop.agent.text_calls import (
    REACT_STOP,
    ParsedCall,
    ParsedContent,
    format_observation,
    format_react_call,
    parse_content,
)

TOOLS = frozenset({"read_file", "edit_file", "run_tests", "list_files", "search", "submit", "write_file"})
SINGLE = {"read_file": "path", "list_files": "path", "search": "pattern"}


def parse(text: str, single: dict[str, str] | None = None) -> ParsedContent:
    return parse_content(text, TOOLS, single if single is not None else SINGLE)


# ---------------------------------------------------------------------------------------------
# Formatting helpers


def test_react_stop_is_observation_line() -> None:
    assert REACT_STOP == ("\nObservation:",)


def test_format_react_call_round_trips() -> None:
    args = {"path": "a.py", "new_text": 'def f():\n    return "x"\n'}
    text = format_react_call("edit_file", args)
    assert text.startswith("Action: edit_file\nAction Input: ")
    assert "\n" not in text.split("Action Input: ", 1)[1]  # one line: the stop sequence cannot cut it
    parsed = parse(text)
    assert parsed.calls == (ParsedCall("edit_file", args),)
    assert parsed.style == "react"


def test_format_observation() -> None:
    assert format_observation("1 passed\n") == "Observation: 1 passed"


def test_parsed_types_are_frozen() -> None:
    call = ParsedCall("read_file", {"path": "a.py"})
    with pytest.raises(AttributeError):
        call.name = "x"  # type: ignore[misc]
    content = parse("hello")
    with pytest.raises(AttributeError):
        content.style = "json"  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# ReAct text protocol


def test_react_basic() -> None:
    text = 'Thought: I should look at the code first.\nAction: read_file\nAction Input: {"path": "a.py"}'
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)
    assert p.style == "react"
    assert p.thought == "I should look at the code first."
    assert p.final_answer is None


def test_react_json_across_lines() -> None:
    text = (
        "Thought: Fix the off-by-one.\n"
        "Action: edit_file\n"
        "Action Input: {\n"
        '  "path": "src/calc.py",\n'
        '  "old_text": "range(n)",\n'
        '  "new_text": "range(n + 1)"\n'
        "}\n"
    )
    p = parse(text)
    assert p.calls == (
        ParsedCall("edit_file", {"path": "src/calc.py", "old_text": "range(n)", "new_text": "range(n + 1)"}),
    )
    assert p.thought == "Fix the off-by-one."


def test_react_fenced_action_input() -> None:
    text = (
        "Thought: run the failing test\n"
        "Action: run_tests\n"
        "Action Input:\n"
        "```json\n"
        '{"node_ids": ["tests/test_gcd.py::test_zero"]}\n'
        "```\n"
    )
    p = parse(text)
    assert p.calls == (ParsedCall("run_tests", {"node_ids": ["tests/test_gcd.py::test_zero"]}),)
    assert "```" not in p.thought


def test_react_bare_string_maps_to_single_argument() -> None:
    p = parse("Thought: read it\nAction: read_file\nAction Input: src/app.py\n")
    assert p.calls == (ParsedCall("read_file", {"path": "src/app.py"}),)


def test_react_quoted_bare_string() -> None:
    p = parse('Action: read_file\nAction Input: "src/app.py"')
    assert p.calls == (ParsedCall("read_file", {"path": "src/app.py"}),)


def test_react_bare_string_without_mapping_stays_text() -> None:
    p = parse("Action: read_file\nAction Input: src/app.py", single={})
    assert p.calls == (ParsedCall("read_file", "src/app.py"),)


def test_react_bracket_form() -> None:
    p = parse("Thought: look\nAction: read_file[src/app.py]")
    assert p.calls == (ParsedCall("read_file", {"path": "src/app.py"}),)
    assert p.thought == "look"


def test_react_call_form_with_keywords() -> None:
    p = parse('Action: read_file(path="a.py")')
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_react_call_form_multiline_keywords() -> None:
    text = 'Action: edit_file(path="a.py", old_text="x = 1", new_text="""x = 2\ny = 3""")'
    p = parse(text)
    assert p.calls == (
        ParsedCall("edit_file", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2\ny = 3"}),
    )


def test_react_call_form_positional() -> None:
    p = parse("Action: read_file('gcd.py')")
    assert p.calls == (ParsedCall("read_file", {"path": "gcd.py"}),)


def test_react_call_form_empty() -> None:
    p = parse("Action: run_tests()")
    assert p.calls == (ParsedCall("run_tests", {}),)


def test_react_hallucinated_observation_is_dropped() -> None:
    text = (
        "Thought: check the file\n"
        "Action: read_file\n"
        'Action Input: {"path": "gcd.py"}\n'
        "Observation: def gcd(a, b):\n    return a\n"
        "Thought: the bug is obvious\n"
        "Action: edit_file\n"
        'Action Input: {"path": "gcd.py", "old_text": "return a", "new_text": "return b"}\n'
    )
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "gcd.py"}),)
    assert "obvious" not in p.thought
    assert p.thought == "check the file"


def test_react_final_answer() -> None:
    text = "Thought: The tests pass now.\nFinal Answer: Fixed the off-by-one in range()."
    p = parse(text)
    assert p.calls == ()
    assert p.final_answer == "Fixed the off-by-one in range()."
    assert p.style == "react"
    assert p.thought == "The tests pass now."


def test_react_final_answer_multiline() -> None:
    p = parse("Final Answer: Changed two lines.\n- gcd handles zero\n- tests pass")
    assert p.final_answer == "Changed two lines.\n- gcd handles zero\n- tests pass"


def test_react_action_final_answer_langchain_style() -> None:
    p = parse("Thought: done\nAction: Final Answer\nAction Input: the bug was in gcd")
    assert p.calls == ()
    assert p.final_answer == "the bug was in gcd"


def test_react_two_actions_in_one_message() -> None:
    text = (
        "Thought: read both files\n"
        "Action: read_file\n"
        'Action Input: {"path": "a.py"}\n'
        "Action: read_file\n"
        'Action Input: {"path": "b.py"}\n'
    )
    p = parse(text)
    assert [c.arguments for c in p.calls] == [{"path": "a.py"}, {"path": "b.py"}]


def test_react_unknown_tool_is_still_returned() -> None:
    p = parse('Action: run_shell\nAction Input: {"cmd": "ls"}')
    assert p.calls == (ParsedCall("run_shell", {"cmd": "ls"}),)
    assert p.style == "react"


def test_react_malformed_json_returned_as_text() -> None:
    text = 'Action: edit_file\nAction Input: {"path": "a.py", "old_text": "x" "new_text": "y"}'
    p = parse(text)
    assert len(p.calls) == 1
    assert p.calls[0].name == "edit_file"
    assert isinstance(p.calls[0].arguments, str)
    assert '"old_text": "x" "new_text"' in p.calls[0].arguments


def test_react_markdown_bold_labels() -> None:
    text = '**Thought:** open the test\n**Action:** read_file\n**Action Input:** {"path": "tests/test_a.py"}'
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "tests/test_a.py"}),)
    assert p.thought == "open the test"


def test_react_windows_newlines() -> None:
    text = 'Thought: look\r\nAction: read_file\r\nAction Input: {"path": "a.py"}\r\n'
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)
    assert p.thought == "look"


def test_react_action_without_input_means_no_arguments() -> None:
    p = parse("Thought: run everything\nAction: run_tests")
    assert p.calls == (ParsedCall("run_tests", {}),)


def test_react_action_input_none_means_no_arguments() -> None:
    p = parse("Action: run_tests\nAction Input: None")
    assert p.calls == (ParsedCall("run_tests", {}),)


def test_react_name_in_backticks() -> None:
    p = parse('Action: `read_file`\nAction Input: {"path": "a.py"}')
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_react_prose_action_line_is_not_a_call() -> None:
    p = parse("Plan:\nAction: I will now carefully read the failing test.")
    assert p.calls == ()
    assert p.style == "none"


def test_react_langchain_json_action_block() -> None:
    text = 'Thought: read\nAction:\n```json\n{"action": "read_file", "action_input": {"path": "a.py"}}\n```'
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)
    assert p.style == "react"
    assert p.thought == "read"


def test_react_multiline_code_in_action_input() -> None:
    text = (
        "Thought: replace the function\n"
        "Action: edit_file\n"
        "Action Input: {\n"
        '  "path": "gcd.py",\n'
        '  "old_text": "def gcd(a, b):\n    return a\n",\n'
        '  "new_text": "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"\n'
        "}"
    )
    p = parse(text)
    assert p.calls[0].arguments == {
        "path": "gcd.py",
        "old_text": "def gcd(a, b):\n    return a\n",
        "new_text": "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
    }


def test_react_action_input_unbalanced_json_is_completed() -> None:
    p = parse('Action: read_file\nAction Input: {"path": "a.py"')
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


# ---------------------------------------------------------------------------------------------
# <tool_call> tags


def test_tag_basic() -> None:
    text = (
        'I will read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "gcd.py"}}\n</tool_call>'
    )
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "gcd.py"}),)
    assert p.style == "tool_call_tag"
    assert p.thought == "I will read it."


def test_tag_several_blocks() -> None:
    text = (
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "tests/test_a.py"}}\n</tool_call>'
    )
    p = parse(text)
    assert [c.arguments for c in p.calls] == [{"path": "a.py"}, {"path": "tests/test_a.py"}]
    assert p.thought == ""


def test_tag_missing_closing_tag() -> None:
    p = parse('<tool_call>\n{"name": "run_tests", "arguments": {}}')
    assert p.calls == (ParsedCall("run_tests", {}),)


def test_tag_missing_closing_tag_and_brace() -> None:
    p = parse('<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}')
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_tag_parameters_key() -> None:
    p = parse('<tool_call>{"name": "read_file", "parameters": {"path": "a.py"}}</tool_call>')
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_tag_arguments_as_json_string() -> None:
    p = parse('<tool_call>{"name": "read_file", "arguments": "{\\"path\\": \\"a.py\\"}"}</tool_call>')
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_tag_unknown_tool_is_returned() -> None:
    p = parse('<tool_call>{"name": "bash", "arguments": {"cmd": "ls"}}</tool_call>')
    assert p.calls == (ParsedCall("bash", {"cmd": "ls"}),)


def test_tag_hallucinated_tool_response_is_dropped() -> None:
    text = (
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>\n'
        "<tool_response>\ndef f(): pass\n</tool_response>\n"
        '<tool_call>{"name": "edit_file", "arguments": {}}</tool_call>'
    )
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_tag_with_fenced_json_inside() -> None:
    text = '<tool_call>\n```json\n{"name": "list_files", "arguments": {"path": "."}}\n```\n</tool_call>'
    p = parse(text)
    assert p.calls == (ParsedCall("list_files", {"path": "."}),)


def test_tag_malformed_json_returned_as_text() -> None:
    text = '<tool_call>{"name": "edit_file", "arguments": {"path": "a.py", "new_text": }}</tool_call>'
    p = parse(text)
    assert len(p.calls) == 1
    assert p.calls[0].name == "edit_file"
    assert isinstance(p.calls[0].arguments, str)


def test_tag_code_with_braces_and_quotes() -> None:
    args = {"path": "cfg.py", "old_text": "CFG = {}", "new_text": 'CFG = {"debug": True, "name": "x}"}\n'}
    text = "<tool_call>\n" + json.dumps({"name": "edit_file", "arguments": args}) + "\n</tool_call>"
    assert parse(text).calls == (ParsedCall("edit_file", args),)


# ---------------------------------------------------------------------------------------------
# Bare or fenced JSON (Qwen2.5-Coder on llama-cpp-python)


def test_qwen_fenced_json() -> None:
    text = '```json\n{"name": "read_file", "arguments": {"path": "gcd.py"}}\n```'
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "gcd.py"}),)
    assert p.style == "json"
    assert p.thought == ""


def test_qwen_fenced_json_with_prose() -> None:
    text = (
        "To fix the failing test I first need to see the implementation.\n\n"
        '```json\n{"name": "read_file", "arguments": {"path": "gcd.py"}}\n```\n\n'
        "After that I will edit it."
    )
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "gcd.py"}),)
    assert p.thought == (
        "To fix the failing test I first need to see the implementation.\n\nAfter that I will edit it."
    )


def test_qwen_fence_without_language_tag() -> None:
    p = parse('```\n{"name": "run_tests", "arguments": {}}\n```')
    assert p.calls == (ParsedCall("run_tests", {}),)
    assert p.thought == ""


def test_qwen_bare_json() -> None:
    p = parse('{"name": "list_files", "arguments": {"path": "src"}}')
    assert p.calls == (ParsedCall("list_files", {"path": "src"}),)
    assert p.style == "json"


def test_qwen_edit_with_code_containing_braces_and_quotes() -> None:
    new_text = 'def render(d):\n    return f"{d[\'name\']}: {{ok}}" + "}"\n'
    args = {"path": "render.py", "old_text": "def render(d):\n    return str(d)\n", "new_text": new_text}
    text = "I'll fix the formatting.\n```json\n" + json.dumps(
        {"name": "edit_file", "arguments": args}, indent=2
    )
    text += "\n```"
    p = parse(text)
    assert p.calls == (ParsedCall("edit_file", args),)
    assert p.thought == "I'll fix the formatting."


def test_qwen_unescaped_newlines_in_new_text() -> None:
    text = (
        "```json\n"
        '{"name": "edit_file", "arguments": {"path": "gcd.py", "old_text": "    return a", '
        '"new_text": "    while b:\n        a, b = b, a % b\n    return a"}}\n'
        "```"
    )
    p = parse(text)
    assert p.calls[0].arguments == {
        "path": "gcd.py",
        "old_text": "    return a",
        "new_text": "    while b:\n        a, b = b, a % b\n    return a",
    }


def test_qwen_unescaped_quotes_in_code() -> None:
    text = '{"name": "edit_file", "arguments": {"path": "a.py", "old_text": "x", "new_text": "print("hi")"}}'
    p = parse(text)
    assert p.calls == (ParsedCall("edit_file", {"path": "a.py", "old_text": "x", "new_text": 'print("hi")'}),)


def test_qwen_invalid_escape_in_regex_code() -> None:
    text = r'{"name": "edit_file", "arguments": {"path": "a.py", "old_text": "x", '
    text += r'"new_text": "re.compile(\"\d+\")"}}'
    p = parse(text)
    assert p.calls[0].arguments == {"path": "a.py", "old_text": "x", "new_text": 're.compile("\\d+")'}


def test_json_two_calls_in_one_message() -> None:
    text = (
        "Let me read both.\n"
        '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```\n'
        '```json\n{"name": "read_file", "arguments": {"path": "tests/test_a.py"}}\n```'
    )
    p = parse(text)
    assert [c.arguments for c in p.calls] == [{"path": "a.py"}, {"path": "tests/test_a.py"}]
    assert p.thought == "Let me read both."


def test_json_two_objects_in_one_fence() -> None:
    text = (
        "```json\n"
        '{"name": "read_file", "arguments": {"path": "a.py"}}\n'
        '{"name": "run_tests", "arguments": {}}\n'
        "```"
    )
    p = parse(text)
    assert [c.name for c in p.calls] == ["read_file", "run_tests"]
    assert p.thought == ""


def test_json_list_of_calls() -> None:
    text = '[{"name": "read_file", "arguments": {"path": "a.py"}}, {"name": "run_tests", "arguments": {}}]'
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}), ParsedCall("run_tests", {}))
    assert p.thought == ""


def test_json_openai_function_wrapper() -> None:
    text = '{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\": \\"a.py\\"}"}}'
    assert parse(text).calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_json_tool_args_keys() -> None:
    assert parse('{"tool": "read_file", "args": {"path": "a.py"}}').calls == (
        ParsedCall("read_file", {"path": "a.py"}),
    )


def test_json_name_parameters_keys() -> None:
    assert parse('{"name": "search", "parameters": {"pattern": "def gcd"}}').calls == (
        ParsedCall("search", {"pattern": "def gcd"}),
    )


def test_json_flat_arguments() -> None:
    assert parse('{"name": "read_file", "path": "a.py"}').calls == (
        ParsedCall("read_file", {"path": "a.py"}),
    )


def test_json_trailing_commas() -> None:
    text = '```json\n{\n  "name": "read_file",\n  "arguments": {"path": "a.py",},\n}\n```'
    assert parse(text).calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_json_single_quotes_python_dict() -> None:
    text = "{'name': 'edit_file', 'arguments': {'path': 'a.py', 'old_text': 'x = 1', 'new_text': \"it's 2\"}}"
    assert parse(text).calls == (
        ParsedCall("edit_file", {"path": "a.py", "old_text": "x = 1", "new_text": "it's 2"}),
    )


def test_json_python_literals_true_none() -> None:
    text = "{'name': 'run_tests', 'arguments': {'verbose': True, 'node_ids': None}}"
    assert parse(text).calls == (ParsedCall("run_tests", {"verbose": True, "node_ids": None}),)


def test_json_code_sample_is_not_a_call() -> None:
    text = (
        "The config should look like this:\n"
        '```json\n{"name": "my-app", "version": "1.0", "scripts": {"test": "pytest"}}\n```\n'
        "Let me know if that helps."
    )
    p = parse(text)
    assert p.calls == ()
    assert p.style == "none"
    assert '"name": "my-app"' in p.thought


def test_json_python_code_sample_is_not_a_call() -> None:
    text = "The function builds a dict:\n```python\ndef f():\n    return {'a': 1, 'b': [1, 2]}\n```"
    p = parse(text)
    assert p.calls == ()
    assert p.thought == text


def test_json_unknown_name_is_not_a_call() -> None:
    p = parse('{"name": "bash", "arguments": {"cmd": "ls"}}')
    assert p.calls == ()
    assert p.style == "none"


def test_json_inner_object_of_a_non_call_is_ignored() -> None:
    text = '{"tools": [{"name": "read_file", "description": "Read a file"}], "version": 2}'
    assert parse(text).calls == ()


def test_json_malformed_known_tool_returns_text_arguments() -> None:
    text = (
        '```json\n{"name": "edit_file", "arguments": {"path": "a.py", "old_text": "x" "new_text": "y"}}\n```'
    )
    p = parse(text)
    assert len(p.calls) == 1
    assert p.calls[0].name == "edit_file"
    assert p.calls[0].arguments == '{"path": "a.py", "old_text": "x" "new_text": "y"}'


def test_json_truncated_at_end_of_text() -> None:
    p = parse('```json\n{"name": "read_file", "arguments": {"path": "a.py"}')
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_json_arguments_bare_string_maps_to_single_argument() -> None:
    assert parse('{"name": "read_file", "arguments": "a.py"}').calls == (
        ParsedCall("read_file", {"path": "a.py"}),
    )


def test_json_without_known_tools_finds_nothing() -> None:
    p = parse_content('{"name": "read_file", "arguments": {"path": "a.py"}}', ())
    assert p.calls == ()


def test_json_windows_newlines_in_fence() -> None:
    text = 'Reading.\r\n```json\r\n{"name": "read_file",\r\n "arguments": {"path": "a.py"}}\r\n```\r\n'
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)
    assert p.thought == "Reading."


# ---------------------------------------------------------------------------------------------
# No call, mixed forms


def test_prose_only() -> None:
    text = "The test fails because gcd(0, 0) divides by zero. I think we should guard it."
    p = parse(text)
    assert p == ParsedContent(thought=text, calls=(), style="none", final_answer=None)


def test_empty_text() -> None:
    assert parse("") == ParsedContent(thought="", calls=(), style="none")


def test_special_tokens_are_removed() -> None:
    p = parse('{"name": "run_tests", "arguments": {}}<|im_end|>')
    assert p.calls == (ParsedCall("run_tests", {}),)
    assert p.thought == ""


def test_mixed_forms_keep_text_order() -> None:
    text = (
        "Thought: first read\n"
        'Action: read_file\nAction Input: {"path": "a.py"}\n'
        '<tool_call>{"name": "run_tests", "arguments": {}}</tool_call>'
    )
    p = parse(text)
    assert [c.name for c in p.calls] == ["read_file", "run_tests"]
    assert p.style == "react"


def test_tag_call_new_text_containing_action_line_is_not_react() -> None:
    args = {"path": "notes.txt", "old_text": "", "new_text": "Action: read_file\nAction Input: x\n"}
    text = "<tool_call>" + json.dumps({"name": "write_file", "arguments": args}) + "</tool_call>"
    p = parse(text)
    assert p.calls == (ParsedCall("write_file", args),)
    assert p.style == "tool_call_tag"


def test_submit_call_in_json() -> None:
    text = 'All tests pass.\n```json\n{"name": "submit", "arguments": {"summary": "guard zero in gcd"}}\n```'
    p = parse(text)
    assert p.calls == (ParsedCall("submit", {"summary": "guard zero in gcd"}),)
    assert p.thought == "All tests pass."


@pytest.mark.parametrize(
    "text",
    [
        'Action: read_file\nAction Input: {"path": "a.py"}',
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>',
        '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```',
        '{"function": {"name": "read_file", "arguments": {"path": "a.py"}}}',
        "Action: read_file[a.py]",
        "Action: read_file(path='a.py')",
    ],
)
def test_every_form_gives_the_same_call(text: str) -> None:
    assert parse(text).calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_json_truncated_fence_leaves_no_fence_in_thought() -> None:
    p = parse('Reading.\n```json\n{"name": "read_file", "arguments": {"path": "a.py"}')
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)
    assert p.thought == "Reading."


def test_json_after_unbalanced_braces_in_prose() -> None:
    text = "The test builds {a, b and it's odd { here.\n"
    text += '{"name": "read_file", "arguments": {"path": "a.py"}}'
    p = parse(text)
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)
    assert p.thought == "The test builds {a, b and it's odd { here."


def test_pathological_braces_stay_fast() -> None:
    text = "x = {" * 3000 + '\n{"name": "read_file", "arguments": {"path": "a.py"}}'
    started = time.monotonic()
    p = parse(text)
    assert time.monotonic() - started < 5
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_unclosed_json_like_braces_are_bounded() -> None:
    text = "{'" * 5000 + '\n{"name": "read_file", "arguments": {"path": "a.py"}}'
    started = time.monotonic()
    parse(text)
    assert time.monotonic() - started < 10


def test_tag_name_then_json_arguments() -> None:
    p = parse('<tool_call>\nread_file\n{"path": "a.py"}\n</tool_call>')
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_tag_unreadable_content_is_an_unnamed_call() -> None:
    p = parse("<tool_call>please read a.py</tool_call>")
    assert p.calls == (ParsedCall("", "please read a.py"),)
    assert p.style == "tool_call_tag"


def test_react_inline_json_after_name() -> None:
    p = parse('Action: read_file {"path": "a.py"}')
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_react_name_on_next_line() -> None:
    p = parse("Action:\nread_file\nAction Input: a.py")
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)


def test_react_observation_echo_at_start_is_kept() -> None:
    p = parse("Observation: 1 failed\nThought: fix it\nAction: read_file\nAction Input: a.py")
    assert p.calls == (ParsedCall("read_file", {"path": "a.py"}),)
    assert p.thought == "Observation: 1 failed\nfix it"


def test_python_set_literal_is_not_a_json_argument() -> None:
    p = parse("{'name': 'read_file', 'arguments': {1: {1, 2}}}")
    assert p.calls == (ParsedCall("read_file", "{1: {1, 2}}"),)


def test_python_tuple_becomes_list() -> None:
    p = parse("{'name': 'run_tests', 'arguments': {'node_ids': ('a', 'b')}}")
    assert p.calls == (ParsedCall("run_tests", {"node_ids": ["a", "b"]}),)


_MESSAGES = [
    'Thought: x\nAction: edit_file\nAction Input: {"path": "a.py",'
    ' "old_text": "def f(x):\\n    return {x: 1}",'
    ' "new_text": "it\'s \\"q\\" ```"}\nObservation: ok',
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>\n'
    '<tool_call>{"name": "x", "arguments": "{\\"a\\": [1, 2"}</tool_call>',
    'Sure!\n```json\n[{"function": {"name": "read_file", "arguments": {"path": "a.py"}}},'
    ' {"tool": "run_tests", "args": {}}]\n```\nFinal Answer: `done`',
    "Action: edit_file(path='a.py', old_text='''x\n''', new_text=\"y\", **k)\nAction: read_file[b.py]",
]


@pytest.mark.parametrize("message", _MESSAGES)
def test_every_prefix_parses_without_error(message: str) -> None:
    """Streaming and max_tokens cut messages anywhere; the parser must never raise."""
    for i in range(len(message) + 1):
        p = parse(message[:i])
        assert p.style in {"react", "tool_call_tag", "json", "none"}
        for call in p.calls:
            if isinstance(call.arguments, dict):
                json.dumps(call.arguments)
