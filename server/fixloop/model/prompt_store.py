"""The managed llama-server's last prompt, kept on disk between processes: saved from slot 0 when the server
stops and restored into slot 0 when it starts (llama-server's slot files, `--slot-save-path`), so a run that
reads the same task again — the demo, a fix asked for again from the command line, the editor's first fix
after a restart — finds its prompt read. A file that cannot be saved or restored costs nothing but itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from pathlib import Path

import platformdirs

log = logging.getLogger(__name__)

SLOT = 0  # the slot a warm-up and a run's first request land on (the only one holding a prompt then)


def prompts_dir() -> Path:
    """Where the slot files live (the user cache dir's `prompts/`)."""
    return Path(platformdirs.user_cache_dir("fixloop")) / "prompts"


def prompt_file(model_path: Path, context: int) -> str:
    """The slot file's name: one per model file and context size (a file restores only into its like)."""
    return f"{model_path.stem}-ctx{context}.bin"


async def restore_prompt(port: int, filename: str, timeout: float = 10.0) -> bool:  # noqa: ASYNC109
    """Load the last prompt into slot 0 of the server on `port`; whether it was there to load."""
    return await asyncio.to_thread(slot_action, port, "restore", filename, timeout)


def slot_action(port: int, action: str, filename: str, timeout: float) -> bool:
    """POST /slots/0?action=`action` to the server on `port` (blocking, at most `timeout` s); whether it
    answered 200."""
    body = json.dumps({"filename": filename}).encode()
    head = (
        f"POST /slots/{SLOT}?action={action} HTTP/1.0\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
            connection.sendall(head.encode() + body)
            status = connection.makefile("rb").readline().split()
    except OSError as error:
        log.debug("slot %s of %s on port %d failed: %s", action, filename, port, error)
        return False
    done = len(status) >= 2 and status[1] == b"200"
    log.debug("slot %s of %s on port %d: %s", action, filename, port, "done" if done else status)
    return done
