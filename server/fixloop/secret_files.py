"""The secrets policy: which files and folders hold credentials; the resolver refuses them to every tool.

One list, written down in docs/security.md ("Secrets"). Names are matched without regard
to case, on the file's own name and on every folder above it, and on where a link leads as well as on
the link's own name.
"""

from __future__ import annotations

import fnmatch
from pathlib import PurePosixPath

# Folders whose whole contents are off limits: version-control internals and credential stores.
PROTECTED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn",
        ".ssh", ".gnupg", ".password-store",
        ".aws", ".azure", ".gcloud", ".docker", ".kube",
    }
)  # fmt: skip
# A nested folder pair that is a credential store only together (`~/.config/gcloud`).
PROTECTED_PAIRS = frozenset({(".config", "gcloud")})

# File names (lower-cased, fnmatch) that hold secrets: never read, written, listed, searched or run.
SECRET_PATTERNS = (
    # environment files: .env, .envrc, .env.local, .env_prod, prod.env
    ".env*", "*.env",
    # login and token files
    ".netrc", "_netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".htpasswd", ".vault-token",
    # keys and keystores
    "*.pem", "*.key", "*.ppk", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.gpg",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    # cloud credentials
    "credentials*", "*credentials.json", "service-account*.json", "*service-account*.json",
    "client_secret*.json", "*.tfvars", "*.tfstate",
    # named secrets
    "secrets.*", ".secrets*",
)  # fmt: skip
# Python source is code, not a credential store, even when named like one (credentials.py, secrets.py).
SOURCE_SUFFIXES = (".py", ".pyi")


def is_secret_name(name: str) -> bool:
    """Whether a file name (any case) is a secret under the policy: .env*, keys, credentials..."""
    lowered = name.lower()
    if lowered.endswith(SOURCE_SUFFIXES) and not lowered.startswith(".env"):
        return False
    return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in SECRET_PATTERNS)


def protected_part(rel: str) -> str | None:
    """The folder of `rel` ('/'-separated, relative) that puts it off limits, or None."""
    parts = [part.lower() for part in PurePosixPath(rel).parts]
    for index, part in enumerate(parts):
        if part in PROTECTED_DIRS:
            return PurePosixPath(rel).parts[index]
        if index and (parts[index - 1], part) in PROTECTED_PAIRS:
            return "/".join(PurePosixPath(rel).parts[index - 1 : index + 1])
    return None


def refusal(rel: str) -> str | None:
    """Why `rel` is off limits under the policy (a short phrase), or None when it may be used."""
    if not rel or rel == ".":
        return None
    folder = protected_part(rel)
    if folder is not None:
        inside = PurePosixPath(rel).name.lower() != folder.lower().rsplit("/", 1)[-1]
        return f"{'inside ' if inside else ''}{folder}{'/' if inside else ''}, which is off limits"
    if is_secret_name(PurePosixPath(rel).name):
        return "a secret or credential file, which is off limits"
    return None
