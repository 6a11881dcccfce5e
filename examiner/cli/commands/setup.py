"""`examiner doctor`, `examiner models`, `examiner chat` and `examiner serve-local`: set-up and checks."""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from typing import Callable

from typing import TYPE_CHECKING

from examiner.cli.flags import add_command, add_config_flags, fitted_table, output_dir, print_table, settings_from_args
from examiner.core.errors import ConfigError, UserError
from examiner.core.plain_text import visible_controls

if TYPE_CHECKING:
    from rich.table import Table

    from examiner.core.config import EndpointSpec, Settings


ROLE_NAMES = ("examiner", "candidate", "judge", "reviser", "geval", "pairwise", "evaluator", "debater", "meta_judge")
"""`--as-role` choices: examiner.core.config.ROLES, spelled out so that building the parser does not load the
configuration's validation library (tests/cli/test_cli_help.py holds them equal)."""


def register(sub: argparse._SubParsersAction) -> None:
    doctor = add_command(
        sub, "doctor", "check the embedding model, tokenizer, local model, FAISS and endpoints",
        "Check that everything examiner needs works on this machine, offline: the tokenizer, the embedding\n"
        "model, FAISS (GPU or CPU), the embedded local model, and one short call to each configured\n"
        "endpoint a role uses. Prints one line per check; exits 1 if any check failed.",
        "examiner doctor --skip-local\nexaminer doctor --config examples/config.yaml")
    add_config_flags(doctor)
    doctor.add_argument("--skip-local", action="store_true", help="do not load the embedded local model")
    doctor.set_defaults(func=run_doctor)

    models = add_command(
        sub, "models", "show the endpoint each role resolves to",
        "Show which endpoint each role (examiner, candidate, judge, ...) resolves to after the configuration\n"
        "file, the environment and --role, and each endpoint's provider, URL, model, prices, concurrency\n"
        "and API-key variable (whether it is set; never its value).",
        "examiner models --config examples/config.yaml --role judge=gpt4o")
    add_config_flags(models)
    models.set_defaults(func=run_models)

    chat = add_command(
        sub, "chat", "send one prompt through the gateway and print the reply with its cost",
        "Send one user message to the endpoint of a role, through the same gateway the exam uses\n"
        "(retries, cache, ledger), and print the reply with its tokens, dollars and latency.",
        "examiner chat 'What is a knowledge unit?' --as-role judge --config examples/config.yaml")
    add_config_flags(chat)
    chat.add_argument("prompt", help="the user message")
    chat.add_argument("--as-role", default="candidate", choices=ROLE_NAMES, help="which role's endpoint answers")
    chat.add_argument("--max-tokens", type=int, default=128, help="reply length limit (default: %(default)s)")
    chat.add_argument("--run-dir", help="write the ledger and cache here")
    chat.set_defaults(func=run_chat)

    serve = add_command(
        sub, "serve-local", "serve the embedded local model as an OpenAI-compatible server",
        "Serve the embedded local model (SmolLM2-135M-Instruct, from an installed package) over HTTP with\n"
        "the OpenAI chat-completions API, until interrupted (Ctrl-C). Any OpenAI-compatible client can use\n"
        "it; in examiner's configuration, an endpoint with base_url http://HOST:PORT/v1 reaches it. Every\n"
        "request needs the API key ($EXAMINER_SERVE_KEY, else one generated and printed at start; the\n"
        "endpoint names it with api_key_env: EXAMINER_SERVE_KEY); requests from web pages are refused.",
        "examiner serve-local --port 8077   # then base_url: http://127.0.0.1:8077/v1\n"
        "examiner serve-local --model runs/judge/merged --port 8078   # a model `examiner finetune` wrote\n"
        "examiner serve-local --model runs/distil/encoder --port 8079  # `examiner distil --student encoder`'s judge")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    serve.add_argument("--port", type=int, default=8077, help="port to listen on (default: %(default)s)")
    serve.add_argument("--model", metavar="DIR",
                       help="serve this transformers model folder instead (e.g. `examiner finetune`'s merged/), "
                            "or an encoder judge folder (`examiner distil --student encoder`: pairwise prompts, or the "
                            "exam judge's prompt for a judge taught exam units)")
    serve.set_defaults(func=run_serve_local)


def _check(name: str, probe: Callable[[], str]) -> tuple[str, bool, str]:
    started = time.perf_counter()
    try:
        detail = probe()
        ok = True
    except UserError as exc:
        detail, ok = str(exc), False
    except Exception as exc:  # noqa: BLE001 - doctor reports every failure as a line
        detail, ok = f"{type(exc).__name__}: {exc}".splitlines()[0][:200], False
    from examiner.core.redact import redact_text

    return name, ok, redact_text(f"{detail} ({time.perf_counter() - started:.1f}s)")


def _embedding_probe() -> str:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from examiner.corpus.vectors import Embedder

    vectors = Embedder().embed(["a knowledge unit", "another knowledge unit"])
    return f"all-MiniLM-L6-v2 loaded offline, dim {vectors.shape[1]}"


def _tokenizer_probe() -> str:
    from examiner.core.tokens import count_tokens, encoding

    return f"{encoding().name}: 'hello world' = {count_tokens('hello world')} tokens"


def _local_probe() -> str:
    from examiner.llm.local import doctor_check

    ok, line = doctor_check()
    if not ok:
        raise UserError(line)
    return line


GPU_KMEANS_PROBE = """
import numpy as np, faiss
assert faiss.get_num_gpus() > 0, "FAISS sees no GPU in a fresh process"
x = np.random.default_rng(0).standard_normal((2000, 32)).astype(np.float32)
km = faiss.Kmeans(32, 8, niter=2, gpu=True, verbose=False)
km.train(x)
print("ok")
"""
"""A tiny k-means on the GPU, run in a child process: a FAISS build without kernels for the card (e.g.
faiss-gpu-cu12 1.14 on an H100: CUDA error 209, 'no kernel image') aborts the process that calls it."""


def gpu_kmeans_failure(timeout_s: float = 120) -> str | None:
    """None when a FAISS GPU k-means runs in a child process, else the last line it printed."""
    try:
        child = subprocess.run([sys.executable, "-c", GPU_KMEANS_PROBE], capture_output=True, text=True,
                               timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"no answer in {timeout_s:.0f} s"
    if child.returncode == 0 and child.stdout.strip().endswith("ok"):
        return None
    lines = [line for line in (child.stderr + child.stdout).splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"exit status {child.returncode}"


def _faiss_probe() -> str:
    import faiss

    gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    if not gpus:
        return f"faiss {faiss.__version__}: CPU"
    failure = gpu_kmeans_failure()
    if failure:
        raise UserError(f"faiss {faiss.__version__} sees {gpus} GPU(s) but a GPU k-means failed in a child "
                        f"process ({failure}); faiss-gpu-cu12 1.14 has no kernels for Hopper cards (H100, "
                        "H200): pip install 'faiss-gpu>=1.15'")
    return f"faiss {faiss.__version__}: GPU x{gpus}, a GPU k-means ran"


def _answers_models(settings: Settings, name: str) -> bool:
    """Whether the endpoint's server answers GET /models with any HTTP reply (it is up and listening)."""
    import httpx

    spec = settings.endpoints[name]
    try:
        httpx.get(f"{str(spec.base_url).rstrip('/')}/models", timeout=min(spec.timeout_s, 10.0),
                  headers={"Authorization": f"Bearer {spec.api_key()}"})
    except Exception:  # noqa: BLE001 - any failure means "not answering"; the chat probe says why
        return False
    return True


def _endpoint_probe(settings: Settings, name: str) -> Callable[[], str]:
    def probe() -> str:
        from examiner.llm import CallContext, Gateway, GenerationConfig, ModelCallError
        from examiner.llm.llama_server import DROPPED_ON_COMPLETION

        async def ping() -> str:
            async with Gateway(settings, cache=False) as gateway:
                result = await gateway.chat(
                    "candidate", [{"role": "user", "content": "Reply with the word ok."}],
                    GenerationConfig(max_tokens=4), CallContext(stage="doctor"), endpoint=name,
                )
                return f"replied {result.text.strip()[:20]!r} in {result.latency_s:.2f}s"

        up = _answers_models(settings, name)
        try:
            return asyncio.run(ping())
        except ModelCallError as exc:
            attempts = getattr(exc, "attempts", [])
            if up and attempts and all(a.status == "connection" for a in attempts):
                raise UserError(f"{exc}; {DROPPED_ON_COMPLETION}") from exc
            raise

    return probe


def run_doctor(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    checks = [
        _check("tokenizer (offline)", _tokenizer_probe),
        _check("embedding model (offline)", _embedding_probe),
        _check("faiss", _faiss_probe),
    ]
    if not args.skip_local:
        checks.append(_check("local model (SmolLM2-135M)", _local_probe))
    used = sorted(set(settings.roles.values()))
    for name in used:
        if settings.endpoints[name].provider == "openai":
            checks.append(_check(f"endpoint {name}", _endpoint_probe(settings, name)))
    table = fitted_table("examiner doctor", ("check", "status", "detail"), numeric=("status",))
    from rich.text import Text  # styled by examiner: the console reads no markup in strings

    for name, ok, detail in checks:
        table.add_row(name, Text("ok", style="green") if ok else Text("FAIL", style="red"), detail)
    print_table(table)
    failed = [name for name, ok, _ in checks if not ok]
    if failed:
        print(f"examiner: error: {len(failed)} check(s) failed: {', '.join(failed)} (see the table above)",
              file=sys.stderr)
        return 1
    return 0


def run_models(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    for table in model_tables(settings):
        print_table(table)
    return 0


def model_tables(settings: Settings) -> list[Table]:
    """Roles -> endpoint and model, then each endpoint in use: two tables that fit 80 columns."""
    from examiner.core.config import ROLES
    from examiner.core.redact import redact_url

    roles = fitted_table("roles and their endpoints", ("role", "endpoint", "model"))
    used: dict[str, EndpointSpec] = {}
    for role in ROLES:
        name, spec = settings.endpoint_for(role)
        roles.add_row(role, name, spec.model)
        used.setdefault(name, spec)
    numbers = ("$/1M in", "$/1M out", "concurrency")
    endpoints = fitted_table("endpoints", ("endpoint", "provider", "base_url", *numbers, "api key"), numeric=numbers)
    for name, spec in used.items():
        if spec.api_key_env:
            key = f"{spec.api_key_env} ({'set' if os.environ.get(spec.api_key_env) else 'NOT SET'})"
        else:
            key = "-"
        replicas = f" (+{len(spec.replicas)} replicas)" if spec.replicas else ""
        endpoints.add_row(name, spec.provider, (redact_url(spec.base_url) or "(managed)") + replicas,
                          f"{spec.price_input_per_1m:g}", f"{spec.price_output_per_1m:g}",
                          str(spec.max_concurrency), key)
    return [roles, endpoints]


def run_chat(args: argparse.Namespace) -> int:
    from examiner.llm import CallContext, Gateway, GenerationConfig, ModelCallError

    settings = settings_from_args(args)
    name, spec = settings.endpoint_for(args.as_role)
    if spec.api_key_env:
        spec.api_key()
    run_dir = output_dir(args.run_dir, "--run-dir") if args.run_dir else None

    async def go() -> None:
        async with Gateway(settings, run_dir=run_dir) as gateway:
            result = await gateway.chat(
                args.as_role, [{"role": "user", "content": args.prompt}], GenerationConfig(max_tokens=args.max_tokens),
                CallContext(stage="chat"),
            )
            print(f"{name} ({spec.model}) replied:")
            print(visible_controls(result.text.strip()) or "(empty reply)")  # the model's text: no sequence
            print(
                f"{result.prompt_tokens} prompt + {result.completion_tokens} completion tokens "
                f"({result.usage_source}), ${result.cost_usd:.6f}, {result.latency_s:.2f}s, "
                f"cache hit: {result.cache_hit}"
            )

    try:
        asyncio.run(go())
    except ModelCallError as exc:
        raise UserError(f"endpoint unreachable or failing: {exc}") from None
    return 0


def run_serve_local(args: argparse.Namespace) -> int:
    from examiner.llm.local import serve_local

    check_listen_address(args.host, args.port)
    if args.model:
        from examiner.api.finetune import serve_model

        serve_model(args.model, args.host, args.port)
        return 0
    serve_local(args.host, args.port)
    return 0


def check_listen_address(host: str, port: int) -> None:
    """One line (exit 2) for a --port outside 0..65535 or a --host that names no address, before a server
    starts (they failed inside it: a traceback in its log, or an internal error)."""
    import socket

    if not 0 <= port <= 65535:
        raise UserError(f"--port must be 0..65535, got {port}")
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UserError(f"--host {host}: not an address this machine can listen on ({exc})") from None


__all__ = ["register", "ConfigError", "check_listen_address"]
