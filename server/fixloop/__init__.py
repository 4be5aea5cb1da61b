"""fixloop: fixes failing pytest tests with a verified ReAct loop, served over LSP."""

__version__ = "0.1.0"
