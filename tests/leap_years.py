"""A leap-year rule with a one-token bug and three of its verified versions: the unit tests of the pool's
ranking and of the checks the model writes share them."""

LEAP = (
    "def is_leap(year):\n"
    '    """Gregorian: every 4th year, but not centuries, except every 400th."""\n'
    "    return year % 4 == 0 and (year % 100 != 0 and year % 400 == 0)\n"
)
OUTER = LEAP.replace("== 0 and (year", "== 0 or (year")  # every 4th year: wrong for 1900
INNER = LEAP.replace("!= 0 and year", "!= 0 or year")  # the right fix
REWRITE = LEAP.replace(
    "    return year % 4 == 0 and (year % 100 != 0 and year % 400 == 0)\n",
    "    if year % 400 == 0:\n        return True\n    return year % 4 == 0 and year % 100 != 0\n",
)
