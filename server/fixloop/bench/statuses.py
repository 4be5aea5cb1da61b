"""The judge's statuses, in the order tables list them, and how each reads in a table or a report."""

from __future__ import annotations

# fixed: the visible and the hidden checks pass; fixed_unchecked: the visible tests pass on a case that has no
# hidden checks; plausible: the visible tests pass and a hidden check fails.
STATUSES = ("fixed", "fixed_unchecked", "plausible", "claimed_but_wrong", "not_fixed", "error", "timeout")
FIXED_STATUSES = ("fixed", "fixed_unchecked")  # every check the case has passes
_LABELS = {"fixed_unchecked": "fixed (unchecked)"}


def status_label(status: str) -> str:
    """A status as people read it: `fixed_unchecked` is "fixed (unchecked)", the others as they are."""
    return _LABELS.get(status, status)


MECHANICAL, MODEL = "one-token search", "the model"


def found_by(record: object) -> str:
    """Who found a run's proposed change that the visible tests pass: one-token search (no model) or the
    model's rounds; "" when none was proposed. A row without `origin` (from before it was kept) is read
    from its summary, which names a one-token change."""
    status, origin, summary = (getattr(record, name, "") for name in ("status", "origin", "summary"))
    if not (counts_as_fixed(status) or status in ("plausible", "claimed_but_wrong")):
        return ""
    if origin:
        return MECHANICAL if origin == "mutants" else MODEL
    return MECHANICAL if "one-token change" in summary else MODEL


def counts_as_fixed(status: str) -> bool:
    """Whether a run's change passed every check its case has (for comparing modes and sides)."""
    return status in FIXED_STATUSES
