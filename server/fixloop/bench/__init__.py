"""`fixloop bench`: fixes real bug cases in several modes, scored by an independent judge (see running.py)."""
