"""One secrets policy, applied by the resolver: secret names and links to secrets are refused to every tool,
and listing and searching neither show them nor name them."""

from __future__ import annotations

import os

import pytest

from fixloop.errors import PathError
from fixloop.secret_files import is_secret_name, refusal
from fixloop.tools import ListFilesTool, ReadFileTool, SearchTool, Workspace, WriteFileTool

SECRET = [
    ".env",
    ".envrc",
    ".env_prod",
    ".env.local",
    "prod.env",
    ".ENV",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    "server.pem",
    "tls.key",
    "key.ppk",
    "cert.p12",
    "a.pfx",
    "store.jks",
    "release.keystore",
    "db.kdbx",
    "id_rsa",
    "id_rsa.pub",
    "id_ed25519",
    "id_ecdsa",
    "credentials",
    "credentials.ini",
    "gcp-credentials.json",
    "service-account.json",
    "service-account-prod.json",
    "my-service-account-key.json",
    "client_secret_123.json",
    "prod.tfvars",
    "terraform.tfstate",
    "secrets.yaml",
    ".secrets.toml",
    ".aws/credentials",
    ".aws/config",
    ".azure/accessTokens.json",
    ".gcloud/x.db",
    ".config/gcloud/credentials.db",
    ".docker/config.json",
    ".kube/config",
    ".ssh/known_hosts",
    ".gnupg/pubring.kbx",
    ".git/config",
    "sub/.git/HEAD",
]
ALLOWED = [
    "calc/core.py",
    "credentials.py",
    "secrets.py",
    "app/credentials_test.py",
    "envtools.py",
    "environment.yml",
    "docs/keys.md",
    "id_utils.py",
    "config/settings.toml",
    "README.md",
    "tests/test_env.py",
    ".gitignore",
    ".github/workflows/ci.yml",
    "pyproject.toml",
    "key_value.py",
]


@pytest.mark.parametrize("rel", SECRET)
def test_secret_paths_are_refused(rel):
    assert refusal(rel) is not None


@pytest.mark.parametrize("rel", ALLOWED)
def test_project_files_are_allowed(rel):
    assert refusal(rel) is None
    assert not is_secret_name(rel.rsplit("/", 1)[-1])


@pytest.fixture
def project(tmp_path):
    (tmp_path / "app.py").write_text("TOKEN_NAME = 'x'\n")
    (tmp_path / ".envrc").write_text("export TOKEN=sekrit-envrc\n")
    (tmp_path / ".pgpass").write_text("h:1:*:u:sekrit-pgpass\n")
    (tmp_path / "service-account.json").write_text('{"k": "sekrit-sa"}\n')
    os.symlink(".envrc", tmp_path / "notes.txt")  # an innocent name for a secret
    os.symlink(".pgpass", tmp_path / "data.md")
    return tmp_path


async def test_reading_a_link_to_a_secret_is_refused(project):
    with pytest.raises(PathError, match="secret"):
        await ReadFileTool(Workspace(project)).run(path="notes.txt")


async def test_listing_names_no_secret_and_no_link_to_one(project):
    listed = (await ListFilesTool(Workspace(project)).run()).text.splitlines()
    assert listed == ["app.py"]


async def test_searching_never_reads_a_secret_or_a_link_to_one(project):
    result = await SearchTool(Workspace(project)).run(pattern="sekrit|TOKEN")
    assert "sekrit" not in result.text
    assert result.text.startswith("app.py:1:")


async def test_writing_a_secret_named_file_is_refused(project):
    with pytest.raises(PathError, match="secret"):
        await WriteFileTool(Workspace(project)).run(path="config/.env.production", content="X=1\n")


@pytest.mark.parametrize("path", ["a" * 300 + ".py", "src/" + "x" * 2000, "/".join(["d"] * 200) + "/f.py"])
def test_over_long_and_too_deep_paths_are_clear_errors(tmp_path, path):
    with pytest.raises(PathError, match=r"too long|deep|longer than"):
        Workspace(tmp_path).resolve(path)


def test_a_nul_byte_is_a_clear_error(tmp_path):
    with pytest.raises(PathError, match="NUL"):
        Workspace(tmp_path).resolve("app.py\x00.txt")
