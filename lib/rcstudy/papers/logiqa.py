"""Published numbers of LogiQA (Liu et al., IJCAI 2020).

Copied from the paper's text and Tables 2-7. Figure 3 (the ablation bar chart) survives only
in the text: its full-input and no-paragraph bars are quoted there, the other two are not.
"""

from ..claims import STATED_UP, AllOf, Above, Below, ClaimSpec, Equivalent, Higher, chance_null, zero_null
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

#: The released Test.txt: the n of every null below (the chapter's intervals are over it).
_N_TEST = 651
_CHANCE = _test("Random (theoretical)")
_NULL_CHANCE = chance_null(_N_TEST)  # a guesser's accuracy on the 651 test questions, with its noise
_NO_DIFF = zero_null(_N_TEST)  # two guessers' paired difference on the same 651 questions
#: §6.2: RoBERTa_RACE's 26.86% is "even close to the random guess baseline" (25%): the paper's own
#: word "close" for a gap of 1.86 points.
_CLOSE = round(_published("Table 4", "RoBERTa_RACE", "Test") - _published("Table 4", "Random (theoretical)", "Test"), 2)
_CLOSE_WHY = (f"§6.2 calls RoBERTa_RACE's 26.86% 'even close to the random guess baseline' (25%, Table 4): a gap of "
              f"{_CLOSE:g} points is what the paper calls close")
#: Table 3 rows of both languages, Test: the largest |Chinese − English| is BERT's 2.69.
_ZH_ROWS = ("Word Matching", "Sliding Window", *_READERS, *_PRETRAINED)
_ZH_GAPS = {f"Table 3, {r}, Chinese Test − LogiQA Test": round(_published("Table 3", r, "Chinese Test") - _test(r), 2)
            for r in _ZH_ROWS}
_ZH_MARGIN = max(abs(v) for v in _ZH_GAPS.values())

CLAIMS = [
    ClaimSpec(
        "far-below-humans",
        "All models perform far below people ({human:.0f}% on Test), while beating chance.",
        "the 95% interval of our best system on Test lies below the paper's human score and above chance (a system "
        "at chance says nothing about models)",
        AllOf((Below("best", "human"), Above("best", "chance"))),
        paper={"best": max(_test(r) for r in (*_READERS, *_PRETRAINED)), "human": _test("Human Performance"),
               "chance": _CHANCE},
        source="Table 3, LogiQA Test: RoBERTa (35.31, the best model), Human Performance (86.00), Random (25.00)",
        null={"best": _NULL_CHANCE, "human": _test("Human Performance"), "chance": _CHANCE},
        null_what="a guesser: 25% with the noise of 651 test questions"),
    ClaimSpec(
        # the paper's rule-based rows: word matching 28.37, sliding window 22.51
        "rules-near-chance",
        "Rule-based methods score near chance: lexical matching alone fails.",
        f"TOST: the 90% interval of word matching and of sliding window on Test lies within 25 ± 3.5",
        Equivalent("rules", _CHANCE, 3.5,
                   "§5: word matching's 28.37% and sliding window's 22.51% show the questions 'are extremely "
                   "difficult to solve by using lexical matching alone', while the Stanford attentive reader's 28.76% "
                   "is 'better compared with the random guess baseline': near chance ends between 3.37 and 3.76 "
                   "points from 25"),
        paper={"rules": {f"Table 3, {r}, LogiQA Test": _test(r) for r in ("Word Matching", "Sliding Window")}},
        source="Table 3, LogiQA Test, Word Matching and Sliding Window rows",
        null={"rules": {"a matcher with skill": Interval(33.0, 29.4, 36.6, 0.95, _N_TEST)}},
        null_what="a lexical matcher clearly above chance: 33% with the noise of 651 test questions"),
    ClaimSpec(
        "sw-below-random",
        "Sliding window scores below a random guess ({published:.2f}%).",
        "the 95% interval of sliding window on Test lies below 25%",
        Below("sw", _CHANCE),
        paper={"sw": _test("Sliding Window"), "published": _test("Sliding Window")},
        source="Table 3, LogiQA Test, Sliding Window and Random rows",
        null={"sw": _NULL_CHANCE},
        null_what="a guesser: 25% with the noise of 651 test questions"),
    ClaimSpec(
        "deep-around-30",
        "The deep-learning readers score around 30%, better than a random guess.",
        "for each reader: TOST, its 90% interval on Test lies within 30 ± 5, and its 95% interval lies above 25",
        AllOf((Equivalent("readers", 30.0, 5.0,
                          "§5: the readers 'give accuracies around 30%, which is better compared with the random "
                          "guess baseline' (Table 3: 28.76, 28.98, 31.10): 'around 30' reaches down to, not into, "
                          "chance (25), 5 points below; the margin is taken the same above"),
               Above("readers", _CHANCE))),
        paper={"readers": {f"Table 3, {r}, LogiQA Test": _test(r) for r in _READERS}},
        source="Table 3, LogiQA Test, Stanford Attentive Reader, Gated-Attention Reader, Co-Matching Network",
        null={"readers": {"a guessing reader": _NULL_CHANCE}},
        null_what="a reader that guesses: 25% with the noise of 651 test questions",
        needs="each reader's bootstrap interval on Test (the chapter passes a mean ± sd over seeds)"),
    ClaimSpec(
        "pretrained-beat-readers",
        "Pre-trained models beat the models without contextual embeddings.",
        "paired 95% interval of the fine-tuned encoder minus the best reader on Test lies above 0 "
        "(no verdict if it includes 0)",
        Above("diff", 0),
        paper={"diff": {f"Table 3, {p} − Co-Matching Network, LogiQA Test": round(_test(p) - _test(_READERS[-1]), 2)
                        for p in _PRETRAINED}},
        source="Table 3, LogiQA Test: BERT (32.08) and RoBERTa (35.31) minus the best reader, Co-Matching (31.10)",
        null={"diff": _NO_DIFF},
        null_what="an encoder no better than the reader: 0 with the noise of a paired difference on 651 questions"),
    ClaimSpec(
        "zh-same-level",
        "Results on Chinese LogiQA are on the same level as on English.",
        f"TOST: the 90% interval of Chinese minus English Test accuracy of word matching and sliding window lies "
        f"within ± {_ZH_MARGIN:g}",
        Equivalent("gaps", 0.0, _ZH_MARGIN,
                   "§5: 'results on the Chinese dataset are on the same level compared with those on the English "
                   f"dataset', said of Table 3's rows, whose Chinese − English Test gaps reach {_ZH_MARGIN:g} "
                   "(BERT: 34.77 vs 32.08)"),
        paper={"gaps": _ZH_GAPS},
        source="Table 3, LogiQA Test and Chinese Test columns, every model row",
        null={"gaps": {"a system 10 points apart": zero_null(_N_TEST, center=10.0, sd=70.0)}},
        null_what="a system 10 points better in one language, with the noise of two sets of 651 questions",
        needs="an interval of the Chinese − English accuracy of each rule-based method (the chapter passes |gap| of "
              "means)"),
    ClaimSpec(
        "ablations-drop",
        "Removing the paragraph, the question or both lowers accuracy (weak dataset bias).",
        "paired 95% interval of full input minus each ablation (same questions) lies above 0; "
        "no verdict if any includes 0",
        Above("drops", 0),
        paper={"drops": {"Figure 3 (§6.1), full − no paragraph": round(_FULL - _NO_PARAGRAPH, 2)}},
        # the only ablated bar the text quotes; the no-question and options-only bars are not in it
        source="Figure 3 as quoted in §6.1: full input 35.31, no paragraph 28.92 (the other bars are not quoted)",
        null={"drops": {"an ablation that changes nothing": _NO_DIFF}},
        null_what="an ablation that removes nothing the model uses: 0 with the noise of 651 paired questions"),
    ClaimSpec(
        "paragraph-matters-more",
        "Ablating the question costs less than ablating the paragraph.",
        "paired 95% interval of no-question minus no-paragraph lies above 0 (no verdict if it includes 0)",
        Above("diff", 0),
        paper={"diff": STATED_UP},
        source="§6.1 'Ablating question causes a relatively smaller performance drop as compared with the "
               "paragraph'; the no-question bar of Figure 3 is not quoted, so the effect is not sized",
        sized=False,
        null={"diff": _NO_DIFF},
        null_what="two ablations that cost the same: 0 with the noise of 651 paired questions"),
    ClaimSpec(
        "source-only-lower",
        "A model trained only on another dataset is clearly worse on LogiQA.",
        "paired 95% interval of LogiQA-only minus ReClor-only lies above 0 (no verdict if it includes 0)",
        Above("diff", 0),
        paper={"diff": {f"Table 4, RoBERTa_LogiQA − {row}, Test": round(_published("Table 4", "RoBERTa_LogiQA", "Test")
                                                                       - _published("Table 4", row, "Test"), 2)
                        for s, row in _SOURCES.items()}},
        source="Table 4, Test: RoBERTa_LogiQA (35.31) minus RoBERTa_RACE (26.86) and RoBERTa_COSMOS (28.73); our "
               "source is ReClor, the closest rows are these two",
        null={"diff": _NO_DIFF},
        null_what="a source-only model as good as LogiQA-only: 0 with the noise of 651 paired questions"),
    ClaimSpec(
        "transfer-no-gain",
        "Further fine-tuning on LogiQA does not beat training on LogiQA alone.",
        f"TOST (no gain): the 90% paired interval of ReClor → LogiQA minus LogiQA only lies below +{_CLOSE:g}",
        Equivalent("diff", 0.0, _CLOSE, _CLOSE_WHY + "; a gain below it is not 'outperforming'", side="upper"),
        paper={"diff": {f"Table 4, {row} → LogiQA − RoBERTa_LogiQA, Test":
                        round(_published("Table 4", f"{row} → LogiQA", "Test")
                              - _published("Table 4", "RoBERTa_LogiQA", "Test"), 2) for s, row in _SOURCES.items()}},
        source="Table 4, Test: RoBERTa_RACE → LogiQA (35.07) and RoBERTa_COSMOS → LogiQA (35.11) minus "
               "RoBERTa_LogiQA (35.31)",
        null={"diff": {"a transfer that helps": zero_null(_N_TEST, center=8.0, sd=40.0)}},
        null_what="a transfer that clearly helps: +8 points with the noise of 651 paired questions"),
    ClaimSpec(
        "length-not-negative",
        "Accuracy does not fall as questions get longer.",
        f"TOST (no loss): the 90% interval of the fine-tuned encoder's accuracy on the longest length bin minus the "
        f"shortest lies above −{_CLOSE:g}",
        Equivalent("diff", 0.0, _CLOSE, "§6.3: 'the model performances are not negatively associated with the input "
                                        "size'; " + _CLOSE_WHY + ": a loss smaller than that is not a fall",
                   side="lower"),
        paper={"diff": round(_published("Table 5", "RoBERTa", TABLE5_BINS[-1])
                             - _published("Table 5", "RoBERTa", TABLE5_BINS[0]), 2)},
        source="Table 5, RoBERTa: (200,+∞) 40.38 minus (0,100] 31.31",
        null={"diff": zero_null(120, center=-15.0, sd=70.0)},
        null_what="a model that falls 15 points on long questions, with the noise of two bins of ~60 questions"),
    ClaimSpec(
        "models-overmatch",
        "Every model picks the best-overlap option more often than the gold answers are it.",
        "for each trained system, the paired 95% interval of its overlap ratio minus the gold answers' "
        "lies above 0; no verdict if any includes 0",
        Above("over", 0),
        paper={"over": {f"Table 6, {r} − Gold-standard, Overlap Ratio":
                        round(_published("Table 6", r, "Overlap Ratio") - _GOLD_OVERLAP, 2)
                        for r in (*_READERS, *_PRETRAINED)}},
        source="Table 6, Overlap Ratio of the three readers, BERT and RoBERTa minus Gold-standard (28.37)",
        null={"over": {"a guesser": _NO_DIFF}},
        null_what="a guesser: its overlap ratio is the gold's on average (0) with the noise of 651 paired questions"),
    ClaimSpec(
        "pretrained-least-overlap",
        "The pre-trained model relies least on lexical overlap.",
        "for each reader, the paired 95% interval of its overlap ratio minus the fine-tuned encoder's "
        "lies above 0; no verdict if any includes 0",
        Above("more", 0),
        paper={"more": {f"Table 6, {r} − RoBERTa, Overlap Ratio":
                        round(_published("Table 6", r, "Overlap Ratio") - _ROBERTA_OVERLAP, 2) for r in _READERS}},
        source="Table 6, Overlap Ratio of the three readers minus RoBERTa (32.08)",
        null={"more": {"a reader like the encoder": _NO_DIFF}},
        null_what="readers that overlap as much as the encoder: 0 with the noise of 651 paired questions"),
    ClaimSpec(
        "categorical-easiest",
        "Categorical reasoning is the easiest type; the other four are much harder.",
        "on the LogiQA 2.0 proxy labels, the 95% interval of the fine-tuned encoder on categorical questions "
        "lies above every other type's (below one: does not hold; overlapping: no verdict)",
        Higher("categorical", "others"),
        paper={"categorical": _TABLE7["categorical"],
               "others": {t: v for t, v in _TABLE7.items() if t != "categorical"}},
        source="Table 7, RoBERTa by reasoning type",
        null={"categorical": chance_null(200), "others": {t: chance_null(150) for t in _TABLE7 if t != "categorical"}},
        null_what="a guesser: 25% on every type, with the noise of ~150-200 questions per type"),
]

#: Checks of ours (none: every check of this chapter is one of the paper's claims).
CHECKS: list = []
