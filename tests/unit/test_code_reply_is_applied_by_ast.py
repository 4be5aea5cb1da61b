"""A reply written as fenced Python code edits the functions it names, by AST, and nothing else."""

from __future__ import annotations

from fixloop.tools.code_reply import apply_code_reply, code_blocks

SHOP = '''"""Shop."""
import math

RATE = 0.2  # tax


def total(items):
    """Sum."""
    return sum(items) - 1


class Cart:
    def __init__(self):
        self.items = []

    @property
    def count(self):
        return len(self.items) + 1
'''


def test_a_function_is_replaced_and_the_rest_of_the_file_is_untouched():
    reply = "The sum is off by one.\n```python\ndef total(items):\n    return sum(items)\n```\n"
    edit = apply_code_reply(reply, {"shop.py": SHOP, "other.py": "def total2():\n    pass\n"})
    assert edit.problems == ()
    fixed = SHOP.replace('    """Sum."""\n    return sum(items) - 1', "    return sum(items)")
    assert edit.files == {"shop.py": fixed}
    assert edit.applied == ("shop.py: replaced function total",)


def test_a_method_given_bare_or_in_its_class_is_replaced_in_place_with_its_decorator():
    bare = "```python\n@property\ndef count(self):\n    return len(self.items)\n```"
    in_class = "```py\nclass Cart:\n    @property\n    def count(self):\n        return len(self.items)\n```"
    expected = SHOP.replace("len(self.items) + 1", "len(self.items)")
    assert apply_code_reply(bare, {"shop.py": SHOP}).files == {"shop.py": expected}
    assert apply_code_reply(in_class, {"shop.py": SHOP}).files == {"shop.py": expected}


def test_constants_imports_and_new_helpers_are_placed_and_the_named_file_wins():
    reply = (
        "shop.py\n```python\nimport decimal\n\nRATE = 0.25\n\ndef helper():\n    return 1\n```\n"
        "and in lib.py:\n```python\ndef total(items):\n    return 0\n```"
    )
    edit = apply_code_reply(reply, {"shop.py": SHOP, "lib.py": "def total(items):\n    return 1\n"})
    shop = edit.files["shop.py"]
    assert "import math\nimport decimal\n" in shop and "RATE = 0.25\n" in shop
    assert shop.endswith("\n\n\ndef helper():\n    return 1\n") and "return sum(items) - 1" in shop
    assert edit.files["lib.py"] == "def total(items):\n    return 0\n"


def test_line_number_gutters_and_crlf_files_are_handled():
    reply = "```python\n   7 | def total(items):\n   8 |     return sum(items)\n```"
    crlf = SHOP.replace("\n", "\r\n")
    edit = apply_code_reply(reply, {"shop.py": crlf})
    assert "def total(items):\r\n    return sum(items)\r\n" in edit.files["shop.py"]
    assert "\n" not in edit.files["shop.py"].replace("\r\n", "")


def test_replies_that_cannot_be_placed_are_problems_not_edits():
    files = {"shop.py": SHOP}
    assert apply_code_reply("just prose", files).problems == ("the reply has no ```python block with code",)
    broken = apply_code_reply("```python\ndef total(items)\n    return 0\n```", files)
    assert broken.files == {} and "not valid Python" in broken.problems[0]
    unknown = apply_code_reply("```python\ndef elsewhere():\n    return 0\n```", files)
    assert unknown.files == {} and "matches no function" in unknown.problems[0]
    unchanged = '```python\ndef total(items):\n    """Sum."""\n    return sum(items) - 1\n```'
    same = apply_code_reply(unchanged, files)
    assert same.files == {} and "changes nothing" in same.problems[0]


def test_the_path_is_read_from_the_line_before_the_fence_or_a_first_line_comment():
    reply = "In `pkg/a.py`:\n```python\nx = 1\n```\n```python\n# file: b.py\ny = 2\n```\n```\nz = 3\n```"
    blocks = code_blocks(reply)
    assert [block.path for block in blocks] == ["pkg/a.py", "b.py", None]


def test_the_shapes_a_small_model_writes_are_read():
    # a fence, the example's path copied, a second opening fence, an indented method, then prose
    reply = (
        "```python\npath/to/shop.py\n```python\n    @property\n    def count(self):\n"
        "        return len(self.items)\n```\n\nThis fixes the count.\n"
    )
    edit = apply_code_reply(reply, {"pkg/shop.py": SHOP, "pkg/other.py": "def count():\n    pass\n"})
    assert edit.applied == ("pkg/shop.py: replaced method Cart.count",), edit.problems
    assert edit.files["pkg/shop.py"] == SHOP.replace("len(self.items) + 1", "len(self.items)")


def test_a_wrong_path_yields_to_the_file_that_defines_the_function():
    reply = "other.py\n```python\ndef total(items):\n    return sum(items)\n```\n"
    edit = apply_code_reply(reply, {"shop.py": SHOP, "other.py": "def unrelated():\n    pass\n"})
    assert list(edit.files) == ["shop.py"]


def test_blocks_of_other_languages_and_an_unfinished_last_block():
    reply = (
        "```diff\n-    return sum(items) - 1\n+    return sum(items)\n```\n"
        "shop.py\n```python\ndef total(items):\n    return sum(items)\n"
    )  # the reply was cut here
    (block,) = code_blocks(reply)
    assert block.path == "shop.py" and block.code.startswith("def total(items):")
