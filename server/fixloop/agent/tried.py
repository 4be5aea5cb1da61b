"""The fixes a run has already tried and seen fail, so that nothing is validated twice or suggested again."""

from __future__ import annotations

from dataclasses import dataclass

from fixloop.agent.candidates import FixKey


@dataclass(frozen=True)
class TriedFix:
    """One change set that failed: what it changed, in one line, and why it failed."""

    description: str
    reason: str


class TriedFixes:
    """Failed change sets by key, in the order they were tried."""

    def __init__(self) -> None:
        self._tried: dict[FixKey, TriedFix] = {}
        self._excluded: set[FixKey] = set()

    def __len__(self) -> int:
        return len(self._tried)

    def add(self, key: FixKey, description: str, reason: str) -> None:
        if key and key not in self._tried:
            self._tried[key] = TriedFix(description, reason)

    def get(self, key: FixKey) -> TriedFix | None:
        return self._tried.get(key)

    def exclude(self, key: FixKey, description: str, reason: str) -> None:
        """A fix never to propose, whatever the tests say (the user rejected it)."""
        self._excluded.add(key)
        self.add(key, description, reason)

    def excluded(self, key: FixKey) -> bool:
        return key in self._excluded

    def lines(self, limit: int = 6) -> list[str]:
        """The latest `limit` tried fixes, one line each, for the model."""
        tried = list(self._tried.values())[-limit:]
        return [f"- {fix.description[:240]}: {fix.reason[:240]}" for fix in tried]
