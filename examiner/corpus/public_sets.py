"""The public validation sets examiner reads by name, pinned: where each file comes from and what its bytes are.

Nothing of these sets ships with the package. `examiner data pull` (examiner/corpus/data_fetch.py) fetches
each file from its repository at the pinned commit, checks its size and sha256 against this registry and
only then puts it in the data folder; the loaders (examiner/corpus/benchmarks.py) read that folder and name
the pull command when a set is not there. docs/DATA.md describes each set.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from examiner.core.errors import UserError

DATA_ENV = "EXAMINER_DATA"
"""The environment variable naming the data folder (a shared or read-only copy, CI's)."""


@dataclass(frozen=True)
class DataFile:
    """One file of a set: where it lies upstream and the bytes it must have in the data folder."""

    local: str
    """Path under the data folder, `/`-separated; its first part is the set's name (`llmbar/Natural.json`)."""
    upstream: str
    """Path inside the repository at the pinned commit."""
    size: int
    """Bytes of the local file."""
    sha256: str
    """Hex sha256 of the local file."""
    upstream_size: int | None = None
    """Bytes of the upstream file when it is converted (`convert`); None: the local file is the upstream one."""
    upstream_sha256: str | None = None
    """Hex sha256 of the upstream file when it is converted."""
    convert: Callable[[bytes], bytes] | None = None
    """Turns the verified upstream bytes into the local file's bytes (SummEval's pickle into JSONL)."""

    @property
    def fetched_size(self) -> int:
        """Bytes of what is downloaded."""
        return self.size if self.upstream_size is None else self.upstream_size

    @property
    def fetched_sha256(self) -> str:
        """sha256 of what is downloaded."""
        return self.sha256 if self.upstream_sha256 is None else self.upstream_sha256


@dataclass(frozen=True)
class PublicSet:
    """A dataset of someone else's, at one commit of its repository."""

    name: str
    """The set's name (`examiner data pull NAME`) and its folder under the data folder."""
    what: str
    """One line: what the set holds."""
    repo: str
    """GitHub `owner/name`."""
    commit: str
    """The pinned commit (40 hex digits)."""
    licence: str
    """The licence line printed when the set is pulled."""
    files: tuple[DataFile, ...]

    @property
    def size(self) -> int:
        """Bytes of the set in the data folder."""
        return sum(f.size for f in self.files)


def _summeval_jsonl(data: bytes) -> bytes:
    from examiner.corpus.summeval_source import summeval_jsonl

    return summeval_jsonl(data)


_LLMBAR = "900616bff90b6c6c8e1681f7d079250637c55992"
_FASTCHAT = "0e6d3e4beaab66f4d3f93db72541a4abab8af28d"
_PUBMEDQA = "1cbae8e92f72f20c8d3747cbb3bf5bc53554d997"
_PYTORCH_EXAMPLES = "77f55b912142e11fcfdf5b530231fb9c52f181e8"
_LEGALBENCH = "ce482446b8eac4403b6db2c17223af4514bb24e3"
_BARTSCORE = "248f511cb34ae3753fc81f7d7a945de5bfe33458"

PUBLIC_SETS: tuple[PublicSet, ...] = (
    PublicSet(
        "llmbar", "LLMBar: instruction, two outputs, the better one's label; Natural, 4 adversarial and 3 processed "
                  "sets", "princeton-nlp/LLMBar", _LLMBAR, "MIT (llmbar/LICENSE)",
        (DataFile("llmbar/Natural.json", "Dataset/LLMBar/Natural/dataset.json", 91_269,
                  "f7127b7aa78104cb8e03a2b1b3ac0077e95b125714dd441a8ee63666145a3375"),
         DataFile("llmbar/Adversarial_Neighbor.json", "Dataset/LLMBar/Adversarial/Neighbor/dataset.json", 131_988,
                  "6712c7eda6342602e0bc7c06c282fa95e2110d4e741a284026a62d937f9780a0"),
         DataFile("llmbar/Adversarial_GPTInst.json", "Dataset/LLMBar/Adversarial/GPTInst/dataset.json", 211_768,
                  "1002425f73c2cf54b6e6de99bce3f6c60fa2a17d13194772e37d7481c1351d42"),
         DataFile("llmbar/Adversarial_GPTOut.json", "Dataset/LLMBar/Adversarial/GPTOut/dataset.json", 32_640,
                  "1ff56e520d7607750a9866a3be0f5b850392ca4477a1f69d80f32bd3e310f561"),
         DataFile("llmbar/Adversarial_Manual.json", "Dataset/LLMBar/Adversarial/Manual/dataset.json", 79_050,
                  "0d9598769a39cdbbd265778c37e49939d41d5f76dcfb17bd75dcfa07516d3837"),
         DataFile("llmbar/Processed_MT-Bench_200.json", "Dataset/Processed/MT-Bench/dataset.json", 468_579,
                  "c152249bc095d152485954bd2abd9ea79528ee5e4c045bfe9ef78755b03c20d8"),
         DataFile("llmbar/Processed_FairEval.json", "Dataset/Processed/FairEval/dataset.json", 185_654,
                  "5b4a129258c1efa273a1b10fec399f5462b458facf900e8e1948f4acb1b37dd6"),
         DataFile("llmbar/Processed_LLMEval2.json", "Dataset/Processed/LLMEval^2/dataset.json", 298_957,
                  "deffdaeccda39c0fb9337c7e20925ec2b973bfd456832c2f1ba0e9ca4cf107de"),
         DataFile("llmbar/LICENSE", "LICENSE", 1_094,
                  "8872dbf8660b00890b5e07ce1ea1f7a44fa7ae4e1857da56caba172b51dab3cb"))),
    PublicSet(
        "mt_bench", "MT-bench: 80 two-turn questions, GPT-4 reference answers for math, reasoning and coding",
        "lm-sys/FastChat", _FASTCHAT, "Apache-2.0",
        (DataFile("mt_bench/question.jsonl", "fastchat/llm_judge/data/mt_bench/question.jsonl", 48_929,
                  "119565adbab82227089cefdb44c8d7e2cf04dc0a0ec233634c82e7d4e2a944f7"),
         DataFile("mt_bench/reference_answer_gpt-4.jsonl",
                  "fastchat/llm_judge/data/mt_bench/reference_answer/gpt-4.jsonl", 51_109,
                  "f957a5bc977badb66885ec970e6cd08527845780313f0995764260e5777b9b3f"))),
    PublicSet(
        "pubmedqa", "PubMedQA expert set: 1,000 questions with abstract sections, long answer, yes/no/maybe",
        "pubmedqa/pubmedqa", _PUBMEDQA, "MIT",
        (DataFile("pubmedqa/ori_pqal.json", "data/ori_pqal.json", 2_584_787,
                  "8b3276be8942ebbd77f3ddcda12c1749bf0e490045a736fd8438ee40cf37a41d"),
         DataFile("pubmedqa/test_ground_truth.json", "data/test_ground_truth.json", 11_414,
                  "939fe566f09017d13b1ca64d2ddfee0bc2374b366048152997669cccedc44d51"))),
    PublicSet(
        "wikitext2", "WikiText-2 raw, validation and test splits: Wikipedia Good and Featured articles",
        "pytorch/examples", _PYTORCH_EXAMPLES, "CC BY-SA 3.0",
        (DataFile("wikitext2/valid.txt", "word_language_model/data/wikitext-2/valid.txt", 1_121_681,
                  "f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8"),
         DataFile("wikitext2/test.txt", "word_language_model/data/wikitext-2/test.txt", 1_256_449,
                  "d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0"),
         DataFile("wikitext2/README", "word_language_model/data/wikitext-2/README", 159,
                  "ed96062abea03d4f4e8ca80f0caad8b07ec59687b8064319c7ee6f6d900b6286"))),
    PublicSet(
        "legalbench", "LegalBench definition tasks: example rows of a legal term and the court text defining it",
        "HazyResearch/legalbench", _LEGALBENCH, "CC BY-SA 4.0",
        (DataFile("legalbench/definition_classification/train.tsv", "tasks/definition_classification/train.tsv",
                  1_772, "9375082e81c47c3c46db40f11cdc33ff8fefa83886876fc6de72affcfcb090f4"),
         DataFile("legalbench/definition_classification/README.md", "tasks/definition_classification/README.md",
                  1_417, "e181bbc122f0b3dab72cb7af0819f815deb6d864734684d0d3594dc30000ab74"),
         DataFile("legalbench/definition_extraction/train.tsv", "tasks/definition_extraction/train.tsv",
                  2_688, "254d169ddf5f4978b5ac63749117f6b9b1d5c7f415fc2040a392d37c1056d634"),
         DataFile("legalbench/definition_extraction/README.md", "tasks/definition_extraction/README.md",
                  1_775, "e821128f55c4b6e4253a14c923d6e9be589cd75979019292c5210861bd4417b0"))),
    PublicSet(
        "summeval", "SummEval: 100 CNN/DM articles x 16 system summaries, mean expert scores of 4 aspects",
        "neulab/BARTScore", _BARTSCORE,
        "annotations MIT (Yale-LILY/SummEval); article text (c) its publishers (CNN / Daily Mail)",
        (DataFile("summeval/summeval_1600.jsonl", "SUM/SummEval/data.pkl", 8_966_004,
                  "f791bd51c71ca0a3a90b63dc1553e58179ab13fd0e04217b9343ae6fb4a83d14",
                  upstream_size=1_176_833,
                  upstream_sha256="008f1639a3352f0248cac88b74ff431c27287a027a888902ef425a26005f0acf",
                  convert=_summeval_jsonl),)),
)
"""Every set examiner reads by name, in the order `examiner data list` shows them."""


def set_names(sets: Sequence[PublicSet] = PUBLIC_SETS) -> tuple[str, ...]:
    return tuple(s.name for s in sets)


def find_set(name: str, sets: Sequence[PublicSet] = PUBLIC_SETS) -> PublicSet:
    """The set called `name`; UserError naming the known ones otherwise."""
    for candidate in sets:
        if candidate.name == name:
            return candidate
    raise UserError(f"unknown data set {name!r}; known: {', '.join(set_names(sets))}")


def configured_root() -> Path:
    """The data folder, whether or not it exists: `$EXAMINER_DATA` when set, else the user's cache folder
    (`~/.cache/examiner/data` on Linux)."""
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return platformdirs.user_cache_path("examiner") / "data"


def data_root(create: bool = False) -> Path:
    """The data folder the loaders read (`configured_root`). `create` (a pull) makes it. An `$EXAMINER_DATA`
    that names no folder is refused at once, since it is most often a typo; the cache folder may be absent
    (a reader of a set that is not there is told to pull it)."""
    root = configured_root()
    if create:
        root.mkdir(parents=True, exist_ok=True)
    if os.environ.get(DATA_ENV) and not root.is_dir():
        hint = "" if root.exists() else ': create it with "examiner data pull NAME", or unset it'
        raise UserError(f"{DATA_ENV} points to {root}, which is not a folder{hint}")
    return root


def missing_set_error(name: str, root: Path) -> UserError:
    """The one line a reader of a set that is not in the data folder gives."""
    return UserError(f'{name} is not in {root}: run "examiner data pull {name}" (or set {DATA_ENV})')


def set_file(*parts: str, root: Path | None = None) -> Path:
    """`root/parts...` of a set's file (the first part is the set's name), or the one-line pull hint."""
    base = data_root() if root is None else root
    path = base.joinpath(*parts)
    if not path.is_file():
        raise missing_set_error(parts[0], base)
    return path
