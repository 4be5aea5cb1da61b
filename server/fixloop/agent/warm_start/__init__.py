"""Warm start: the failing tests, their failures and the code they reach, gathered before the first turn.

`gather` decides what to show, `code_index` resolves names across the project's files, `snippets` renders
line ranges and fits them into the character budget.
"""

from fixloop.agent.warm_start.gather import build_warm_start, gather_warm_start
from fixloop.agent.warm_start.snippets import ShownFunction, WarmStart

__all__ = ["ShownFunction", "WarmStart", "build_warm_start", "gather_warm_start"]
