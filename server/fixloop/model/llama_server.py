"""How the managed model is served: llama.cpp's own `llama-server` (parallel slots, one KV cache shared by
them) where it was built, else llama-cpp-python's server; its slots, context and
command line.

`llama-server` is looked up in $FIXLOOP_LLAMA_SERVER (a path; `none` forces llama-cpp-python's server),
next to the running interpreter (a venv's `bin/`, where scripts/install-local.sh puts it), then in the
user data dir's `bin/`.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from fixloop.model.prompt_store import prompts_dir

LLAMA_SERVER_ENV = "FIXLOOP_LLAMA_SERVER"
# `on`: n-gram speculative decoding. Off by default: on a sampling round's prompt (2 cores) it took a batch of
# 5 replies from 10.9 s to 21.1 s and one reply from 3.7 s to 5.1 s (benchmarks/speculation.py: drafts are
# verified in the batch, few accepted); this llama-server cannot turn it off for one request.
SPECULATION_ENV = "FIXLOOP_LLAMA_SPECULATION"
LLAMA_SERVER = "llama-server"
LLAMA_CPP_PYTHON = "llama-cpp-python"
NOT_BUILT = "none"  # $FIXLOOP_LLAMA_SERVER value that forces llama-cpp-python's server

MAX_SLOTS = 8
REPLY_TOKENS = 2048  # the KV room each slot's reply gets in a sampling round (a whole function, and spare)
LONGEST_REPLY = 4096  # a single request's `max_tokens` (model/client.py)
PREFIX_TOKENS = 2048  # the system prompt, tool schemas and task around the conversation
CHARS_PER_TOKEN = 3  # Python source with Qwen's tokenizer: 3-4; the lower bound sizes the cache safely
# K and V of one token for Qwen2.5-Coder-1.5B (28 layers x 2 x 256 values), in f16 (2 bytes) and in q8_0
# (34/32 bytes); the 0.5B model needs less, so these bound the catalog's models.
KV_BYTES_PER_TOKEN = 28_672
SMALL_KV_BYTES_PER_TOKEN = 15_232
KV_SHARE = 4  # the KV cache may take 1/KV_SHARE of the memory free beside the model
SPECULATION = ("--spec-type", "ngram-simple")


@dataclass(frozen=True)
class Serving:
    """Which server serves the managed model, and with how many slots, threads and tokens of context."""

    kind: str  # LLAMA_SERVER or LLAMA_CPP_PYTHON
    program: tuple[str, ...]  # the executable, or the interpreter and `-m llama_cpp.server`
    threads: int
    context: int  # tokens of KV cache, shared by the slots (llama-server) or the one sequence
    slots: int = 1
    speculative: bool = False
    cache_type: str = "f16"  # KV cache; "q8_0" (flash attention): half the memory, slower on 2 cores
    prompt_dir: Path | None = None  # llama-server's slot files: the last prompt kept between processes

    def args(self, model: Path, alias: str, port: int) -> list[str]:
        """The command line that serves `model` as `alias` on 127.0.0.1:`port`."""
        if self.kind == LLAMA_CPP_PYTHON:
            return [
                *self.program,
                *("--model", str(model), "--model_alias", alias, "--host", "127.0.0.1", "--port", str(port)),
                *("--n_ctx", str(self.context), "--n_threads", str(self.threads)),
                # its default keeps every prompt token's logits (n_ctx x 151,936 floats at worst)
                *("--logits_all", "false"),
            ]
        return [
            *self.program,
            *("--model", str(model), "--alias", alias, "--host", "127.0.0.1", "--port", str(port)),
            *("--ctx-size", str(self.context), "--threads", str(self.threads)),
            # one KV cache for all slots: a prompt read once is shared by the `n` replies drawn from it
            *("--parallel", str(self.slots), "--kv-unified", "--cont-batching"),
            # f16 K and V, no flash attention: on 2 cores a q8_0 cache (which needs flash attention) reads
            # prompts 12-25% slower (benchmarks/batch_ceiling.py); it is used where memory is short
            *self._cache_args(),
            # read the weights, not mmap them: the CPU backend repacks them into a copy of its own, and
            # the mapped file's pages would stay resident beside it (2.0 GiB peak instead of 1.4 GiB)
            *("--load-mode", "none"),
            # reuse cached prefixes; no host-RAM prompt cache (8 GiB by default), no web UI
            *("--cache-reuse", "256", "--cache-ram", "0", "--no-webui", "--jinja"),
            # a request goes to the slot holding the most of its prompt, however little (the default, 10%,
            # sends a 1,800-token task past the slot that holds its 180-token system prompt)
            *("--slot-prompt-similarity", "0.01"),
            *(("--slot-save-path", str(self.prompt_dir)) if self.prompt_dir else ()),
            *(SPECULATION if self.speculative else ()),
        ]

    def environment(self) -> dict[str, str]:
        """What the server's environment adds: llama-server names each slot's prompt in `GET /slots` only
        with LLAMA_SERVER_SLOTS_DEBUG set, and the run's first prompt is kept by finding it there."""
        return {"LLAMA_SERVER_SLOTS_DEBUG": "1"} if self.kind == LLAMA_SERVER and self.prompt_dir else {}

    def _cache_args(self) -> tuple[str, ...]:
        kind = self.cache_type
        attention = "off" if kind == "f16" else "on"  # a quantized V cache needs flash attention
        return ("--flash-attn", attention, "--cache-type-k", kind, "--cache-type-v", kind)

    def describe(self) -> str:
        """One line: which server runs, with its slots and context."""
        if self.kind == LLAMA_CPP_PYTHON:
            return (
                f"llama-cpp-python's server (one request at a time, {self.context:,}-token context; "
                "llama.cpp's llama-server is not built: scripts/install-local.sh builds it)"
            )
        spec = ", n-gram speculation" if self.speculative else ""
        cache = "" if self.cache_type == "f16" else f" ({self.cache_type}: memory is short)"
        return (
            f"llama.cpp's llama-server ({self.program[0]}): {self.slots} slot(s), "
            f"{self.context:,}-token shared context{cache}, {self.threads} thread(s){spec}"
        )


def llama_server_path() -> Path | None:
    """The `llama-server` executable fixloop serves the managed model with, or None (not built, or
    $FIXLOOP_LLAMA_SERVER=none)."""
    chosen = os.environ.get(LLAMA_SERVER_ENV, "").strip()
    if chosen:
        path = Path(chosen).expanduser()
        return path if chosen != NOT_BUILT and _executable(path) else None
    for candidate in (Path(sys.executable).parent / LLAMA_SERVER, data_bin() / LLAMA_SERVER):
        if _executable(candidate):
            return candidate
    return None


def llama_server_problem() -> str | None:
    """Why $FIXLOOP_LLAMA_SERVER cannot be used (one line), or None (unset, `none`, or executable)."""
    chosen = os.environ.get(LLAMA_SERVER_ENV, "").strip()
    if not chosen or chosen == NOT_BUILT or _executable(Path(chosen).expanduser()):
        return None
    return (
        f"${LLAMA_SERVER_ENV} is {chosen}, which is not an executable: point it at llama-server, or unset it"
    )


def data_bin() -> Path:
    """The user data dir's `bin/`, the other place a built `llama-server` is looked for."""
    return Path(platformdirs.user_data_dir("fixloop")) / "bin"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def run_context(context_chars: int) -> int:
    """Tokens one request of a run may fill: the conversation's budget in tokens plus the fixed prefix."""
    return context_chars // CHARS_PER_TOKEN + PREFIX_TOKENS


def plan_serving(
    *,
    samples: int,
    context_chars: int,
    threads: int,
    context: int | None,
    python_program: tuple[str, ...],
    model_size: int,
    memory: int | None = None,
) -> Serving:
    """The serving for a run's needs on this machine. llama-server gets a slot for each candidate a
    sampling round draws at once (`samples - 1`, at most MAX_SLOTS) and one f16 KV cache of the run's
    prompt plus a reply per slot; where that does not fit in its share of memory, a q8_0 cache and as many
    slots as fit in it; `context` (a user's `localContext`) overrides the sizing.
    llama-cpp-python's server gets one slot and the run's prompt plus one reply."""
    prompt = run_context(context_chars)
    binary = llama_server_path()
    if binary is None:
        return Serving(LLAMA_CPP_PYTHON, python_program, threads, context or _rounded(prompt + LONGEST_REPLY))
    wanted = max(1, min(MAX_SLOTS, samples - 1))
    slots, cache = wanted, "f16"
    free = memory if memory is not None else available_memory()
    if free is not None and context is None:
        budget = max(256 << 20, (free - model_size) // KV_SHARE)
        slots = _slots_that_fit(prompt, wanted, budget, KV_BYTES_PER_TOKEN)
        if slots < wanted or shared_context(prompt, slots) * KV_BYTES_PER_TOKEN > budget:
            cache = "q8_0"  # memory is short: a q8_0 cache holds twice the tokens
            slots = _slots_that_fit(prompt, wanted, budget, SMALL_KV_BYTES_PER_TOKEN)
    total = context or shared_context(prompt, slots)
    speculative = os.environ.get(SPECULATION_ENV, "").strip().lower() == "on"
    return Serving(
        LLAMA_SERVER,
        (str(binary),),
        threads,
        total,
        slots,
        speculative=speculative,
        cache_type=cache,
        prompt_dir=prompts_dir(),
    )


def _slots_that_fit(prompt: int, wanted: int, budget: int, bytes_per_token: int) -> int:
    """The most slots, up to `wanted` (at least one), whose shared cache fits in `budget` bytes."""
    slots = wanted
    while slots > 1 and shared_context(prompt, slots) * bytes_per_token > budget:
        slots -= 1
    return slots


def shared_context(prompt: int, slots: int) -> int:
    """The KV cache `slots` slots share: one prompt (read once, copied by reference to every slot drawing
    from it) and a reply per slot; never less than the prompt and the longest single reply."""
    return _rounded(prompt + max(LONGEST_REPLY, slots * REPLY_TOKENS))


def _rounded(tokens: int) -> int:
    return -(-tokens // 1024) * 1024


def available_memory() -> int | None:
    """Bytes of memory available to a new process (Linux MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None
