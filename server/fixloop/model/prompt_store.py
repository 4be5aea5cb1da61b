"""The managed llama-server's last prompt, kept on disk between processes: the slot that read a run's first
request, saved as soon as its reply is in (else the fullest slot, when the server stops), and restored into
slot 0 when the next server starts (llama-server's slot files, `--slot-save-path`), so a run that reads the
same task again — the demo, a fix asked for again from the command line, the editor's first fix after a
restart — finds its first prompt read. A file that cannot be saved or restored costs nothing but itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import platformdirs

from fixloop.model.loopback import loopback_request

log = logging.getLogger(__name__)

RESTORED_INTO = 0  # a kept prompt goes into slot 0; the first request finds it there


def prompts_dir() -> Path:
    """Where the slot files live (the user cache dir's `prompts/`)."""
    return Path(platformdirs.user_cache_dir("fixloop")) / "prompts"


def prompt_file(model_path: Path, context: int, cache: str) -> str:
    """The slot file's name: one per model file, context size and KV cache type (a file restores only into
    its like)."""
    return f"{model_path.stem}-ctx{context}-{cache}.bin"


async def restore_prompt(port: int, filename: str, timeout: float = 10.0) -> bool:  # noqa: ASYNC109
    """Load the last prompt into slot 0 of the server on `port`; whether there was one to load."""
    return await asyncio.to_thread(slot_action, port, RESTORED_INTO, "restore", filename, timeout)


def save_prompt(port: int, filename: str, timeout: float, holding: str = "") -> bool:
    """Write a slot's prompt to its file: with `holding`, the shortest prompt that holds it (a run's first:
    its later rounds, and an earlier run's on the same test, hold more; one still ending a reply the client
    cut is saved once it is idle), else the fullest idle one; whether one was written."""

    def held(slot: dict) -> bool:
        return holding in str(slot.get("prompt") or "") if holding else not slot.get("is_processing")

    def tokens(slot: dict) -> int:
        return int(slot.get("n_prompt_tokens") or 0)

    answer = loopback_request(port, "GET /slots", b"", timeout)
    try:
        slots = [slot for slot in json.loads(answer or b"[]") if held(slot) and tokens(slot)]
    except (ValueError, AttributeError, TypeError):
        return False
    chosen = (min if holding else max)(slots, key=tokens, default=None)
    return chosen is not None and slot_action(port, int(chosen["id"]), "save", filename, timeout)


def slot_action(port: int, slot: int, action: str, filename: str, timeout: float) -> bool:
    """POST /slots/`slot`?action=`action` (blocking, at most `timeout` s a step); whether it saved or
    restored a prompt (an empty slot's file holds none)."""
    answer = loopback_request(
        port, f"POST /slots/{slot}?action={action}", json.dumps({"filename": filename}).encode(), timeout
    )
    try:
        tokens = json.loads(answer or b"{}").get("n_saved" if action == "save" else "n_restored", 0)
    except (ValueError, AttributeError):
        tokens = 0
    log.debug("slot %d %s of %s on port %d: %s tokens", slot, action, filename, port, tokens)
    return bool(tokens)
