"""What a failed call to the model's endpoint means, in one line that says what to do."""

from __future__ import annotations

from dataclasses import dataclass

import openai

from fixloop.errors import ModelError
from fixloop.model.replies import content_type_of, error_message, refused_connection, short_error
from fixloop.model.stream_chunks import Stalled


class ToolsUnsupported(ModelError):
    """The endpoint rejected the `tools` parameter (HTTP 400); the loop falls back to the text protocol."""


@dataclass(frozen=True)
class Endpoint:
    """What a message about the endpoint names: where it is, which model, and its time limits."""

    base_url: str
    model: str
    timeout: float
    stall_timeout: float


def _explain_connection(error: openai.APIConnectionError, where: str, tries: str) -> ModelError:
    """A connection that failed: refused, or cut in the middle of an answer, or another reason."""
    cause = error.__cause__ or error.__context__
    reason = short_error(cause) if cause else "connection failed"
    if refused_connection(error):
        reason = "connection refused"
    elif "incomplete" in reason.lower() or "peer closed" in reason.lower():
        return ModelError(
            f"the model at {where} closed the connection in the middle of its answer{tries}; check the server"
        )
    return ModelError(f"cannot reach {where}: {reason} — is your model server running?")


def explain(error: Exception, at: Endpoint, sent_tools: bool, retries: int, spent: float = 0.0) -> ModelError:
    """What a failed model call means, in one line that says what to do."""
    where = at.base_url
    tries = f" ({retries + 1} tries in {spent:.0f} s)" if retries else ""
    if isinstance(error, Stalled) and error.started:
        return ModelError(
            f"the model at {where} stopped sending in the middle of its answer "
            f"(nothing for {at.stall_timeout:g} s){tries}; check the server"
        )
    if isinstance(error, Stalled | openai.APITimeoutError):
        return ModelError(
            f"the model at {where} did not answer within {at.timeout:g} s{tries}; "
            "raise modelTimeout, or check the server"
        )
    if isinstance(error, openai.APIConnectionError):
        return _explain_connection(error, where, tries)
    status = getattr(error, "status_code", 0)
    message = error_message(error)
    if status == 401:
        return ModelError(
            f"401 from {where}: set FIXLOOP_API_KEY (or the variable named by apiKeyEnv) to a valid key"
        )
    if status == 403:
        return ModelError(f"403 from {where}: the key may not use model '{at.model}' ({message})")
    if status == 404:
        return ModelError(
            f"model '{at.model}' not found at {where} ({message}); check the `model` and `baseUrl` settings"
        )
    if status == 400 and sent_tools and "tool" in message.lower():
        return ToolsUnsupported(f"{where} does not accept tools: {message}")
    after = f" after {retries} retries" if retries else ""
    if "<html" in message.lower() or message.startswith("Error code:"):
        message = f"{content_type_of(error)} answer, not an API error"
    return ModelError(f"model error {status} from {where}{after}: {message}")
