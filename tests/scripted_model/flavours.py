"""Server flavours: the scripted model answering as OpenAI, Azure OpenAI, Ollama, LM Studio, vLLM, llama.cpp.

A flavour is how a real server differs where fixloop meets it: the path and shape of its model listing,
the auth it asks for (a Bearer key, Azure's `api-key` header and `api-version` query, or none), whether
it takes `tools` (vLLM without `--enable-auto-tool-choice` and llama-server without `--jinja` refuse them
with a 400), when a stream carries usage (asked for, never, or always in the last chunk), and whether an
unknown model name is a 404 (llama-server answers to any name). The error bodies are the servers' own.
`generic` is the scripted model's behaviour before flavours: anything goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

OPENAI_KEY = "sk-scripted-openai"
AZURE_KEY = "scripted-azure-key"
AZURE_API_VERSION = "2024-10-21"
VLLM_KEY = "scripted-vllm-key"


@dataclass(frozen=True)
class Refusal:
    """An HTTP error answer the flavour gives instead of serving the request."""

    status: int
    body: dict[str, Any]


@dataclass(frozen=True)
class Flavour:
    """How one kind of server answers; `refuse` and `listing` are the only places it shows."""

    name: str
    key: str | None = None  # the key it requires (Bearer, or Azure's api-key header)
    api_version: str | None = None  # Azure: required `api-version` query
    tools: bool = True  # False: a request with `tools` is refused with a 400
    stream_usage: str = "asked"  # "asked" (stream_options.include_usage), "never", "always" (last chunk)
    any_model: bool = True  # False: an unknown model name is a 404
    owned_by: str = "fixloop"

    def base_path(self, model: str) -> str:
        return f"/openai/deployments/{model}" if self.api_version else "/v1"

    def route(self, path: str) -> tuple[str, str | None] | None:
        """("chat", deployment), ("text", None), ("models", None) or ("tags", None) for a request path; None:
        no route."""
        if self.api_version:
            if path == "/openai/models":
                return "models", None
            parts = path.split("/")
            if (
                len(parts) == 6
                and parts[1:3] == ["openai", "deployments"]
                and parts[4:] == ["chat", "completions"]
            ):
                return "chat", parts[3]
            return None
        if path in ("/v1/chat/completions", "/chat/completions"):
            return "chat", None
        if path in ("/v1/completions", "/completions"):
            return "text", None
        if path in ("/v1/models", "/models"):
            return "models", None
        if path == "/api/tags" and self.name == "ollama":
            return "tags", None
        return None

    def refuse(
        self,
        headers: Any,
        raw_path: str,
        model: str,
        body: dict[str, Any] | None,
        deployment: str | None = None,
    ) -> Refusal | None:
        """Why this server would not serve the request (auth, api-version, model, tools), else None."""
        denied = self._auth(headers, raw_path)
        if denied is not None or body is None:
            return denied
        if self.api_version:
            if deployment != model:
                return Refusal(
                    404,
                    {
                        "error": {
                            "code": "DeploymentNotFound",
                            "message": (
                                "The API deployment for this resource does not exist. If you created the "
                                "deployment within the last 5 minutes, please wait a moment and try again."
                            ),
                        }
                    },
                )
        elif not self.any_model and body.get("model") != model:
            return self._unknown_model(str(body.get("model")))
        if body.get("tools") and not self.tools:
            return self._no_tools()
        return None

    def _auth(self, headers: Any, raw_path: str) -> Refusal | None:
        if self.api_version:
            query = parse_qs(urlsplit(raw_path).query)
            if query.get("api-version") != [self.api_version]:
                return Refusal(404, {"error": {"code": "404", "message": "Resource not found"}})
            if headers.get("api-key") != self.key:
                return Refusal(
                    401,
                    {
                        "error": {
                            "code": "401",
                            "message": (
                                "Access denied due to invalid subscription key or wrong API endpoint. "
                                "Make sure to provide a valid key for an active subscription and use a "
                                "correct regional API endpoint for your resource."
                            ),
                        }
                    },
                )
            return None
        if self.key is not None and headers.get("Authorization") != f"Bearer {self.key}":
            if self.name == "vllm":
                return Refusal(401, {"error": "Unauthorized"})
            return Refusal(
                401,
                {
                    "error": {
                        "message": "Incorrect API key provided.",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_api_key",
                    }
                },
            )
        return None

    def _unknown_model(self, name: str) -> Refusal:
        if self.name == "ollama":
            return Refusal(
                404,
                {
                    "error": {
                        "message": f'model "{name}" not found, try pulling it first',
                        "type": "api_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
        if self.name == "vllm":
            return Refusal(
                404,
                {
                    "object": "error",
                    "message": f"The model `{name}` does not exist.",
                    "type": "NotFoundError",
                    "param": None,
                    "code": 404,
                },
            )
        return Refusal(
            404,
            {
                "error": {
                    "message": f"The model `{name}` does not exist or you do not have access to it.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "model_not_found",
                }
            },
        )

    def _no_tools(self) -> Refusal:
        if self.name == "vllm":
            return Refusal(
                400,
                {
                    "object": "error",
                    "message": '"auto" tool choice requires '
                    "--enable-auto-tool-choice and --tool-call-parser to be set",
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                },
            )
        return Refusal(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "tools param requires --jinja flag",
                    "type": "invalid_request_error",
                }
            },
        )

    def listing(self, kind: str, model: str) -> dict[str, Any]:
        """The model list as this server shapes it (`tags`: Ollama's /api/tags)."""
        if kind == "tags":
            return {
                "models": [
                    {
                        "name": model,
                        "model": model,
                        "modified_at": "2025-01-01T00:00:00Z",
                        "size": 4683087332,
                        "digest": "a" * 64,
                        "details": {
                            "format": "gguf",
                            "family": "qwen2",
                            "parameter_size": "7.6B",
                            "quantization_level": "Q4_K_M",
                        },
                    }
                ]
            }
        entry: dict[str, Any] = {
            "id": model,
            "object": "model",
            "created": 1700000000,
            "owned_by": self.owned_by,
        }
        if self.name == "vllm":
            entry.update(root=model, parent=None, max_model_len=32768, permission=[])
        if self.name == "azure":
            entry = {
                "id": "gpt-4o-2024-08-06",
                "object": "model",
                "status": "succeeded",
                "capabilities": {"chat_completion": True, "completion": False},
            }
        listing: dict[str, Any] = {"object": "list", "data": [entry]}
        if self.name == "llamacpp":
            listing["models"] = [
                {"name": model, "model": model, "type": "model", "capabilities": ["completion"]}
            ]
        return listing

    def include_usage(self, body: dict[str, Any]) -> str:
        """Where a stream's usage goes: "chunk" (a usage chunk), "last" (in the finish chunk) or ""."""
        if self.stream_usage == "always":
            return "last"
        if self.stream_usage == "asked" and (body.get("stream_options") or {}).get("include_usage"):
            return "chunk"
        return ""


FLAVOURS: dict[str, Flavour] = {
    flavour.name: flavour
    for flavour in (
        Flavour("generic"),
        Flavour("openai", key=OPENAI_KEY, any_model=False, owned_by="openai"),
        Flavour("azure", key=AZURE_KEY, api_version=AZURE_API_VERSION, any_model=False),
        Flavour("ollama", any_model=False, owned_by="library"),
        Flavour("lmstudio", stream_usage="never", any_model=False, owned_by="organization_owner"),
        Flavour("vllm", key=VLLM_KEY, tools=False, any_model=False, owned_by="vllm"),
        Flavour("llamacpp", tools=False, stream_usage="always", owned_by="llamacpp"),
    )
}
