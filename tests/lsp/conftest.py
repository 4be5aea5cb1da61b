"""Fixtures for the language-server tests: a buggy project, and clients started against `fixloop serve`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsp_harness import make_project, server_env, start, stop
from pytest_lsp import LanguageClient


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


@pytest_asyncio.fixture
async def lsp(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[LanguageClient]]]:
    """Factory: `await lsp(root, base_url=..., capabilities=..., ...)` -> an initialized client."""
    clients: list[LanguageClient] = []

    async def make(
        root: Path,
        base_url: str | None = None,
        model: str | None = "scripted",
        env: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> LanguageClient:
        full_env = server_env(tmp_path, base_url, model, **(env or {}))
        client = await start(root, full_env, **kwargs)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await stop(client)
