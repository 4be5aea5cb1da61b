"""A code answer replaces the definition of its name where it lives: nested, a method, a module constant."""

from __future__ import annotations

from fixloop.tools.code_placement import PlacementHints
from fixloop.tools.code_reply import CodeBlock, apply_code_blocks, apply_code_reply

PARSER = '''"""Parser."""
import re

PATTERN = re.compile(r"[a-z]+")


def tokens(text):
    def clean(word):
        return word.upper()

    return [clean(word) for word in PATTERN.findall(text)]


class Box:
    def __init__(self):
        self._size = 0

    @property
    def size(self):
        return self._size

    @size.setter
    def size(self, value):
        self._size = value + 1

    @staticmethod
    def unit():
        return 2

    @classmethod
    def empty(cls):
        return None

    async def fetch(self):
        return 0


class Other:
    def fetch(self):
        return 1
'''


def test_a_nested_function_written_dedented_replaces_the_inner_def_in_place():
    reply = "```python\ndef clean(word):\n    return word.lower()\n```"
    edit = apply_code_reply(reply, {"parser.py": PARSER})
    assert edit.problems == ()
    assert edit.files == {
        "parser.py": PARSER.replace("        return word.upper()", "        return word.lower()")
    }
    assert edit.applied == ("parser.py: replaced nested function tokens.clean",)


def test_a_method_written_at_its_class_indentation_is_moved_left_before_it_is_parsed():
    at_class = "# parser.py\n    @staticmethod\n    def unit():\n        return 1\n"
    lost_first_indent = "@staticmethod\n    def unit():\n        return 1\n"
    expected = PARSER.replace("        return 2", "        return 1")
    for code in (at_class, lost_first_indent):
        edit = apply_code_blocks([CodeBlock(code, "parser.py")], {"parser.py": PARSER})
        assert edit.problems == ()
        assert edit.files == {"parser.py": expected}


def test_a_property_setter_replaces_the_setter_not_the_getter():
    reply = "```python\n@size.setter\ndef size(self, value):\n    self._size = value\n```"
    edit = apply_code_reply(reply, {"parser.py": PARSER})
    assert edit.files == {"parser.py": PARSER.replace("self._size = value + 1", "self._size = value")}
    assert "the one with the same decorators" in edit.choices[0]


def test_classmethods_and_async_methods_keep_their_shape():
    reply = (
        "```python\n@classmethod\ndef empty(cls):\n    return cls()\n```\n"
        "```python\nclass Box:\n    async def fetch(self):\n        return 5\n```"
    )
    edit = apply_code_reply(reply, {"parser.py": PARSER})
    assert edit.problems == ()
    fixed = PARSER.replace("        return None", "        return cls()").replace(
        "    async def fetch(self):\n        return 0", "    async def fetch(self):\n        return 5"
    )
    assert edit.files == {"parser.py": fixed}


def test_two_definitions_of_one_name_are_told_apart_by_the_suspects_and_by_the_lines_run():
    code = "async def fetch(self):\n    return 9\n"
    by_suspect = apply_code_blocks(
        [CodeBlock("def fetch(self):\n    return 9\n")],
        {"parser.py": PARSER},
        PlacementHints(suspects=("parser.py::Other.fetch",)),
    )
    assert "    def fetch(self):\n        return 9\n" in by_suspect.files["parser.py"]
    assert "    async def fetch(self):\n        return 0\n" in by_suspect.files["parser.py"]
    assert by_suspect.choices == (
        "parser.py: fetch is defined 2 times (Box.fetch, Other.fetch): replaced Other.fetch, the suspect",
    )
    other_line = PARSER.splitlines().index("        return 1") + 1
    by_lines = apply_code_blocks(
        [CodeBlock(code)], {"parser.py": PARSER}, PlacementHints(lines_run={"parser.py": {other_line}})
    )
    assert "class Other:\n    async def fetch(self):\n        return 9\n" in by_lines.files["parser.py"]
    assert by_lines.choices[0].endswith("replaced Other.fetch, the one the failing test runs")


def test_a_module_level_assignment_alone_replaces_the_one_of_that_name():
    reply = '```python\nPATTERN = re.compile(r"[a-zA-Z]+")\n```'
    edit = apply_code_reply(reply, {"parser.py": PARSER, "other.py": "X = 1\n"})
    assert edit.problems == ()
    assert edit.files == {"parser.py": PARSER.replace('r"[a-z]+"', 'r"[a-zA-Z]+"')}
    assert edit.applied == ("parser.py: replaced assignment PATTERN",)


def test_with_the_placement_setting_off_a_nested_answer_is_added_as_before():
    reply = "```python\ndef clean(word):\n    return word.lower()\n```"
    blocks = [CodeBlock("def clean(word):\n    return word.lower()\n", "parser.py")]
    edit = apply_code_blocks(blocks, {"parser.py": PARSER}, PlacementHints(anywhere=False))
    assert edit.applied == ("parser.py: added function clean",)
    assert "        return word.upper()" in edit.files["parser.py"]
    assert apply_code_reply(reply, {"parser.py": PARSER}).applied[0].endswith("nested function tokens.clean")
