"""`python -m examiner.llm.llama_server ARGS`: llama-cpp-python's stock OpenAI server with weight repacking off.

Why: llama-cpp-python 0.3.36 built natively on a CPU with AMX repacks Q4 weights into llama.cpp's extra CPU
buffer types, and its server then dies (SIGSEGV) on the first completion of more than one prompt token.
examiner's own launcher (examiner.llm.local) turns repacking off; a user serving their own GGUF model with
`python -m llama_cpp.server` has no flag for it. This module applies the same fix and hands every argument to
the stock server unchanged, so `python -m examiner.llm.llama_server --model M.gguf --port 8000` replaces
`python -m llama_cpp.server --model M.gguf --port 8000`. llama.cpp's own `llama-server` has the flag:
`--no-repack`. DROPPED_ON_COMPLETION is the hint `examiner doctor` prints when a server that answers dies on
its first completion.
"""

from __future__ import annotations

import runpy
import sys

COMMAND = "python -m examiner.llm.llama_server --model MODEL.gguf --host 127.0.0.1 --port 8000"
"""The workaround's command line, as the docs and the doctor's hint give it."""
DROPPED_ON_COMPLETION = (
    "the server answered but dropped the connection on a completion: a llama-cpp-python server that crashes on "
    f"its first completion (weight repacking on this CPU) runs with it off as `{COMMAND}` (llama.cpp's "
    "llama-server: --no-repack); docs/CONFIGURATION.md, 'Your own llama.cpp server'")
"""One-line hint for an endpoint that answers /models but whose completions lose the connection."""


def no_repack() -> bool:
    """Make every model llama-cpp-python loads from now on keep its weights in the plain CPU buffers
    (`use_extra_bufts = False`); False when this llama-cpp-python has no such setting (nothing to turn off)."""
    import llama_cpp.llama_cpp as bindings

    defaults = bindings.llama_model_default_params
    if getattr(defaults, "_examiner_no_repack", False):
        return True
    if not hasattr(defaults(), "use_extra_bufts"):
        return False

    def without_repacking() -> object:
        params = defaults()
        params.use_extra_bufts = False
        return params

    without_repacking._examiner_no_repack = True  # type: ignore[attr-defined]
    bindings.llama_model_default_params = without_repacking
    return True


def main(argv: list[str] | None = None) -> None:
    """Turn repacking off, then run `llama_cpp.server` with `argv` (default: this process's arguments)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not no_repack():
        print("examiner: this llama-cpp-python has no weight repacking to turn off; serving as is", file=sys.stderr)
    sys.argv = ["llama_cpp.server", *args]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()

__all__ = ["COMMAND", "DROPPED_ON_COMPLETION", "main", "no_repack"]
