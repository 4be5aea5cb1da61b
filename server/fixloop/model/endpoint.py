"""An endpoint before any turn: the models it lists, and the preflight that fails a run on it in one line.

The preflight runs while the run starts (the shadow copy waits `PREFLIGHT_HEAD_START` for it): a dead
endpoint, a rejected key or a model the endpoint does not have ends the run within a couple of seconds with
one line, instead of after the baseline. It asks `GET /models` (one try; 1.5 s to connect); a model missing
from the list gets a 1-token call, which decides (llama.cpp's server answers to any name; Azure lists no
deployments, so it always gets the call). What it cannot judge (no listing, a slow answer, a 5xx) is left
to the run's own client. Plain standard-library HTTP in a thread, so the command line can start it before
the chat client's libraries are even imported; success is remembered for the process.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from fixloop import __version__
from fixloop.errors import ModelError

CONNECT_TIMEOUT = 1.5  # seconds to connect (and, for the preflight's listing, to answer)
READ_TIMEOUT = 10.0  # seconds for `fixloop models` / doctor's listing and for the 1-token call
# ModelError.reason of the preflight's failures
UNREACHABLE, KEY_REJECTED, MODEL_MISSING = "unreachable", "key rejected", "model missing"
_passed: set[tuple[str, str, str, str]] = set()  # (base_url, model, api_version, key digest) checked once


class _Slow(Exception):
    """Connected, but no answer within the timeout: the endpoint is up (the run's client waits longer)."""


@dataclass(frozen=True)
class Endpoint:
    """Where the model is and how to authenticate: Bearer, or with `api_version` Azure OpenAI's `api-key`
    header and `api-version` query (base URL `https://RESOURCE.openai.azure.com/openai/deployments/NAME`)."""

    base_url: str
    api_key: str | None = None
    api_version: str = ""

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": f"fixloop/{__version__}"}
        if self.api_key and self.api_version:
            headers["api-key"] = self.api_key
        elif self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def url(self, path: str) -> str:
        """`path` under the base URL (an absolute URL as it is), with Azure's `api-version` query."""
        url = path if "://" in path else f"{self.base_url.rstrip('/')}/{path.lstrip('/')}"
        return f"{url}?{urlencode({'api-version': self.api_version})}" if self.api_version else url

    def listing_urls(self) -> list[str]:
        """Where the model list is: `/models` under the base URL (Azure: the resource's `/openai/models`),
        then Ollama's own `/api/tags` at the server's root."""
        parts = urlsplit(self.base_url.rstrip("/"))
        path = parts.path.split("/deployments/", 1)[0] if "/openai/deployments/" in parts.path else parts.path
        root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
        return [urlunsplit((parts.scheme, parts.netloc, f"{path}/models", "", "")), f"{root}/api/tags"]


def _call(
    endpoint: Endpoint, url: str, timeout: float, body: dict[str, Any] | None = None
) -> tuple[int, Any]:
    """(HTTP status, the JSON answer or None); ModelError(UNREACHABLE) when no connection, _Slow on a
    connection that does not answer in time."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {**endpoint.headers(), **({"Content-Type": "application/json"} if data else {})}
    request = urllib.request.Request(endpoint.url(url), data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # baseUrl is checked to be http(s)
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    except urllib.error.URLError as error:
        raise ModelError(_unreachable(endpoint, error.reason), UNREACHABLE) from None
    except TimeoutError:
        raise _Slow() from None
    except (OSError, ValueError) as error:  # a reset connection, a malformed URL
        raise ModelError(_unreachable(endpoint, error), UNREACHABLE) from None
    try:
        return status, json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return status, None


def model_names(payload: Any) -> list[str]:
    """The model names in a listing: OpenAI's `{"data": [{"id"}]}` or Ollama's `{"models": [{"name"}]}`."""
    if not isinstance(payload, dict):
        return []
    names: list[str] = []
    for key, field in (("data", "id"), ("models", "name"), ("models", "model")):
        entries = payload.get(key)
        if isinstance(entries, list):
            names += [
                entry[field]
                for entry in entries
                if isinstance(entry, dict) and isinstance(entry.get(field), str)
            ]
    return list(dict.fromkeys(names))


def is_listed(model: str, names: list[str]) -> bool:
    """Whether `model` is among `names`; Ollama's `name` and `name:latest` are the same model."""
    return model in names or f"{model}:latest" in names or model.removesuffix(":latest") in names


def list_models_now(endpoint: Endpoint, timeout: float = READ_TIMEOUT) -> list[str]:
    """The endpoint's models; a ModelError (one line) when it cannot be reached or lists none."""
    problems: list[str] = []
    for url in endpoint.listing_urls():
        try:
            status, payload = _call(endpoint, url, timeout)
        except _Slow:
            raise ModelError(f"{endpoint.base_url} did not answer within {timeout:g} s") from None
        if status in (401, 403):
            raise ModelError(_key_message(endpoint, status), KEY_REJECTED)
        names = model_names(payload) if status == 200 else []
        if names:
            return names
        problems.append(
            f"{urlsplit(url).path} answered {status}"
            if status != 200
            else f"{urlsplit(url).path} listed no models"
        )
    raise ModelError(
        f"{endpoint.base_url} lists no models ({'; '.join(problems)}); is it an "
        "OpenAI-compatible base URL (ending in /v1)?"
    )


async def list_models(endpoint: Endpoint) -> list[str]:
    return await asyncio.to_thread(list_models_now, endpoint)


def preflight_now(endpoint: Endpoint, model: str) -> None:
    """Fail at once (ModelError, one line) on a dead endpoint, a rejected key or a model it does not have;
    return when it looks usable or when it cannot be judged from outside."""
    digest = hashlib.sha256((endpoint.api_key or "").encode()).hexdigest()
    key = (endpoint.base_url, model, endpoint.api_version, digest)
    if key in _passed:
        return
    names = [] if endpoint.api_version else _listed(endpoint)
    if names is None or is_listed(model, names) or answers_now(endpoint, model, names):
        _passed.add(key)


async def preflight(endpoint: Endpoint, model: str) -> None:
    await asyncio.to_thread(preflight_now, endpoint, model)


def _listed(endpoint: Endpoint) -> list[str] | None:
    """The names GET /models lists; None when it lists nothing usable or answers slowly (left to the run)."""
    try:
        status, payload = _call(endpoint, endpoint.listing_urls()[0], CONNECT_TIMEOUT)
    except _Slow:
        return None
    if status == 401:
        raise ModelError(_key_message(endpoint, 401), KEY_REJECTED)
    return (model_names(payload) or None) if status == 200 else None


def answers_now(endpoint: Endpoint, model: str, names: list[str] | None = None) -> bool:
    """Whether a 1-token call to `model` is answered (False: cannot be judged); MODEL_MISSING on a 404."""
    body = {"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "Say OK."}]}
    try:
        status, _payload = _call(endpoint, "chat/completions", READ_TIMEOUT, body)
    except _Slow:
        return False
    if status == 401:
        raise ModelError(_key_message(endpoint, 401), KEY_REJECTED)
    if status == 404:
        raise ModelError(_missing(endpoint, model, names or []), MODEL_MISSING)
    return status == 200


async def answers(endpoint: Endpoint, model: str, names: list[str] | None = None) -> bool:
    return await asyncio.to_thread(answers_now, endpoint, model, names)


def _missing(endpoint: Endpoint, model: str, names: list[str]) -> str:
    if endpoint.api_version:
        return (
            f"no such deployment: {endpoint.base_url} answers 404; Azure OpenAI's base URL ends in "
            "/openai/deployments/<your deployment name>"
        )
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    has = f" (it has {shown})" if names else ""
    return (
        f"model '{model}' is not served at {endpoint.base_url}{has}; set `model` to one that is "
        f"(`fixloop models --base-url {endpoint.base_url}` lists them)"
    )


def _unreachable(endpoint: Endpoint, reason: Any) -> str:
    if isinstance(reason, TimeoutError):
        text = f"no connection within {CONNECT_TIMEOUT:g} s"
    elif isinstance(reason, ConnectionRefusedError):
        text = "connection refused"
    else:
        text = (str(reason).strip().splitlines() or ["connection failed"])[0][:200]
    return (
        f"cannot reach {endpoint.base_url}: {text} — is your model server running? "
        "(`fixloop doctor` checks it)"
    )


def _key_message(endpoint: Endpoint, status: int) -> str:
    return (
        f"{status} from {endpoint.base_url}: the key was not accepted; set FIXLOOP_API_KEY (or the "
        "variable named by apiKeyEnv) to a valid key"
    )
