"""Model profiles: temperature, protocol, tool-schema form, context budget and strategy by model family.

One table, first match wins, matched against the model's name (`local`, `local:<name>`, or the name at
the endpoint). A profile fills only the settings no source gave (`Settings.explicit`), so every value here
is a default the user can override. The managed local models' values were chosen on the bench (docs/bench.md,
"Efficacy figures"); the others follow what each family is known to do well and are marked as such.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fixloop.config import Settings


@dataclass(frozen=True)
class ModelProfile:
    """Settings values for the models whose name matches `pattern` (case-insensitive)."""

    name: str
    pattern: str
    values: Mapping[str, Any] = field(default_factory=dict)

    def matches(self, model: str) -> bool:
        return re.search(self.pattern, model, re.IGNORECASE) is not None


# Small models (<= 3B): they repeat their first idea at temperature 0 and handle JSON tool calls poorly, so
# the first turn asks for whole corrected functions as code and several candidates are sampled and verified.
_SMALL = {
    "temperature": 0.0,
    "compact_tools": True,
    "strategy": "sample",
    "edit_form": "code",
    "samples": 6,
    "sample_temperature": 0.8,
    "sample_parallel": 2,
    "sample_rounds": 2,
    "context_chars": 24_000,
    "warm_start_chars": 6000,
}
# Mid-size open models (7B-34B): good with tools, still better with a verified code first turn.
_MID = {
    "temperature": 0.0,
    "strategy": "react",
    "edit_form": "code",
    "samples": 4,
    "sample_rounds": 2,
    "sample_temperature": 0.7,
    "context_chars": 48_000,
    "warm_start_chars": 8000,
}
# Large hosted models: native tools, the loop first; sampling only after a rejected attempt.
_LARGE = {
    "temperature": 0.0,
    "protocol": "auto",
    "strategy": "react",
    "edit_form": "tools",
    "samples": 4,
    "sample_rounds": 1,
    "sample_temperature": 0.8,
    "sample_parallel": 4,
    "context_chars": 96_000,
    "warm_start_chars": 12_000,
}

PROFILES: tuple[ModelProfile, ...] = (
    ModelProfile("managed local model", r"^local(:.*)?$", _SMALL),
    ModelProfile("small Qwen", r"qwen.*[^\d.](0\.5|1\.5|3)b", _SMALL),
    ModelProfile("small Llama", r"llama.*[^\d.](1|3)b", _SMALL),
    ModelProfile("small DeepSeek", r"deepseek.*[^\d.](1\.3|1\.5)b", _SMALL),
    ModelProfile("Qwen", r"qwen", _MID),
    ModelProfile("Llama", r"llama", _MID),
    ModelProfile("DeepSeek", r"deepseek", {**_MID, "context_chars": 96_000}),
    # OpenAI's reasoning models reject `temperature`: it stays unsent unless the user sets it.
    ModelProfile(
        "OpenAI reasoning",
        r"^(openai/)?(o\d|gpt-5)",
        {key: value for key, value in _LARGE.items() if key != "temperature"},
    ),
    ModelProfile("GPT", r"^(openai/)?(gpt-|o\d)", _LARGE),
    ModelProfile("Claude", r"claude", _LARGE),
)
DEFAULT = ModelProfile("default", r"", {})


def profile_for(model: str) -> ModelProfile:
    """The first profile matching `model`, else the default (no changes)."""
    return next((profile for profile in PROFILES if profile.matches(model)), DEFAULT)


def with_profile(settings: Settings) -> Settings:
    """`settings` with the model's profile filling every setting no source gave."""
    profile = profile_for(settings.model)
    values = {key: value for key, value in profile.values.items() if key not in settings.explicit}
    if not values:
        return settings
    return replace(settings, **values)
