"""How a request goes out: the endpoint's OpenAI client, and how one request's replies are drawn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import openai


@dataclass(frozen=True)
class Sampling:
    """How to draw one request's replies, when not as the client's defaults: temperature, seed, how many,
    and a lower cap on each reply's tokens than the client's."""

    temperature: float | None  # None: not sent (the endpoint's own)
    seed: int | None = None
    n: int = 1
    max_tokens: int | None = None  # a short answer (a line-level round's), below the client's own cap

    def request(self) -> dict[str, Any]:
        values: dict[str, Any] = {} if self.temperature is None else {"temperature": self.temperature}
        if self.max_tokens is not None:
            values["max_tokens"] = self.max_tokens
        if self.seed is not None:
            values["seed"] = self.seed
        if self.n > 1:
            values["n"] = self.n
        return values


def open_client(
    base_url: str, api_key: str | None, *, api_version: str = "", timeout: openai.Timeout | float = 600.0
) -> openai.AsyncOpenAI:
    """The OpenAI client for an endpoint: Bearer auth, or with `api_version` Azure OpenAI's `api-key`
    header and `api-version` query (base URL `https://RESOURCE.openai.azure.com/openai/deployments/NAME`).
    The client library loads here, at the first request, not with every module that reads replies."""
    import openai

    if api_version:
        return openai.AsyncAzureOpenAI(
            base_url=base_url,
            api_key=api_key or "no-key",
            api_version=api_version,
            timeout=timeout,
            max_retries=0,
        )
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "no-key", timeout=timeout, max_retries=0)
