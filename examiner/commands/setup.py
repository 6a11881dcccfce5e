"""`examiner doctor`, `examiner models`, `examiner chat` and `examiner serve-local`: set-up and checks."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from typing import Callable

from rich.console import Console
from rich.table import Table

from examiner.commands.common import add_config_flags, output_dir, settings_from_args
from examiner.config import ROLES, Settings
from examiner.errors import ConfigError, UserError

console = Console()


def register(sub: argparse._SubParsersAction) -> None:
    doctor = sub.add_parser("doctor", help="check the embedding model, tokenizer, local model, FAISS and endpoints")
    add_config_flags(doctor)
    doctor.add_argument("--skip-local", action="store_true", help="do not load the embedded local model")
    doctor.set_defaults(func=run_doctor)

    models = sub.add_parser("models", help="show the endpoint each role resolves to")
    add_config_flags(models)
    models.set_defaults(func=run_models)

    chat = sub.add_parser("chat", help="send one prompt through the gateway and print the reply with its cost")
    add_config_flags(chat)
    chat.add_argument("prompt", help="the user message")
    chat.add_argument("--as-role", default="candidate", choices=ROLES, help="which role's endpoint answers")
    chat.add_argument("--max-tokens", type=int, default=128)
    chat.add_argument("--run-dir", help="write the ledger and cache here")
    chat.set_defaults(func=run_chat)

    serve = sub.add_parser("serve-local", help="serve the embedded local model as an OpenAI-compatible server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8077)
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
    return name, ok, f"{detail} ({time.perf_counter() - started:.1f}s)"


def _embedding_probe() -> str:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from examiner.vectors import Embedder

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


def _faiss_probe() -> str:
    import faiss

    gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    return f"faiss {faiss.__version__}: {'GPU x' + str(gpus) if gpus else 'CPU'}"


def _endpoint_probe(settings: Settings, name: str) -> Callable[[], str]:
    def probe() -> str:
        from examiner.llm import CallContext, Gateway, GenerationConfig

        async def ping() -> str:
            async with Gateway(settings, cache=False) as gateway:
                result = await gateway.chat(
                    "candidate", [{"role": "user", "content": "Reply with the word ok."}],
                    GenerationConfig(max_tokens=4), CallContext(stage="doctor"), endpoint=name,
                )
                return f"replied {result.text.strip()[:20]!r} in {result.latency_s:.2f}s"

        return asyncio.run(ping())

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
    table = Table(title="examiner doctor")
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for name, ok, detail in checks:
        table.add_row(name, "[green]ok[/green]" if ok else "[red]FAIL[/red]", detail)
    console.print(table)
    failed = [name for name, ok, _ in checks if not ok]
    if failed:
        print(f"examiner: error: {len(failed)} check(s) failed: {', '.join(failed)} (see the table above)",
              file=sys.stderr)
        return 1
    return 0


def run_models(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    table = Table(title="roles and their endpoints")
    for column in ("role", "endpoint", "provider", "base_url", "model", "$/1M in", "$/1M out", "concurrency", "api key"):
        table.add_column(column)
    for role in ROLES:
        name, spec = settings.endpoint_for(role)
        if spec.api_key_env:
            key = f"{spec.api_key_env} ({'set' if os.environ.get(spec.api_key_env) else 'NOT SET'})"
        else:
            key = "-"
        table.add_row(
            role, name, spec.provider, spec.base_url or "(managed)", spec.model,
            f"{spec.price_input_per_1m:g}", f"{spec.price_output_per_1m:g}", str(spec.max_concurrency), key,
        )
    console.print(table)
    return 0


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
            console.print(f"[bold]{name}[/bold] ({spec.model}) replied:")
            console.print(result.text.strip() or "(empty reply)")
            console.print(
                f"[dim]{result.prompt_tokens} prompt + {result.completion_tokens} completion tokens "
                f"({result.usage_source}), ${result.cost_usd:.6f}, {result.latency_s:.2f}s, "
                f"cache hit: {result.cache_hit}[/dim]"
            )

    try:
        asyncio.run(go())
    except ModelCallError as exc:
        raise UserError(f"endpoint unreachable or failing: {exc}") from None
    return 0


def run_serve_local(args: argparse.Namespace) -> int:
    from examiner.llm.local import serve_local

    serve_local(args.host, args.port)
    return 0


__all__ = ["register", "ConfigError"]
