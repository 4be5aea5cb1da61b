"""Settings handling: initializationOptions + workspace/configuration layered over the engine's sources."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.config import Settings, SettingsSources

SECTION = "fixloop"
CONFIGURATION_WAIT = 5.0  # seconds a command waits for the first workspace/configuration answer


def unwrap(values: Any) -> Any:
    """Accept the settings object itself or one nested under "fixloop" (VS Code / Neovim `settings`).

    Anything else passes through: `Settings.merge` names a value that is not an object.
    """
    if isinstance(values, Mapping) and isinstance(values.get(SECTION), Mapping):
        return values[SECTION]
    return values


class SettingsState:
    """The client's settings as last sent, and which errors the user has already been told about."""

    def __init__(self) -> None:
        self.init_options: Any = None
        self.client_config: Any = None
        self._reported: set[str] = set()
        self._loaded: asyncio.Future[None] | None = None

    def expect_client_settings(self) -> None:
        """Called at initialize: commands wait (briefly) for the first workspace/configuration answer."""
        self._loaded = asyncio.get_running_loop().create_future()

    def client_settings_loaded(self) -> None:
        if self._loaded is not None and not self._loaded.done():
            self._loaded.set_result(None)

    async def ready(self) -> None:
        """Wait until the client's settings are in, so a command sent right after startup uses them."""
        if self._loaded is not None and not self._loaded.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._loaded), CONFIGURATION_WAIT)

    def resolve(self, root: Path) -> tuple[Settings, list[str]]:
        """Settings for `root` and the errors not reported before (each bad setting is shown once)."""
        sources = SettingsSources(root, dict(os.environ), self.init_options, self.client_config)
        settings, errors = sources.resolve()
        fresh = [error for error in errors if error not in self._reported]
        self._reported.update(fresh)
        return settings, fresh
