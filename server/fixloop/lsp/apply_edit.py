"""Propose the proven change: ask where there is no preview, send workspace/applyEdit, read the answer."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from fixloop.lsp.documents import document_text, open_versions, uri_of
from fixloop.lsp.errors import UnsupportedEdit
from fixloop.lsp.workspace_edit import EditCapabilities, build_workspace_edit, file_uri
from fixloop.result import FixResult

log = logging.getLogger(__name__)

APPLY = "Apply"
DISCARD = "Discard"


@dataclass(frozen=True)
class Proposal:
    """The client's answer to the proposed edit."""

    applied: bool
    failure_reason: str | None = None


def _stale(ls: LanguageServer, root: Path, result: FixResult) -> str | None:
    """The first changed file whose buffer no longer holds the text the fix was made against."""
    for change in result.changes:
        if change.old_text is None:
            continue
        current = document_text(ls, uri_of(root, change.path))
        if current is not None and current != change.old_text:
            return change.path
    return None


async def propose(ls: LanguageServer, root: Path, result: FixResult, label: str) -> Proposal:
    caps = EditCapabilities.of(ls.client_capabilities)
    if not caps.apply_edit:
        return Proposal(False, "this client cannot apply workspace edits; the diff is in the result")
    if (stale := _stale(ls, root, result)) is not None:
        return Proposal(False, f"{stale} changed while fixloop was working; run the fix again")
    try:
        edit = build_workspace_edit(result.changes, file_uri(root), open_versions(ls), caps, label)
    except UnsupportedEdit as error:
        return Proposal(False, error.message)
    if not caps.annotated and not await _confirmed(ls, result, label):
        return Proposal(False, "discarded by the user")
    # Shielded: if this task is cancelled while the client is deciding, pygls 2.1.1 would otherwise
    # report "Error in server: CANCELLED" when the late answer arrives (lsp-facts §0.4).
    try:
        answer = await asyncio.shield(
            ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label))
        )
    except asyncio.CancelledError:
        raise
    except Exception as error:  # e.g. the client has no handler despite declaring applyEdit
        log.warning("workspace/applyEdit failed: %s", error)
        return Proposal(False, f"the client answered workspace/applyEdit with an error: {error}")
    if answer.applied:
        return Proposal(True)
    return Proposal(False, answer.failure_reason or "the client did not apply the edit")


async def _confirmed(ls: LanguageServer, result: FixResult, label: str) -> bool:
    """Ask before applying in clients that show no preview (Neovim applies edits at once)."""
    files = ", ".join(result.files) or "no files"
    try:
        choice = await asyncio.shield(
            ls.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Info,
                    message=f"{label}: {result.summary or 'fix found'}. Apply the change to {files}?",
                    actions=[types.MessageActionItem(title=APPLY), types.MessageActionItem(title=DISCARD)],
                )
            )
        )
    except asyncio.CancelledError:
        raise
    except Exception as error:  # the client cannot ask: fall back to applying, which it can undo
        log.warning("window/showMessageRequest failed (%s); applying without asking", error)
        return True
    return choice is not None and choice.title == APPLY
