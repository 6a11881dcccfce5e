"""`examiner probe-memory`: a target's guided versus general completion of a corpus's held-back sentence
halves, beside a negative control (examiner.api.memory_probe), printed as a table (examiner.cli.output.memory_probe)."""

from __future__ import annotations

import argparse
import sys

from examiner.cli.flags import add_command, add_config_flags, job_flags
from examiner.core.errors import EXIT_OUTAGE, BudgetExhausted


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "probe-memory", "does a target recall a corpus word for word? (guided vs general completion)",
        "Cut a few seeded sentences of each document in half and ask the target to finish each first half\n"
        "twice, greedily: told the document and collection it comes from (guided) and not (general). ROUGE-L\n"
        "of each completion against the held-back half; a document's figure is its guided-minus-general gap.\n"
        "The same is done on a negative control the target cannot have read (default: the project's own\n"
        "corpora/examiner-handbook). Reports the mean gap per side with 95 % intervals over documents and the\n"
        "AUROC of the gap, corpus over control, with its interval; never a verdict on one document. Writes\n"
        "memory_probe.json/.md, completions.jsonl, the ledger and a response cache into --out. Two calls per\n"
        "sentence. Where the target gives its full token distributions (the embedded local model, the\n"
        "simulator) each sentence's Min-K%++ too, compared the same way; an OpenAI-compatible endpoint gives\n"
        "top-k log-probabilities only, and the report says Min-K%++ was not computed and why. Exits 75 when\n"
        "every call failed (an outage).",
        "examiner probe-memory corpora/harbor-water --target local --out runs/memory\n"
        "examiner probe-memory my-docs --control written-last-week --sentences 3 --simulate --out runs/memory-sim")
    p.add_argument("corpus", nargs="+", help="files or folders of the corpus probed")
    p.add_argument("--target", metavar="ENDPOINT", help="endpoint probed (default: the candidate role's endpoint)")
    p.add_argument("--control", metavar="PATH", action="append", default=[],
                   help="files or folders the target cannot have read, e.g. written after its cutoff (repeatable; "
                        "default: corpora/examiner-handbook)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the report, completions, ledger, cache")
    p.add_argument("--sentences", type=int, default=5, metavar="K",
                   help="sentences probed per document at most (default %(default)s)")
    p.add_argument("--max-documents", type=int, default=20, metavar="N",
                   help="documents probed per side at most, a seeded sample (default %(default)s; 0: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sentences and documents (default %(default)s)")
    p.add_argument("--min-k-percent", type=float, default=20.0, metavar="K",
                   help="Min-K%%++'s k: the per cent of a sentence's lowest-scoring tokens averaged (default "
                        "%(default)g)")
    p.add_argument("--source-name", metavar="TEXT",
                   help="how the guided prompt names the corpus's collection, e.g. Wikipedia (default: folder name)")
    p.add_argument("--control-name", metavar="TEXT",
                   help="how the guided prompt names the control's collection (default: its folder name)")
    p.add_argument("--no-cache", action="store_true", help="do not reuse cached replies in --out")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    add_config_flags(p)
    p.set_defaults(func=run_probe_memory)


def run_probe_memory(args: argparse.Namespace) -> int:
    from examiner.api.memory_probe import MemoryProbeOptions, probe_memory
    from examiner.cli.output.memory_probe import print_probe

    options = MemoryProbeOptions(**job_flags(args), corpus=tuple(args.corpus), out=args.out, target=args.target,
                                 control=tuple(args.control), sentences=args.sentences,
                                 max_documents=args.max_documents or None, seed=args.seed,
                                 min_k_percent=args.min_k_percent,
                                 source_name=args.source_name, control_name=args.control_name,
                                 no_cache=args.no_cache, quiet=args.quiet)
    result = probe_memory(options, args.config)
    print_probe(result.report, result.paths)
    if result.status == "budget_exhausted":
        raise BudgetExhausted(f"budget reached; {result.report.sentences} sentences written to {args.out}")
    if result.outage is not None:
        print(f"examiner: error: {result.outage}; when the endpoint answers again, run the same command "
              f"(replies already received are cached in {args.out})", file=sys.stderr)
        return EXIT_OUTAGE
    return 0
