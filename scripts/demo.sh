#!/usr/bin/env bash
# The main job on a fresh machine with no API key: installs fixloop with the managed local model
# (venv, llama.cpp built portably, Qwen2.5-Coder-1.5B verified by SHA-256), then `fixloop demo` fixes
# the bundled demo project's failing test through a real LSP session, streaming the model's thoughts.
#   usage: scripts/demo.sh [MODEL]      (MODEL: see `fixloop model list`; default the 1.5B coder)
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/install-local.sh --demo "$@"
