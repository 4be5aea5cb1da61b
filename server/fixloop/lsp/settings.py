"""Settings handling: initializationOptions + workspace/configuration layered over the engine's sources.

Settings belong to a workspace folder: the client answers `workspace/configuration` once per folder (its
`scopeUri`), and a folder's answer wins over settings pushed for all. The `python` of initializationOptions
was picked for one folder, so a folder that answered for itself does not inherit it.
"""

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
        self.client_config: Any = None  # pushed with didChangeConfiguration, or asked without a folder
        self.folder_config: dict[Path, Any] = {}  # each workspace folder's workspace/configuration answer
        self.asked: set[Path] = set()  # folders whose configuration was asked for (answered or not)
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
                async with asyncio.timeout(CONFIGURATION_WAIT):
                    await asyncio.shield(self._loaded)

    def resolve(self, root: Path, project: Path | None = None) -> tuple[Settings, list[str]]:
        """Settings for the workspace folder `root` (and the test's `project` below it, whose
        [tool.fixloop] is read too) and the errors not reported before (each bad setting is shown once)."""
        init_options, client_config = self.init_options, self.client_config
        if root in self.folder_config:
            client_config = self.folder_config[root]
            if isinstance(init_options, Mapping) and "python" in init_options:
                init_options = {key: value for key, value in init_options.items() if key != "python"}
        sources = SettingsSources(root, dict(os.environ), init_options, client_config, project=project)
        settings, errors = sources.resolve()
        fresh = [error for error in errors if error not in self._reported]
        self._reported.update(fresh)
        return settings, fresh
