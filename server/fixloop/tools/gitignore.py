"""A basic .gitignore matcher for project folders that are not git repositories."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class IgnoreRule:
    """One .gitignore line, compiled; `base` is the folder of its .gitignore relative to the root."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    base: str


def _translate(glob: str) -> str:
    """A gitignore glob (without anchoring slashes) as a regex over '/'-separated paths."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(char))
                i += 1
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
        elif char == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def parse_rules(text: str, base: str = "") -> list[IgnoreRule]:
    """The rules of one .gitignore file found in folder `base` ('' for the root)."""
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        if line.startswith("\\"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.strip("/") if dir_only else line
        anchored = line.startswith("/") or "/" in line.rstrip("/")
        line = line.lstrip("/")
        if not line:
            continue
        pattern = _translate(line)
        regex = "^" + pattern + "$" if anchored else "^(?:.*/)?" + pattern + "$"
        try:
            compiled = re.compile(regex)
        except re.error:
            continue
        rules.append(IgnoreRule(compiled, negated, dir_only, base))
    return rules


class GitIgnore:
    """The .gitignore rules of a folder tree; later rules and deeper files win, as in git."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.rules: list[IgnoreRule] = []

    def add_file(self, gitignore: Path) -> None:
        try:
            text = gitignore.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        base = gitignore.parent.relative_to(self.root).as_posix()
        self.rules.extend(parse_rules(text, "" if base == "." else base))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether `rel` ('/'-separated, relative to the root) is ignored by the rules added so far."""
        result = False
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.base:
                if not rel.startswith(rule.base + "/"):
                    continue
                subject = rel[len(rule.base) + 1 :]
            else:
                subject = rel
            if rule.regex.match(subject):
                result = not rule.negated
        return result
