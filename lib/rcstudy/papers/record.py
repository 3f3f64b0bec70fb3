"""Published numbers of ReCoRD (Zhang et al., 2018), arXiv:1810.12885v1.

Table 4's columns are Exact Match (dev, test) and F1 (dev, test); the test answers are hidden,
so only the dev columns can ever be recomputed. Human performance is a third crowd worker's
answers (not released), so it can only be quoted.
"""

from ..claims import AllOf, ClaimSpec, Compare, Within
from ..stats import Interval
from . import Citation, Published, lookup

CITATION = Citation(
    key="zhang2018record",
    title="ReCoRD: Bridging the Gap between Human and Machine Commonsense Reading Comprehension",
    authors="Sheng Zhang and Xiaodong Liu and Jingjing Liu and Jianfeng Gao and Kevin Duh and Benjamin Van Durme",
    venue="arXiv preprint arXiv:1810.12885",
    year=2018,
    url="https://arxiv.org/abs/1810.12885",
)

P = "record"

TABLE1_COLUMNS = ("Train", "Dev.", "Test", "Overall")
_TABLE1 = {
    "queries": (100730, 10000, 10000, 120730),
    "unique passages": (65709, 7133, 7279, 80121),
    "passage vocab.": (352491, 93171, 94386, 395356),
    "query vocab.": (119069, 30844, 31028, 134397),
    "tokens / passage": (169.5, 168.6, 168.1, 169.3),
    "entities / passage": (17.8, 17.5, 17.3, 17.8),
    "tokens / query": (21.3, 22.1, 22.2, 21.4),
}

TABLE4_COLUMNS = ("EM (dev)", "EM (test)", "F1 (dev)", "F1 (test)")
_TABLE4 = {
    "Human": (91.28, 91.31, 91.64, 91.69),
    "DocQA w/ ELMo": (44.13, 45.44, 45.39, 46.65),
    "DocQA w/o ELMo": (36.59, 38.52, 37.89, 39.76),
    "SAN": (38.14, 39.77, 39.09, 40.72),
    "QANet": (35.38, 36.51, 36.75, 37.79),
    "ASReader": (29.24, 29.80, 29.80, 30.35),
    "LM": (16.73, 17.57, 17.41, 18.15),
    "Random Guess": (18.41, 18.55, 19.06, 19.12),
}

_TABLE2 = {"Paraphrasing": 3.0, "Partial Clue": 10.0, "Multi-sentence Reasoning": 6.0,
           "Commonsense Reasoning": 75.0, "Ambiguous": 6.0}
_TABLE3 = {"Conceptual Knowledge": 49.3, "Causal Reasoning": 32.0, "Naïve Psychology": 28.0, "Other": 12.0}
_TABLE5 = {"DocQA w/ ELMo": 6.27, "DocQA": 6.37, "QANet": 6.41}

# Figure 2 (the collection pipeline) and §3: sizes after each stage.
_FUNNEL = {
    "news articles curated": 170_000,
    "passage-query-answer triples generated": 770_000,
    "triples after machine filtering (SAN)": 244_000,
    "triples after human filtering": 120_000,
}

NUMBERS: list[Published] = [
    *(Published(P, "Table 1", row, col, v, "tokenizer not stated in the paper")
      for row, vals in _TABLE1.items() for col, v in zip(TABLE1_COLUMNS, vals)),
    *(Published(P, "Table 2", row, "% of 100 dev queries", v) for row, v in _TABLE2.items()),
    *(Published(P, "Table 3", row, "% of 75 commonsense queries", v, "multi-label") for row, v in _TABLE3.items()),
    *(Published(P, "Table 4", row, col, v, "test answers are hidden; human = a third crowd worker")
      for row, vals in _TABLE4.items() for col, v in zip(TABLE4_COLUMNS, vals)),
    *(Published(P, "Table 5", row, "OOC rate (%)", v, "dev predictions outside the candidate entities")
      for row, v in _TABLE5.items()),
    *(Published(P, "Figure 2", row, "count", v, "rounded as printed") for row, v in _FUNNEL.items()),
    Published(P, "§3.3", "SAN 5-fold answered", "% of triples", 68.0, "these triples were removed"),
    Published(P, "§5.5", "human errors", "% of dev/test queries", 8.0, "'about 8%'"),
    Published(P, "§5.5", "DocQA w/ ELMo correct ∩ human correct", "% overlap", 92.6, "Figure 5"),
    Published(P, "§5.5", "potential gain from candidates", "points", 6.0, "'about 6%' (from the OOC rates)"),
]


def _published(table: str, row: str, column: str) -> float:
    return lookup(NUMBERS, table, row, column)


def _dev_f1(row: str) -> float:
    return _published("Table 4", row, "F1 (dev)")


CLAIMS = [
    ClaimSpec(
        "human-gap",
        "Humans ({human:.2f} dev F1) are far ahead of every machine reader; the best system of 2018 "
        "reaches {elmo:.2f}.",
        "The paper's human dev F1 exceeds the upper end of the 95% interval of our best method "
        "(excluding the candidate oracle).",
        Compare("best.high", "<", "human"),
        paper={"best": Interval.point(_dev_f1("DocQA w/ ELMo")), "human": _dev_f1("Human"), "elmo": _dev_f1("DocQA w/ ELMo")}),
    ClaimSpec(
        "lm-near-random",
        "The language-model baseline is no better than random guess ({lm:.2f} vs {random:.2f} dev F1).",
        "Paired bootstrap on the queries the LM scored: the 95% interval of F1(LM) − F1(random) "
        "reaches 0 or below.",
        Compare("diff.low", "<=", 0),
        paper={"diff": Interval.point(_dev_f1("LM") - _dev_f1("Random Guess")), "lm": _dev_f1("LM"),
               "random": _dev_f1("Random Guess")}),
    ClaimSpec(
        "asreader-above-random",
        "ASReader, trained on ReCoRD, clearly beats random guess ({asreader:.2f} vs {random:.2f} dev F1).",
        "Paired bootstrap: the 95% interval of F1(ASReader) − F1(random) lies above 0.",
        # the lower end above 0, else "does not hold": an interval that straddles 0 has not shown it
        Compare("diff.low", ">", 0),
        paper={"diff": Interval.point(_dev_f1("ASReader") - _dev_f1("Random Guess")), "asreader": _dev_f1("ASReader"),
               "random": _dev_f1("Random Guess")}),
    ClaimSpec(
        "random-level",
        "Random guess among the candidate entities scores {random:.2f} dev F1.",
        "The paper's value lies inside the 95% interval of our exact random-guess F1.",
        AllOf((Compare("ours.low", "<=", "random"), Compare("ours.high", ">=", "random"))),
        paper={"ours": Interval.point(_dev_f1("Random Guess")), "random": _dev_f1("Random Guess")}),
    ClaimSpec(
        "answers-are-entities",
        "Every answer is one of the passage's named entities (the task is to pick among them).",
        "At least 99% of our queries have a gold answer among the candidate entities.",
        Compare("gold_among_candidates", ">=", 99),
        paper={"gold_among_candidates": 100.0}),  # by construction (§3): the answers are the entities
    ClaimSpec(
        "query-constraints",
        "Queries have at least 10 tokens, are not questions and share no 3-gram with the passage.",
        "At least 95% of our queries meet all three (under our tokenizer).",
        Compare("met", ">=", 95),  # % of queries meeting each constraint
        paper={"met": {"≥10 tokens": 100.0, "not a question": 100.0, "no shared 3-gram": 100.0}}),  # by construction (§3.2)
    ClaimSpec(
        "passage-shape",
        "Passages average {tokens:.1f} tokens and {entities:.1f} entity mentions (Table 1, overall).",
        "Both of our averages are within 10% of the paper's (tokenizers differ).",
        Within("ratio", 0.9, 1.1),  # ours / the paper's, per average
        paper={"ratio": {"tokens": 1.0, "entities": 1.0},
               "tokens": _published("Table 1", "tokens / passage", "Overall"),
               "entities": _published("Table 1", "entities / passage", "Overall")}),
    ClaimSpec(
        "candidates-help-extractive",
        "Extractive models answer outside the candidate entities about {gain:.0f}% of the time, so using the "
        "candidates could add about {gain:.0f} points.",
        "Paired bootstrap on the queries the span readers scored: the 95% interval of "
        "F1(candidate-restricted) − F1(free span) of the fine-tuned span extractor lies above 0.",
        Compare("diff.low", ">", 0),
        paper={"diff": Interval.point(_published("§5.5", "potential gain from candidates", "points")),
               "gain": _published("§5.5", "potential gain from candidates", "points")}),
]
