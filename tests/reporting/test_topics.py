"""Cluster topics and order (examiner/reporting/topics.py): key terms that tell clusters apart, computed
without a model, the question without its unit list, and ids in natural order."""

from __future__ import annotations

from examiner.reporting.topics import cluster_topics, natural_key, question_excerpt


def test_natural_order_puts_c2_before_c10() -> None:
    ids = ["r1-c10-aa", "r2-c1-bb", "r1-c2-cc", "r1-c1-dd", "r10-c0-ee"]
    assert sorted(ids, key=natural_key) == ["r1-c1-dd", "r1-c2-cc", "r1-c10-aa", "r2-c1-bb", "r10-c0-ee"]
    assert sorted(ids) != sorted(ids, key=natural_key)  # text order is the bug this fixes


def test_topics_name_what_sets_each_cluster_apart() -> None:
    texts = {
        "r1-c0": ["The glacier retreated after the warm summer.", "Glacier ice melts in the summer sun."],
        "r1-c1": ["The court ruled on the appeal.", "An appeal reached the supreme court in May."],
        "r1-c2": ["Insulin lowers blood sugar.", "Blood sugar rises without insulin."],
        "r1-c3": ["The summer court heard the glacier case.", "Nothing else."],
    }
    topics = cluster_topics(texts)
    assert topics["r1-c0"].split(", ")[0] == "glacier"
    assert set(topics["r1-c1"].split(", ")[:2]) == {"appeal", "court"}
    assert "insulin" in topics["r1-c2"] and "sugar" in topics["r1-c2"]
    assert all(len(t.split(", ")) <= 3 for t in topics.values())
    assert "the" not in " ".join(topics.values()).split()  # English stop words dropped
    assert cluster_topics(texts) == topics  # the same records give the same names


def test_chinese_text_gets_character_pairs_and_empty_input_no_topic() -> None:
    topics = cluster_topics({"a": ["学而时习之，不亦说乎"], "b": ["有朋自远方来，不亦乐乎"]}, language="zh")
    assert topics["a"] and all(len(term) == 2 for term in topics["a"].split(", "))
    assert cluster_topics({"a": ["12 34"], "b": [""]}) == {}
    assert cluster_topics({}) == {}


def test_question_excerpt_drops_the_unit_list_and_shortens() -> None:
    text = "Why did the glacier retreat?  [ref:ku-1,ku-2]"
    assert question_excerpt(text) == "Why did the glacier retreat?"
    long = question_excerpt("word " * 100, limit=40)
    assert len(long) == 40 and long.endswith("...")
