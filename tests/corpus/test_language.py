"""Exams in any language: detection per document, sentence-sized units from Chinese and Japanese, a leak
check and question types that work beyond English, the language line every model gets, and a simulated
exam on the Chinese sample corpus whose report shows the language."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from examiner.cli.main import main
from examiner.core.config import ExamSettings, Settings
from examiner.corpus.reading import corpus_from_texts, exam_language, load_corpus
from examiner.core.errors import ConfigError
from examiner.exam.checks import content_words, leaking_targets, question_type, word_count
from examiner.corpus.sentences import sentence_spans
from examiner.corpus.units import sentence_units
from examiner.corpus.language import detect_language, dominant_language
from examiner.llm.gateway import Gateway
from examiner.agents.prompting import render
from examiner.llm.reply_language import language_instruction, with_language

SAMPLE = Path(__file__).resolve().parents[2] / "corpora" / "lunyu-xueer"

JAPANESE = ("東京は日本の首都である。東京都の人口は約千四百万人で、日本で最も多い。江戸幕府は一六〇三年に開かれた。"
            "明治維新の後、江戸は東京と改められた！現在の皇居はかつての江戸城の跡にある。")
CHINESE = ("长城是中国古代的军事防御工程。它的总长度超过两万公里。秦始皇统一六国后，把各国的长城连接起来。"
           "明朝时期又大规模重修了长城！今天看到的多数城墙都是明代修建的。")


@pytest.mark.parametrize("text, code", [
    (CHINESE, "zh"), (JAPANESE, "ja"),
    ("Москва является столицей России и крупнейшим городом страны.", "ru"),
    ("القاهرة هي عاصمة جمهورية مصر العربية وأكبر مدنها.", "ar"),
    ("Madrid es la capital de España y su ciudad más poblada.", "es"),
    ("The harbour was dredged in 1921 to a depth of twelve metres.", "en"),
    ("1234 5678 !!!", "und"),
])
def test_detects_the_language_deterministically(text: str, code: str) -> None:
    assert {detect_language(text) for _ in range(3)} == {code}


@pytest.mark.parametrize("text, sentences", [(JAPANESE, 5), (CHINESE, 5)])
def test_cjk_text_gives_sentence_sized_units(text: str, sentences: int) -> None:
    spans = sentence_spans(text)
    assert len(spans) == sentences
    assert all(text[b - 1] in "。！" for _, b in spans)
    corpus = corpus_from_texts([("doc", text)])
    units = sentence_units(corpus, max_tokens=80, min_tokens=1)
    assert len(units) == sentences
    longest = max(len(s) for s in text.replace("！", "。").split("。"))
    assert all(len(u.text) <= longest + 1 for u in units)
    for unit in units:  # spans still index the document text
        src = unit.sources[0]
        assert text[src.start:src.end] == unit.text


def test_other_scripts_split_at_their_full_stops() -> None:
    assert len(sentence_spans("Это первое предложение. Это второе предложение.")) == 2
    assert len(sentence_spans("هذه جملة أولى. هل هذه جملة ثانية؟ نعم هي كذلك.")) == 3
    assert len(sentence_spans("यह पहला वाक्य है। यह दूसरा वाक्य है।")) == 2
    assert len(sentence_spans("e.g. this stays one sentence. It does not split at e.g. here")) == 2


CLUSTER_ZH = {
    "u1": "蔡伦在东汉时期改进了造纸术，用树皮、麻头、破布和旧渔网作为原料。",
    "u2": "造纸术是中国古代四大发明之一，对世界文明影响深远。",
    "u3": "活字印刷术由北宋的毕昇发明，使用胶泥制成的活字。",
}


def test_leak_check_rejects_a_chinese_question_that_copies_the_unit() -> None:
    copying = "蔡伦改进造纸术时，是否用树皮、麻头、破布和旧渔网作为原料？"
    fair = "东汉时期的造纸术是由谁改进的，他用了哪些材料？"
    assert leaking_targets(copying, ["u1"], CLUSTER_ZH, 0.6) == ["u1"]
    assert leaking_targets(fair, ["u1"], CLUSTER_ZH, 0.6) == []


def test_leak_check_works_for_japanese_and_russian() -> None:
    units = {"j1": "江戸幕府は一六〇三年に徳川家康によって開かれ、二百六十年余り続いた。",
             "j2": "明治維新の後、江戸は東京と改められた。",
             "j3": "東京の人口は約千四百万人である。"}
    assert leaking_targets("徳川家康が一六〇三年に開いた江戸幕府は二百六十年余り続いたか？", ["j1"], units, 0.6) == ["j1"]
    assert leaking_targets("江戸幕府はいつ、誰によって開かれましたか？", ["j1"], units, 0.6) == []
    units_ru = {"r1": "Пётр Первый основал Санкт-Петербург в 1703 году на берегу Невы.",
                "r2": "Москва является столицей России.",
                "r3": "Волга — самая длинная река Европы."}
    assert leaking_targets("Правда ли, что Пётр Первый основал Санкт-Петербург в 1703 году на берегу Невы?",
                           ["r1"], units_ru, 0.6) == ["r1"]
    assert leaking_targets("Кто и когда основал город на Неве?", ["r1"], units_ru, 0.6) == []


def test_english_terms_are_as_before() -> None:
    assert content_words("The pump's intake-valve is closed, e.g. at 3 bar.") == ["pump's", "intake-valve",
                                                                                  "closed", "bar"]
    assert content_words("Who discovered penicillin in 1928?") == ["discovered", "penicillin", "1928"]
    assert word_count("How does the pump start?") == 5


@pytest.mark.parametrize("question, qtype", [
    ("Who wrote it?", "who"), ("Was the treaty signed?", "other"),
    ("谁发明了造纸术？", "who"), ("造纸术是什么时候发明的？", "when"), ("为什么天空是蓝色的？", "why"),
    ("長城はどこにありますか？", "where"), ("なぜ空は青いのですか？", "why"),
    ("Кто написал «Войну и мир»?", "who"), ("Где находится Эрмитаж?", "where"),
    ("¿Por qué el cielo es azul?", "why"), ("¿Cuándo nació Cervantes?", "when"),
    ("Pourquoi le ciel est-il bleu ?", "why"), ("Wann wurde die Berliner Mauer gebaut?", "when"),
    ("متى تأسست مدينة القاهرة؟", "when"), ("كيف تعمل المضخة؟", "how"),
])
def test_question_types_across_languages(question: str, qtype: str) -> None:
    assert question_type(question) == qtype


def test_word_count_counts_unspaced_scripts() -> None:
    assert word_count("造纸术是什么时候发明的？") == 6  # 12 characters: one word per two
    assert word_count("What is 造纸术?") == 2 + 2


def test_language_line_only_for_other_languages() -> None:
    assert language_instruction("en") == "" and language_instruction("und") == ""
    assert "Chinese" in language_instruction("zh")
    messages = render("exam_answer", question="长城有多长？", max_words=50)
    assert with_language(messages, "en") is messages
    changed = with_language(messages, "zh")
    assert changed[0]["role"] == "system" and changed[0]["content"].endswith(language_instruction("zh"))
    assert changed[1:] == messages[1:] and messages[0]["content"] != changed[0]["content"]
    assert with_language([{"role": "user", "content": "x"}], "ja")[0]["role"] == "system"


async def test_gateway_sends_the_language_line(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[list[dict[str, str]]] = []

    async def endpoint(name: str, spec: object) -> SimpleNamespace:
        return SimpleNamespace(structured_mode="json_schema")

    async def request(self: Gateway, ep: object, conversation: list[dict[str, str]], *args: object) -> None:
        sent.append(conversation)
        raise LookupError("captured")

    gateway = Gateway(Settings())
    monkeypatch.setattr(gateway.transport, "endpoint", endpoint)
    monkeypatch.setattr(Gateway, "_request", request)
    messages = render("exam_answer", question="长城有多长？", max_words=50)
    for language in ("", "zh"):
        gateway.language = language
        with pytest.raises(LookupError):
            await gateway.chat("candidate", messages)
    assert sent[0] == messages
    assert sent[1][0]["content"].endswith(language_instruction("zh"))


def test_exam_language_setting() -> None:
    corpus = corpus_from_texts([("a", CHINESE), ("b", "A short English note about the wall.")])
    assert exam_language(corpus) == "zh"  # most of the text
    assert exam_language(corpus, "fr") == "fr"
    assert dominant_language([]) == "en"
    assert ExamSettings(language="ja").language == "ja"
    with pytest.raises(ConfigError):
        Settings().merged({"exam": {"language": "Chinese"}})


def test_simulated_exam_on_the_chinese_sample_shows_the_language(tmp_path: Path) -> None:
    assert {d.language for d in load_corpus(SAMPLE).documents} == {"zh"}
    run_dir = tmp_path / "run"
    assert main(["run", str(SAMPLE), "--simulate", "--max-rounds", "2", "--out", str(run_dir), "--quiet"]) == 0
    info = json.loads((run_dir / "run.json").read_text())
    assert info["language"] == "zh" and info["languages"] == {"zh": 2}
    report = json.loads((run_dir / "report.json").read_text())
    assert report["run"]["language"] == "zh"
    [row] = report["targets"]["sim-local"]["per_language"]
    assert row["language"] == "zh" and row["units"] == report["targets"]["sim-local"]["units"]
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "**language**: Chinese (zh)" in markdown and "## Accuracy per language" in markdown
    assert "Accuracy per language" in (run_dir / "report.html").read_text(encoding="utf-8")
    passages = [json.loads(line) for line in (run_dir / "passages.jsonl").read_text().splitlines()]
    assert {p["language"] for p in passages} == {"zh"} and all("page" not in p for p in passages)
