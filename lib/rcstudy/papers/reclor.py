"""Published numbers of ReClor (Yu et al., ICLR 2020), as printed in the paper.

Model names keep the paper's subscripts as ``_BASE``/``_LARGE``. Table 7 rows are named
``"<model> (<inputs>)"`` plus ``" +RACE"`` for the rows first fine-tuned on RACE; its Test,
Test-E and Test-H columns are on the hidden test set (1,000 items; EASY 440, HARD 560).
Known problems of the printed tables are kept as printed and explained in ``note``:
Table 6 and Table 27 disagree on the GPT and GPT-2 intersection sizes (238 vs 245).
"""

from ..claims import Above, ClaimSpec, Equivalent, chance_null, zero_null
from ..stats import Interval
from . import Citation, Published, lookup

CITATION = Citation(
    key="yu2020reclor",
    title="ReClor: A Reading Comprehension Dataset Requiring Logical Reasoning",
    authors="Weihao Yu and Zihang Jiang and Yanfei Dong and Jiashi Feng",
    venue="International Conference on Learning Representations (ICLR)",
    year=2020,
    url="https://openreview.net/forum?id=HJgJtT4tvB",
)

P = "reclor"
NUMBERS: list[Published] = []


def _add(table: str, rows: dict, columns: tuple[str, ...], note: str = "", notes: dict | None = None) -> None:
    for row, values in rows.items():
        for column, value in zip(columns, values):
            NUMBERS.append(Published(P, table, row, column, value, (notes or {}).get((row, column), note)))


# §3.2: split sizes.
_add("§3.2", {"train": (4638,), "val": (500,), "test": (1000,)}, ("items",))

# Table 2: statistics of several multiple-choice MRC datasets (the tokenizer is not stated).
_add("Table 2", {
    "# of options": (4, 3, 4, 4, 4),
    "# of context": (6138, 6444, 660, None, 27933),
    "# of questions": (6138, 10197, 2640, 7787, 97687),
    "Vocab size": (26576, 13037, 8000, 6329, 136629),
    "Context Len": (73.6, 85.9, 210.1, None, 321.9),
    "Question Len": (17.0, 8.6, 7.8, 20.5, 10.0),
    "Option Len": (20.6, 5.3, 3.4, 4.2, 5.3),
}, ("ReClor", "DREAM", "MCTest", "ARC", "RACE"), notes={
    ("# of context", "ARC"): "printed as '-' (ARC has no context)",
    ("Context Len", "ARC"): "printed as '_' (ARC has no context)",
})

# Table 3: percentage of each question type, annotated on the test set only.
_add("Table 3", {
    "Necessary Assumptions": (11.4,), "Sufficient Assumptions": (3.0,), "Strengthen": (9.4,),
    "Weaken": (11.3,), "Evaluation": (1.3,), "Implication": (4.6,), "Conclusion/Main Point": (3.6,),
    "Most Strongly Supported": (5.6,), "Explain or Resolve": (8.4,), "Principle": (6.5,), "Dispute": (3.0,),
    "Technique": (3.6,), "Role": (3.2,), "Identify a Flaw": (11.7,), "Match Flaws": (3.1,),
    "Match the Structure": (3.0,), "Others": (7.3,),
}, ("Test (%)",), note="percentage of the 1,000 test questions")

# Table 5: top 10 tokens by p(right | token) on train, BERT-base uncased WordPiece, >= 20 occurrences.
_add("Table 5", {
    "motive": (65.2, 23), "##ce": (62.5, 24), "thereby": (56.0, 25), "consequence": (52.4, 21),
    "warm": (52.4, 21), "interfere": (52.2, 23), "contributes": (52.2, 23), "manufacture": (52.0, 25),
    "included": (52.0, 25), "preferences": (52.0, 25),
}, ("Score (%)", "Freq"), note="Score = 100 · p(right | token) on the training set")

# §3.3: mean option length on the training set (unit not stated).
_add("§3.3", {"right options": (23.06,), "wrong options": (21.82,)}, ("mean length",),
     note="'around 21.82' (wrong) and 'an average length of 23.06' (right); unit not stated")

# Table 6: option-only models, mean over 4 seeds; Number = items right under all 4 seeds (test).
_add("Table 6", {
    "Chance": (25.0, 25.0, 3.9), "GPT": (45.8, 42.2, 238), "GPT-2": (46.8, 42.6, 245),
    "BERT_BASE": (47.2, 43.2, 234), "XLNet_BASE": (47.5, 43.2, 225), "RoBERTa_BASE": (48.8, 41.7, 200),
    "Union": (None, None, 440),
}, ("Val", "Test", "Number"), notes={
    ("GPT", "Number"): "Table 27's diagonal gives 245 (GPT and GPT-2 appear swapped between the tables)",
    ("GPT-2", "Number"): "Table 27's diagonal gives 238 (GPT and GPT-2 appear swapped between the tables)",
    ("Union", "Number"): "the EASY set of the test set; the other 560 test items are HARD",
})

# Table 27 (Appendix D): overlap of the per-model intersections over 4 seeds (upper triangle).
_T27 = ("GPT", "GPT-2", "BERT_BASE", "XLNet_BASE", "RoBERTa_BASE")
_add("Table 27", {
    "GPT": (245, 164, 152, 142, 116),
    "GPT-2": (None, 238, 151, 144, 123),
    "BERT_BASE": (None, None, 234, 138, 124),
    "XLNet_BASE": (None, None, None, 225, 125),
    "RoBERTa_BASE": (None, None, None, None, 200),
}, _T27, note="upper triangle only; the diagonal is each model's own intersection size")

# Table 7: accuracy (%) of models and humans. Test, Test-E, Test-H are on the hidden test set.
_add("Table 7", {
    "Chance (C, Q, A)": (25.0, 25.0, 25.0, 25.0),
    "fastText (C, Q, A)": (32.0, 30.8, 40.2, 23.4),
    "Bi-LSTM (C, Q, A)": (27.8, 27.0, 26.4, 27.5),
    "GPT (C, Q, A)": (47.6, 45.4, 73.0, 23.8),
    "GPT-2 (C, Q, A)": (52.6, 47.2, 73.0, 27.0),
    "BERT_BASE (C, Q, A)": (54.6, 47.3, 71.6, 28.2),
    "BERT_BASE (C, Q, A) +RACE": (55.2, 49.5, 68.9, 34.3),
    "BERT_LARGE (A)": (46.4, 42.4, 69.3, 21.3),
    "BERT_LARGE (Q, A)": (48.8, 43.4, 72.7, 20.4),
    "BERT_LARGE (C, Q, A)": (53.8, 49.8, 72.0, 32.3),
    "BERT_LARGE (C, Q, A) +RACE": (55.6, 54.5, 73.9, 39.3),
    "XLNet_BASE (C, Q, A)": (55.8, 50.4, 75.2, 30.9),
    "XLNet_BASE (C, Q, A) +RACE": (62.0, 55.5, 76.1, 39.3),
    "XLNet_LARGE (A)": (45.0, 42.9, 66.1, 24.6),
    "XLNet_LARGE (Q, A)": (47.8, 43.4, 68.6, 23.6),
    "XLNet_LARGE (C, Q, A)": (62.0, 56.0, 75.7, 40.5),
    "XLNet_LARGE (C, Q, A) +RACE": (70.8, 62.4, 77.7, 50.4),
    "RoBERTa_BASE (C, Q, A)": (55.0, 48.5, 71.1, 30.7),
    "RoBERTa_BASE (C, Q, A) +RACE": (56.8, 53.0, 72.5, 37.7),
    "RoBERTa_LARGE (A)": (48.8, 43.2, 69.5, 22.5),
    "RoBERTa_LARGE (Q, A)": (49.8, 45.8, 72.0, 25.2),
    "RoBERTa_LARGE (C, Q, A)": (62.6, 55.6, 75.5, 40.0),
    "RoBERTa_LARGE (C, Q, A) +RACE": (68.0, 65.1, 78.9, 54.3),
    "Graduate Students (C, Q, A)": (None, 63.0, 57.1, 67.2),
    "Ceiling Performance (C, Q, A)": (None, 100.0, 100.0, 100.0),
}, ("Val", "Test", "Test-E", "Test-H"), notes={
    ("fastText (C, Q, A)", "Val"): "the Input cell is blank in the paper; (C, Q, A) is inferred",
    ("Bi-LSTM (C, Q, A)", "Val"): "the Input cell is garbled in the paper; (C, Q, A) is inferred",
    ("GPT-2 (C, Q, A)", "Val"): "the Input cell is blank in the paper; (C, Q, A) is inferred",
    ("XLNet_BASE (C, Q, A)", "Test-H"): "the official README prints 32.9",
    ("Graduate Students (C, Q, A)", "Test"): "100 test questions answered by 10 graduate students",
})

# Table 9: fine-tuning hyperparameters (Adam betas split into two rows).
_T9 = ("GPT", "GPT-2", "BERT_BASE", "BERT_LARGE", "XLNet_BASE", "XLNet_LARGE", "RoBERTa_BASE", "RoBERTa_LARGE")
_add("Table 9", {
    "Learning Rate": (6.25e-5, 6.25e-5, 2e-5, 2e-5, 2e-5, 2e-5, 1e-5, 1e-5),
    "Batch Size": (24,) * 8,
    "Max Seq Length": (256,) * 8,
    "Number of Epochs": (10,) * 8,
    "Warm-up Proportion": (0.1,) * 8,
    "Weight Decay": (0.01, 0.01, 0.0, 0.0, 0.01, 0.01, 0.01, 0.01),
    "Adam Epsilon": (1e-8, 1e-8, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6),
    "Adam Beta1": (0.9,) * 8,
    "Adam Beta2": (0.999,) * 6 + (0.98, 0.98),
}, _T9, note="learning-rate decay: linear; gradient clipping: none")


def _published(table: str, row: str, column: str) -> float:
    return lookup(NUMBERS, table, row, column)


def _t7(row: str, column: str = "Val") -> float:
    return _published("Table 7", row, column)


_CHANCE = _t7("Chance (C, Q, A)")
_TABLE5 = [n.row for n in NUMBERS if n.table == "Table 5" and n.column == "Freq"]
_TABLE6 = ("GPT", "GPT-2", "BERT_BASE", "XLNet_BASE", "RoBERTa_BASE")
_LARGE = ("BERT_LARGE", "XLNet_LARGE", "RoBERTa_LARGE")
_TEST_ITEMS, _EASY_ITEMS = _published("§3.2", "test", "items"), _published("Table 6", "Union", "Number")


def _table7_gap() -> float:
    """Largest |Test − (EASY share · Test-E + HARD share · Test-H)| over Table 7's model rows."""
    share = _EASY_ITEMS / _TEST_ITEMS
    rows = {n.row for n in NUMBERS if n.table == "Table 7"} - {"Graduate Students (C, Q, A)",
                                                                "Ceiling Performance (C, Q, A)"}
    return max(abs(share * _t7(r, "Test-E") + (1 - share) * _t7(r, "Test-H") - _t7(r, "Test")) for r in rows)


_RIGHT, _WRONG = (_published("§3.3", r, "mean length") for r in ("right options", "wrong options"))

#: Validation questions: the n of every null below (the chapter's intervals are over them).
_VAL = int(_published("§3.2", "val", "items"))
_NULL_CHANCE = chance_null(_VAL)  # accuracy of a guesser on the 500 val questions, with its noise
_NO_DIFF = zero_null(_VAL)  # a difference of two guessers' accuracies on the same 500 questions
_CQA = ("GPT", "GPT-2", "BERT_BASE", "BERT_LARGE", "XLNet_BASE", "XLNet_LARGE", "RoBERTa_BASE", "RoBERTa_LARGE")
#: Table 7, (C, Q, A) rows without RACE whose HARD accuracy §4.4 calls "around 30%" (XLNet_LARGE's
#: 40.5 and RoBERTa_LARGE's 40.0 are not around 30, so the sentence does not cover them).
_AROUND_30 = ("GPT", "GPT-2", "BERT_BASE", "BERT_LARGE", "XLNet_BASE", "RoBERTa_BASE")
_HARD_30 = {f"Table 7, {m} (C, Q, A), Test-H": _t7(f"{m} (C, Q, A)", "Test-H") for m in _AROUND_30}
_HARD_MARGIN = max(abs(v - 30) for v in _HARD_30.values())  # 6.2 (GPT's 23.8)
#: The smallest gain §4.4 calls a "significant boost": BERT_LARGE's (C, Q, A) − (Q, A) = 5.0 (val).
_BOOST = round(_t7("BERT_LARGE (C, Q, A)") - _t7("BERT_LARGE (Q, A)"), 2)

#: The paper's claims the chapter checks. "The headline model" is the first of the chapter's
#: ``main_models``; accuracies are per question (the share of seeds right) on val, with 95%
#: bootstrap intervals over questions (val-EASY/val-HARD from our Eq. 1).
CLAIMS = [
    ClaimSpec(
        "length-bias",
        "Right options are longer than wrong ones on train ({right:g} vs {wrong:g}).",
        "the 95% bootstrap interval (over training questions) of mean WordPiece length of the right option minus "
        "that of the wrong ones lies above 0",
        Above("diff", 0),
        paper={"diff": round(_RIGHT - _WRONG, 2), "right": _RIGHT, "wrong": _WRONG},
        source="§3.3: 'around 21.82' (wrong) and 'an average length of 23.06' (right), training set",
        null={"diff": zero_null(int(_published("§3.2", "train", "items")), sd=10.0)},
        null_what="shuffled right/wrong labels: a difference of 0 with the noise of 4,638 questions (sd 10 tokens)",
        needs="an interval of right − wrong length over training questions (the chapter passes the two means)"),
    ClaimSpec(
        "options-only",
        "Models trained on the options alone score above chance (Table 6: {low:g}-{high:g}% on val).",
        "the 95% bootstrap interval of every pretrained option-only model's val accuracy minus chance (mean over "
        "seeds per question) lies above 0",
        Above("margins", 0),
        paper={"margins": {f"Table 6, {m}, Val": round(_published("Table 6", m, "Val") - _CHANCE, 2) for m in _TABLE6},
               "low": min(_published("Table 6", m, "Val") for m in _TABLE6),
               "high": max(_published("Table 6", m, "Val") for m in _TABLE6)},
        source="Table 6, Val column, rows GPT, GPT-2, BERT_BASE, XLNet_BASE, RoBERTa_BASE, minus Chance (25.0)",
        null={"margins": {"a guesser": _NO_DIFF}},
        null_what="an option-only model that guesses: accuracy − chance of 0 with the noise of 500 val questions"),
    ClaimSpec(
        "fasttext",
        "fastText beats chance: word correlations help (Table 7: {val:g} on val).",
        "95% bootstrap interval of fastText (C, Q, A) val accuracy (mean over seeds per question) lies above chance",
        Above("ft", "chance"),
        paper={"ft": _t7("fastText (C, Q, A)"), "chance": _CHANCE, "val": _t7("fastText (C, Q, A)")},
        source="Table 7, fastText and Chance rows, Val column; §4.4 'better than random guess'",
        null={"ft": _NULL_CHANCE, "chance": _CHANCE},
        null_what="a guesser: 25% with the noise of 500 val questions"),
    ClaimSpec(
        "bilstm",
        "The Bi-LSTM hardly learns: it stays near chance (Table 7: {val:g} on val).",
        "TOST: the 90% bootstrap interval of Bi-LSTM (C, Q, A) val accuracy lies within chance ± 5 points",
        Equivalent("bl", "chance", 5.0,
                   "§4.4 contrasts 'The performance of fastText is better than random guess' (32.0 on val, 7.0 "
                   "above chance, Table 7) with 'It is difficult for Bi-LSTM to converge' (27.8, 2.8 above): the "
                   "paper's 'near chance' ends below fastText's 7.0 and includes the Bi-LSTM's 2.8; 5 lies between"),
        paper={"bl": _t7("Bi-LSTM (C, Q, A)"), "chance": _CHANCE, "val": _t7("Bi-LSTM (C, Q, A)")},
        source="Table 7, Bi-LSTM and Chance rows, Val column",
        null={"bl": Interval(_t7("fastText (C, Q, A)") + 3, _t7("fastText (C, Q, A)") - 1, _t7("fastText (C, Q, A)") + 7,
                             0.95, _VAL), "chance": _CHANCE},
        null_what="a system with a clear effect: 35% (10 points above chance) with the noise of 500 val questions",
        needs="a bootstrap interval of the Bi-LSTM's val accuracy over questions (the chapter passes a mean)"),
    ClaimSpec(
        "easy-vs-hard",
        "Full models do much better on EASY than on HARD (BERT_BASE: {easy:g} vs {hard:g}).",
        "the headline model (C, Q, A): the 95% bootstrap interval of val-EASY minus val-HARD accuracy lies above 0",
        Above("gap", 0),
        paper={"gap": {f"Table 7, {m} (C, Q, A), Test-E − Test-H":
                       round(_t7(f"{m} (C, Q, A)", "Test-E") - _t7(f"{m} (C, Q, A)", "Test-H"), 2) for m in _CQA},
               "easy": _t7("BERT_BASE (C, Q, A)", "Test-E"), "hard": _t7("BERT_BASE (C, Q, A)", "Test-H")},
        source="Table 7, Test-E minus Test-H of every pretrained (C, Q, A) row without RACE (§4.4: 'around 75%' "
               "on EASY, 'around 30%' on HARD)",
        null={"gap": zero_null(_VAL)},
        null_what="a guesser: EASY − HARD of 0 with the noise of two groups of the 500 val questions"),
    ClaimSpec(
        "hard-near-chance",
        "On HARD, pretrained models without RACE score only around 30% (Table 7: {low:g}-{high:g} for GPT, GPT-2, "
        "BERT and the base XLNet and RoBERTa).",
        "the headline model (C, Q, A): TOST, the 90% bootstrap interval of its val-HARD accuracy lies within "
        f"30 ± {_HARD_MARGIN:g}",
        Equivalent("hard", 30.0, _HARD_MARGIN,
                   "§4.4: 'they perform poorly on HARD set with only around 30% accuracy', said of Table 7 rows from "
                   f"23.8 (GPT) to 32.3 (BERT_LARGE): 'around 30' spans at least ±{_HARD_MARGIN:g}"),
        paper={"hard": _HARD_30, "low": min(_HARD_30.values()), "high": max(_HARD_30.values())},
        source="Table 7, Test-H of the (C, Q, A) rows without RACE of GPT, GPT-2, BERT_BASE, BERT_LARGE, XLNet_BASE, "
               "RoBERTa_BASE",
        null={"hard": Interval(50.0, 44.0, 56.0, 0.95, 280)},
        null_what="a system that is clearly good on HARD: 50% (the RACE-tuned rows' level, §4.4 'around 50%') "
                  "with the noise of ~280 HARD val questions",
        needs="a bootstrap interval of val-HARD accuracy (the chapter passes a mean)"),
    ClaimSpec(
        "question-adds-little",
        "Adding the question to the options brings no significant gain ((Q, A) vs (A)).",
        f"the headline model: TOST, the 90% paired bootstrap interval of (Q, A) minus (A) val accuracy lies below "
        f"+{_BOOST:g}",
        Equivalent("gain", 0.0, _BOOST,
                   "§4.4: '(Q, A) can not bring significant improvement' over (A) (Table 7: +2.4, +2.8, +1.0 for the "
                   "LARGE models), while 'Further adding context causes significant boost', the smallest of which "
                   f"is BERT_LARGE's +{_BOOST:g}: a gain below it is not what the paper calls significant",
                   side="upper"),
        paper={"gain": {f"Table 7, {m} (Q, A) − (A), Val": round(_t7(f"{m} (Q, A)") - _t7(f"{m} (A)"), 2)
                        for m in _LARGE}},
        source="Table 7, Val column, (A) and (Q, A) rows of BERT_LARGE, XLNet_LARGE, RoBERTa_LARGE",
        null={"gain": {"a system the question helps": Interval(12.0, 8.0, 16.0, 0.95, _VAL)}},
        null_what="a system the question clearly helps: +12 points with the noise of a paired difference on 500 "
                  "questions"),
    ClaimSpec(
        "context-adds-a-lot",
        "Adding the context gives a significant boost ((C, Q, A) vs (Q, A)).",
        "the headline model: the 95% paired bootstrap interval of (C, Q, A) minus (Q, A) val accuracy lies above 0",
        Above("gain", 0),
        # rounded as printed: BERT_LARGE's 53.8 − 48.8 is 5.0, not 4.999… in binary; every row is kept
        paper={"gain": {f"Table 7, {m} (C, Q, A) − (Q, A), Val": round(_t7(f"{m} (C, Q, A)") - _t7(f"{m} (Q, A)"), 2)
                        for m in _LARGE}},
        source="Table 7, Val column, (Q, A) and (C, Q, A) rows of BERT_LARGE (+5.0), XLNet_LARGE (+14.2), "
               "RoBERTa_LARGE (+12.8)",
        null={"gain": {"a guesser": _NO_DIFF}},
        null_what="a system the context does not help: 0 with the noise of a paired difference on 500 questions"),
]

#: Checks of ours (not the paper's claims; judged and shown, not counted).
CHECKS = [
    ClaimSpec(
        "table5-reproduced",
        "Our Table 5 (top tokens by p(right | token) on train) is the paper's ({tokens}, ...).",
        "our top 10 tokens by p(right | token) on train equal the paper's, with the same scores and counts (a data "
        "check: the paper's claim that such tokens bias the options would need their scores on held-out questions, "
        "since the top 10 of thousands of tokens score high by chance alone)",
        Equivalent("mismatches", 0, 0.5, "exact reproduction: no token may differ", side="upper"),
        paper={"mismatches": 0, "tokens": ", ".join(f"'{t}'" for t in _TABLE5[:3])},
        source="Table 5",
        null={"mismatches": 10},
        null_what="shuffled labels: none of the paper's 10 tokens comes back with its score and count",
        exact=True),
    ClaimSpec(
        "lengths-reproduced",
        "Our mean option lengths on train are the paper's ({right:g} right, {wrong:g} wrong).",
        "each of our two mean WordPiece lengths is within 0.01 of the paper's (a data check)",
        Equivalent("gaps", 0, 0.01, "the paper prints two decimals: a difference below 0.01 is the same number"),
        paper={"gaps": {"right": 0.0, "wrong": 0.0}, "right": _RIGHT, "wrong": _WRONG},
        source="§3.3",
        null={"gaps": {"right": 1.24, "wrong": 0.0}},
        null_what="another tokenizer: the right options' mean off by the paper's whole right − wrong difference",
        exact=True),
    ClaimSpec(
        "table7-arithmetic",
        "EASY and HARD split the test set ({easy:.0f} + {hard:.0f} questions).",
        "Test = (EASY share) · Test-E + (HARD share) · Test-H within 0.05 for every model row of the published "
        "Table 7 (a check of the paper's table, not of our data)",
        Equivalent("gap", 0, 0.051, "Table 7 prints one decimal: a weighted mean rounds to within 0.05 (+ float "
                                    "rounding)", side="upper"),
        paper={"gap": _table7_gap(), "easy": _EASY_ITEMS, "hard": _TEST_ITEMS - _EASY_ITEMS},
        source="Table 7 (every model row), Table 6 (Union: 440 EASY), §3.2 (1,000 test questions)",
        null={"gap": 5.0},
        null_what="a table whose EASY/HARD columns do not split its Test column",
        exact=True),
]
