"""`--shard K/N`: a deterministic part of the cases, chosen by a hash of each case's name (not its order)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from fixloop.bench.cases import BenchCase
from fixloop.errors import ConfigError

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """`K/N` (1 <= K <= N) as (K, N); None when not given; a ConfigError naming the mistake otherwise."""
    if text is None:
        return None
    found = _SHARD.match(text)
    if found is None:
        raise ConfigError(f"--shard {text!r}: write K/N, e.g. --shard 2/4 for the second of four parts")
    part, parts = int(found.group(1)), int(found.group(2))
    if parts < 1 or not 1 <= part <= parts:
        raise ConfigError(f"--shard {text}: K must be between 1 and N (N at least 1)")
    return part, parts


def shard_of(name: str, parts: int) -> int:
    """The shard (1-based) a case belongs to: the same on every machine, whatever the other cases are."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % parts + 1


def in_shard(cases: Sequence[BenchCase], shard: tuple[int, int] | None) -> list[BenchCase]:
    """The cases of shard K of N, in their order; every case when no shard is given."""
    if shard is None:
        return list(cases)
    part, parts = shard
    return [case for case in cases if shard_of(case.name, parts) == part]
