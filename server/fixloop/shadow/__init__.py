"""The shadow: the scratch copy where the agent edits and tests run; the user's files are never touched.

`workspace` makes the copy and reads back what changed, `lifetime` removes it on every exit path (and after
a crash, at the next start), `patch` turns the changes into a diff and writes them only on --apply.
"""

from fixloop.shadow.lifetime import clean_stale_shadows, shadows_dir
from fixloop.shadow.patch import apply_changes, unified_diff
from fixloop.shadow.workspace import ShadowWorkspace

__all__ = ["ShadowWorkspace", "apply_changes", "clean_stale_shadows", "shadows_dir", "unified_diff"]
