"""The verification gate: a fix is accepted only if targets pass, nothing regressed, no test was weakened.

`baseline` records what passed before, `tamper` names every way a change weakens the tests, `proposal` drops
what the fix does not need, `gate` judges a submit with all three, and `port` is
the face the agent sees (`Gate`, `GateVerdict`).
"""

from fixloop.verify.baseline import Baseline, record_baseline, related_test_modules
from fixloop.verify.gate import VerificationGate
from fixloop.verify.port import Gate, GateVerdict
from fixloop.verify.proposal import proposal_changes
from fixloop.verify.tamper import tamper_reasons

__all__ = [
    "Baseline",
    "Gate",
    "GateVerdict",
    "VerificationGate",
    "proposal_changes",
    "record_baseline",
    "related_test_modules",
    "tamper_reasons",
]
