"""Published numbers of LogiQA (Liu et al., IJCAI 2020).

Copied from the paper's text and Tables 2-7. Figure 3 (the ablation bar chart) survives only
in the text: its full-input and no-paragraph bars are quoted there, the other two are not.
"""

from ..claims import Above, ClaimSpec, Compare, Higher, Within
from ..stats import Interval
from . import Citation, Published, lookup

CITATION = Citation(
    key="liu2020logiqa",
    title="LogiQA: A Challenge Dataset for Machine Reading Comprehension with Logical Reasoning",
    authors="Jian Liu and Leyang Cui and Hanmeng Liu and Dandan Huang and Yile Wang and Yue Zhang",
    venue="Proceedings of the Twenty-Ninth International Joint Conference on Artificial Intelligence (IJCAI)",
    year=2020,
    url="https://www.ijcai.org/proceedings/2020/501",
)

P = "logiqa"

_TABLE3_COLUMNS = ("LogiQA Dev", "LogiQA Test", "Chinese Dev", "Chinese Test")
_TABLE3 = {
    "Random (theoretical)": (25.00, 25.00, 25.00, 25.00),
    "Word Matching": (27.49, 28.37, 26.55, 25.74),
    "Sliding Window": (23.58, 22.51, 23.85, 24.27),
    "Stanford Attentive Reader": (29.65, 28.76, 28.71, 26.95),
    "Gated-Attention Reader": (28.30, 28.98, 26.82, 26.43),
    "Co-Matching Network": (33.90, 31.10, 30.59, 31.27),
    "BERT": (33.83, 32.08, 30.46, 34.77),
    "RoBERTa": (35.85, 35.31, 39.22, 37.33),
    "Human Performance": (None, 86.00, None, 88.00),
    "Ceiling Performance": (None, 95.00, None, 96.00),
}

_TABLE4 = {
    "Random (theoretical)": (25.00, 25.00),
    "RoBERTa_LogiQA": (35.85, 35.31),
    "RoBERTa_RACE": (29.19, 26.86),
    "RoBERTa_COSMOS": (25.14, 28.73),
    "RoBERTa_RACE → LogiQA": (34.60, 35.07),
    "RoBERTa_COSMOS → LogiQA": (36.44, 35.11),
}

TABLE5_BINS = ("(0,100]", "(100,150]", "(150,200]", "(200,+∞)")
_TABLE5 = {"#Instances": (253, 364, 198, 61), "RoBERTa": (31.31, 36.25, 37.13, 40.38)}

_TABLE6 = {
    "Word Matching": (100.00, 28.37),
    "Stanford Attentive Reader": (35.47, 35.82),
    "Gated-Attention Reader": (37.33, 34.96),
    "Co-Matching Network": (40.74, 36.85),
    "BERT": (34.23, 37.73),
    "RoBERTa": (32.08, 40.38),
    "Gold-standard": (28.37, 100.00),
}

#: Reasoning types in the paper's order, with the row names of Figure 2 / Table 7.
TYPE_NAMES = {
    "categorical": "Categorical reasoning",
    "sufficient": "Sufficient conditional reasoning",
    "necessary": "Necessary conditional reasoning",
    "disjunctive": "Disjunctive reasoning",
    "conjunctive": "Conjunctive reasoning",
}
_FIGURE2 = {"categorical": 30.8, "sufficient": 27.6, "necessary": 24.7, "disjunctive": 18.5, "conjunctive": 21.3}
_TABLE7 = {"categorical": 55.00, "sufficient": 17.11, "necessary": 19.29, "disjunctive": 22.67, "conjunctive": 21.98}

NUMBERS: list[Published] = [
    # §3.1 and Table 2: the dataset
    Published(P, "§3.1", "raw paragraph-question-choice triples", "count", 13918),
    Published(P, "Table 2", "# Paragraph-Question Pairs", "value", 8678),
    Published(P, "Table 2", "Paragraph", "Ave. tokens", 76.87, "tokeniser not stated"),
    Published(P, "Table 2", "Paragraph", "Max. tokens", 323),
    Published(P, "Table 2", "Question", "Ave. tokens", 12.03),
    Published(P, "Table 2", "Question", "Max. tokens", 54),
    Published(P, "Table 2", "Candidate Answer", "Ave. tokens", 15.83),
    Published(P, "Table 2", "Candidate Answer", "Max. tokens", 111),
    # §3.2 and §5: splits
    Published(P, "§3.2", "test set", "paragraph-question pairs", 867, "the released Test.txt has 651"),
    Published(P, "§5", "split", "train %", 80),
    Published(P, "§5", "split", "dev %", 10),
    Published(P, "§5", "split", "test %", 10),
    Published(P, "§4", "human evaluation", "test instances", 500, "3 post-graduate students"),
    Published(P, "§1", "Ceiling Performance", "LogiQA Test", 96.00,
              "the introduction's figure; Table 3 gives 95.00 for English and 96.00 for Chinese"),
    Published(P, "§1", "RoBERTa", "LogiQA Test", 35.31, "the introduction's machine figure"),
    # Figure 2: reasoning types of the (paper's) test set, % of instances, multi-label
    *[Published(P, "Figure 2", TYPE_NAMES[t], "% of test", v, "multi-label: the five sum to 122.9")
      for t, v in _FIGURE2.items()],
    # Table 3: main results
    *[Published(P, "Table 3", row, col, v, "" if v is not None else "'-' in the paper")
      for row, vals in _TABLE3.items() for col, v in zip(_TABLE3_COLUMNS, vals)],
    # Figure 3: ablation of RoBERTa inputs (test accuracy); only two bars are quoted in the text
    Published(P, "Figure 3", "full input", "RoBERTa Test", 35.31),
    Published(P, "Figure 3", "no paragraph", "RoBERTa Test", 28.92),
    Published(P, "Figure 3", "no question", "RoBERTa Test", None,
              "bar not quoted; the text says the drop is smaller than without the paragraph"),
    Published(P, "Figure 3", "options only", "RoBERTa Test", None, "bar not quoted; the text says 'significant drop'"),
    # Table 4: transfer learning
    *[Published(P, "Table 4", row, col, v) for row, vals in _TABLE4.items() for col, v in zip(("Dev", "Test"), vals)],
    # Table 5: length buckets (words of paragraph + question + the four options)
    *[Published(P, "Table 5", row, b, v) for row, vals in _TABLE5.items() for b, v in zip(TABLE5_BINS, vals)],
    # Table 6: overlap ratio and accuracy
    *[Published(P, "Table 6", row, col, v)
      for row, vals in _TABLE6.items() for col, v in zip(("Overlap Ratio", "Accuracy(%)"), vals)],
    # Table 7: RoBERTa accuracy by reasoning type
    *[Published(P, "Table 7", TYPE_NAMES[t], "RoBERTa", v) for t, v in _TABLE7.items()],
    # Comparisons the paper cites for its ablation (§6.1)
    Published(P, "§6.1", "COSMOS: full → no paragraph", "full", 67.1, "RoBERTa on COSMOS QA (Huang et al., 2019)"),
    Published(P, "§6.1", "COSMOS: full → no paragraph", "no paragraph", 55.9),
    Published(P, "§6.1", "Social IQa: full → no paragraph", "full", 66.0, "Sap et al., 2019"),
    Published(P, "§6.1", "Social IQa: full → no paragraph", "no paragraph", 52.7),
]


def _published(table: str, row: str, column: str) -> float:
    return lookup(NUMBERS, table, row, column)


def _test(row: str) -> float:
    return _published("Table 3", row, "LogiQA Test")


_READERS = ("Stanford Attentive Reader", "Gated-Attention Reader", "Co-Matching Network")
_PRETRAINED = ("BERT", "RoBERTa")
_SOURCES = {"RACE": "RoBERTa_RACE", "COSMOS": "RoBERTa_COSMOS"}
_FULL, _NO_PARAGRAPH = (_published("Figure 3", row, "RoBERTa Test") for row in ("full input", "no paragraph"))
_GOLD_OVERLAP = _published("Table 6", "Gold-standard", "Overlap Ratio")
_ROBERTA_OVERLAP = _published("Table 6", "RoBERTa", "Overlap Ratio")

CLAIMS = [
    ClaimSpec(
        "far-below-humans",
        "All models perform far below people ({human:.0f}% on Test).",
        "the highest upper 95% bound of any of our systems is below the paper's human score",
        Compare("best.high", "<", "human"),
        paper={"best": Interval.point(max(_test(r) for r in (*_READERS, *_PRETRAINED))), "human": _test("Human Performance")}),
    ClaimSpec(
        # "at or below chance" alone does not hold on the paper's own word matching (28.37%)
        "rules-near-chance",
        "Rule-based methods score at or near chance: lexical matching alone fails.",
        "the 95% interval of word matching and of sliding window on Test reaches 30% (5 points above "
        "chance) or lower",
        Compare("rules.low", "<=", 30),
        paper={"rules": {r: Interval.point(_test(r)) for r in ("Word Matching", "Sliding Window")}}),
    ClaimSpec(
        "sw-below-random",
        "Sliding window scores below a random guess ({published:.2f}%).",
        "the 95% interval of sliding window on Test lies below 25%",
        Compare("sw.high", "<", 25),  # an interval that reaches 25% has not shown it: does not hold
        paper={"sw": Interval.point(_test("Sliding Window")), "published": _test("Sliding Window")}),
    ClaimSpec(
        "deep-around-30",
        "The deep-learning readers score around 30%.",
        "each reader's Test accuracy lies between 25% and 35%",
        Within("readers", 25, 35),
        paper={"readers": {r: _test(r) for r in _READERS}}),
    ClaimSpec(
        "pretrained-beat-readers",
        "Pre-trained models beat the models without contextual embeddings.",
        "paired 95% interval of the fine-tuned encoder minus the best reader on Test lies above 0 "
        "(no verdict if it includes 0)",
        Above("diff"),
        paper={"diff": min(_test(r) for r in _PRETRAINED) - max(_test(r) for r in _READERS)}),
    ClaimSpec(
        "zh-same-level",
        "Results on Chinese LogiQA are on the same level as on English.",
        "word matching and sliding window differ by less than 5 points between Chinese and English Test",
        Compare("gaps", "<", 5),
        paper={"gaps": {r: abs(_published("Table 3", r, "Chinese Test") - _test(r))
                        for r in ("Word Matching", "Sliding Window")}}),
    ClaimSpec(
        "ablations-drop",
        "Removing the paragraph, the question or both lowers accuracy (weak dataset bias).",
        "paired 95% interval of full input minus each ablation (same questions) lies above 0; "
        "no verdict if any includes 0",
        Above("drops"),
        paper={"drops": {"no paragraph": _FULL - _NO_PARAGRAPH}}),  # the only ablated bar the text quotes
    ClaimSpec(
        "paragraph-matters-more",
        "Ablating the question costs less than ablating the paragraph.",
        "paired 95% interval of no-question minus no-paragraph lies above 0 (no verdict if it includes 0)",
        Above("diff"),
        # the bar is not quoted; the text puts it between the no-paragraph and full-input bars
        paper={"diff": (_FULL - _NO_PARAGRAPH) / 2}),
    ClaimSpec(
        "source-only-lower",
        "A model trained only on another dataset is clearly worse on LogiQA.",
        "paired 95% interval of LogiQA-only minus ReClor-only lies above 0 (no verdict if it includes 0)",
        Above("diff"),
        paper={"diff": {s: _published("Table 4", "RoBERTa_LogiQA", "Test") - _published("Table 4", row, "Test")
                        for s, row in _SOURCES.items()}}),
    ClaimSpec(
        "transfer-no-gain",
        "Further fine-tuning on LogiQA does not beat training on LogiQA alone.",
        "the paired 95% interval of ReClor → LogiQA minus LogiQA only does not lie above 0",
        Compare("diff.low", "<=", 0),
        paper={"diff": {s: Interval.point(_published("Table 4", f"{row} → LogiQA", "Test")
                                  - _published("Table 4", "RoBERTa_LogiQA", "Test")) for s, row in _SOURCES.items()}}),
    ClaimSpec(
        "length-not-negative",
        "Accuracy does not fall as questions get longer.",
        "the 95% interval of the fine-tuned encoder on the longest bin does not lie below the shortest bin's",
        Compare("longest.high", ">=", "shortest.low"),
        paper={"shortest": Interval.point(_published("Table 5", "RoBERTa", TABLE5_BINS[0])),
               "longest": Interval.point(_published("Table 5", "RoBERTa", TABLE5_BINS[-1]))}),
    ClaimSpec(
        "models-overmatch",
        "Every model picks the best-overlap option more often than the gold answers are it.",
        "for each trained system, the paired 95% interval of its overlap ratio minus the gold answers' "
        "lies above 0; no verdict if any includes 0",
        Above("over"),
        paper={"over": {r: _published("Table 6", r, "Overlap Ratio") - _GOLD_OVERLAP for r in (*_READERS, *_PRETRAINED)}}),
    ClaimSpec(
        "pretrained-least-overlap",
        "The pre-trained model relies least on lexical overlap.",
        "for each reader, the paired 95% interval of its overlap ratio minus the fine-tuned encoder's "
        "lies above 0; no verdict if any includes 0",
        Above("more"),
        paper={"more": {r: _published("Table 6", r, "Overlap Ratio") - _ROBERTA_OVERLAP for r in _READERS}}),
    ClaimSpec(
        "categorical-easiest",
        "Categorical reasoning is the easiest type; the other four are much harder.",
        "on the LogiQA 2.0 proxy labels, the 95% interval of the fine-tuned encoder on categorical questions "
        "lies above every other type's (below one: does not hold; overlapping: no verdict)",
        Higher("categorical", "others"),
        paper={"categorical": _TABLE7["categorical"],
               "others": {t: v for t, v in _TABLE7.items() if t != "categorical"}}),
]
