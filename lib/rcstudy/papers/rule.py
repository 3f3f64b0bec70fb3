"""Published numbers of RULE (Kawabata & Sugawara, EMNLP 2023).

The paper's text gives only the numbers its prose quotes: Tables 1, 2, 3 and 5 themselves are
not in it, so every other cell of those tables is ``None`` (printed "n/a"). Two human scores
are derived from the text (the best model's score plus the stated gap) and say so in ``note``.
"""

from ..claims import AllOf, ClaimSpec, Compare
from ..data.reclor import QUESTION_TYPES
from ..stats import Interval
from . import Citation, Published, lookup

CITATION = Citation(
    key="kawabata2023rule",
    title="Evaluating the Rationale Understanding of Critical Reasoning in Logical Reading Comprehension",
    authors="Akira Kawabata and Saku Sugawara",
    venue="Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing (EMNLP)",
    year=2023,
    url="https://aclanthology.org/2023.emnlp-main.8",
)

P = "rule"
T2 = "Table 2"
T2_COLUMNS = ("MainQ", "SubQ", "Selective", "Eliminative", "Consistency", "MainQ-wise SubQ")
#: Table 5's variants: which rationales are appended to the main question.
T5_COLUMNS = ("no rationale", "+ selective", "+ eliminative", "+ selective and eliminative")
NOT_IN_TEXT = "not in the source text"


def _row(table: str, row: str, values: dict, notes: dict | None = None, columns=T2_COLUMNS) -> list[Published]:
    notes = notes or {}
    return [Published(P, table, row, c, values.get(c), notes.get(c, "" if c in values else NOT_IN_TEXT))
            for c in columns]


NUMBERS: list[Published] = [
    # §3.2–3.5: the collection pipeline and the released dataset
    Published(P, "§3", "ReClor train questions used", "count", 1200, "§3.2 rationale writing"),
    Published(P, "§3", "rationales written", "count", 4800, "§3.2"),
    Published(P, "§3", "rationales validated", "count", 3828, "§3.2 rationale validation"),
    Published(P, "§3", "subquestions constructed", "count", 3824, "§3.3"),
    Published(P, "§3", "main questions", "count", 943, "§3.4 human validation"),
    Published(P, "§3", "subquestions", "count", 3003, "§3.4 human validation"),
    Published(P, "§3", "subquestions whose answer is None", "count", 222, "§3.5"),
    Published(P, "§3", "subquestions whose answer is None (%)", "count", 7.4, "§3.5 (222/3,003)"),
    # Table 1 (dataset statistics) is not in the text; only its direction is ("subquestions have
    # longer questions and answer options").
    *[Published(P, "Table 1", f"{part} {what}", "length", None, "Table 1 is " + NOT_IN_TEXT)
      for part in ("main question", "subquestion") for what in ("question", "option")],
    # Table 2: the cells the prose of §4.2 quotes
    Published(P, T2, "Chance", "SubQ", 25.0, "§4.2: 'the chance rate (25.0%)'"),
    *_row(T2, "DeBERTa-v3 large, fine-tuned", {}),
    *_row(T2, "UnifiedQA-v2 base, fine-tuned", {}),
    *_row(T2, "UnifiedQA-v2 large, fine-tuned", {}),
    *_row(T2, "UnifiedQA-v2 3B, fine-tuned", {}),
    *_row(T2, "LLaMA 2 70B, five-shot ReClor exemplars", {"MainQ": 80.3, "Selective": 90.0},
          {"MainQ": "best MainQ accuracy (§4.2)", "Selective": "best Selective SubQ accuracy (§4.2)"}),
    *_row(T2, "Flan-UL2 20B, zero-shot", {"SubQ": 65.7, "Eliminative": 59.1},
          {"SubQ": "best SubQ accuracy (§4.2)", "Eliminative": "best Eliminative SubQ accuracy (§4.2)"}),
    *_row(T2, "InstructGPT, five-shot RULE exemplars", {"SubQ": 70.1},
          {"SubQ": "highest SubQ accuracy with subquestion exemplars (§4.2)"}),
    *_row(T2, "InstructGPT (setting not stated)", {"Consistency": 18.2},
          {"Consistency": "best model consistency (§4.2)"}),
    *_row(T2, "best model (not named)", {"MainQ-wise SubQ": 64.3},
          {"MainQ-wise SubQ": "'the best model answers only 64.3% of the subquestions per one main question'"}),
    *_row(T2, "Human", {"MainQ": 91.5, "SubQ": 82.6, "Eliminative": 78.9, "Consistency": 52.9,
                        "MainQ-wise SubQ": 81.5},
          {"MainQ": "derived: 80.3 + the stated gap 11.2 (§4.2)", "SubQ": "derived: 65.7 + the stated gap 16.9 (§4.2)",
           "Selective": "'close to' 90.0 (§4.2); " + NOT_IN_TEXT}),
    # §4.2 "None of the above choices" (Table 3 itself is not in the text)
    Published(P, "§4.2", "InstructGPT, five-shot RULE exemplars", "None offered", 62.7),
    Published(P, "§4.2", "InstructGPT, five-shot RULE exemplars", "None is the answer", 32.0),
    Published(P, "§4.2", "InstructGPT, five-shot RULE exemplars", "with a None-answer exemplar", 40.9),
    Published(P, "§4.2", "InstructGPT, five-shot RULE exemplars", "without", 13.7),
    # §5 rationale alignment (InstructGPT, five-shot, mean of five prompts)
    Published(P, "§5", "InstructGPT, five-shot (mean of 5 prompts)", "correct options", 89.7),
    Published(P, "§5", "InstructGPT, five-shot (mean of 5 prompts)", "incorrect options", 31.5),
    # §5 human-written vs model-written rationales, 50 manual comparisons
    Published(P, "§5 rationale quality", "human-written rationale better", "count", 35),
    Published(P, "§5 rationale quality", "model-written rationale better", "count", 15),
    # Table 5: rationales appended to the main questions (five-shot InstructGPT, MainQ accuracy).
    # Only the direction is in the text (§5): better with the selective rationale, worse with the
    # eliminative ones, "even if it is provided with the selective rationale".
    *_row("Table 5", "InstructGPT, five-shot", {}, columns=T5_COLUMNS),
    # Appendix M (context-ablated setting) and Appendix L (accuracy by ReClor question type) are
    # referenced (§5) but not in the text; which models they cover is not stated either.
    *_row("Appendix M", "context-ablated setting (models not stated)", {}),
    *[Published(P, "Appendix L", t, "SubQ", None, NOT_IN_TEXT) for t in QUESTION_TYPES],
    # Table 4: reasoning types of 100 random subquestions / 100 InstructGPT errors (manual annotation)
    *[Published(P, "Table 4", row, col, v) for row, vals in {
        "Contextual": (37, 47, 28, 22, 65, 69),
        "External": (22, 20, 13, 11, 35, 31),
        "Total": (59, 67, 41, 33, 100, 100),
    }.items() for col, v in zip(("Direct (random)", "Direct (errors)", "Indirect (random)", "Indirect (errors)",
                                 "Total (random)", "Total (errors)"), vals)],
]


def _published(table: str, row: str, column: str) -> float:
    return lookup(NUMBERS, table, row, column)


_CHANCE = _published(T2, "Chance", "SubQ")
_NONE_ROW = "InstructGPT, five-shot RULE exemplars"
_ALIGN_ROW = "InstructGPT, five-shot (mean of 5 prompts)"
#: Question types with fewer subquestions are pooled in the chi-square test of no-trend-by-type.
TYPE_MIN_SUBQUESTIONS = 30
#: Claims whose direction the text states without a number: +1 stands for "in the stated direction".
_STATED = 1.0

CLAIMS = [
    ClaimSpec(
        "eliminative-below-selective",
        "Models answer eliminative subquestions worse than selective ones.",
        "Selective − eliminative SubQ accuracy above 0 for every prompted LM setting (its subquestions pooled; "
        "95% two-group bootstrap interval).",
        Compare("gaps", ">", 0),  # Selective − Eliminative, per setting
        # the best Selective (LLaMA 2 70B) and the best Eliminative (Flan-UL2) accuracy of §4.2
        paper={"gaps": {"best models": _published(T2, "LLaMA 2 70B, five-shot ReClor exemplars", "Selective")
                        - _published(T2, "Flan-UL2 20B, zero-shot", "Eliminative")}}),
    ClaimSpec(
        "consistency-far-below-mainq",
        "Consistency (main question and all subquestions right) is far below MainQ accuracy.",
        "Consistency at most half of MainQ accuracy for every fine-tuned model and every prompted setting "
        "(main questions pooled over seeds and splits; 95% bootstrap interval over main questions).",
        Compare("excess", "<=", 0),  # Consistency − MainQ / 2, per system
        # the best consistency of any model against half the best MainQ accuracy (§4.2)
        paper={"excess": {"best models": _published(T2, "InstructGPT (setting not stated)", "Consistency")
                          - _published(T2, "LLaMA 2 70B, five-shot ReClor exemplars", "MainQ") / 2}}),
    ClaimSpec(
        "finetuned-subq-near-chance",
        "Fine-tuned models' SubQ accuracy does not significantly exceed chance ({chance:.1f}%).",
        "The 95% bootstrap interval of every ReClor-trained model's SubQ accuracy reaches down to chance.",
        Compare("subq.low", "<=", "chance"),
        # Table 2's fine-tuned rows are not in the text; §4.2 states they do not exceed chance
        paper={"subq": {"fine-tuned models (§4.2)": Interval.point(_CHANCE)}, "chance": _CHANCE}),
    ClaimSpec(
        "none-exemplar-helps",
        "None-answer subquestions are answered better when the prompt has a None-answer exemplar "
        "({with_exemplar:.1f}% vs {without_exemplar:.1f}%).",
        "Accuracy on None-answer subquestions, batches with vs without such an exemplar.",
        Compare("with_exemplar", ">", "without_exemplar"),
        paper={"with_exemplar": _published("§4.2", _NONE_ROW, "with a None-answer exemplar"),
               "without_exemplar": _published("§4.2", _NONE_ROW, "without")}),
    ClaimSpec(
        "alignment-gap",
        "In rationale alignment, models match rationales to correct options far better than to incorrect "
        "ones ({correct:.1f}% vs {incorrect:.1f}%).",
        "Zero-shot alignment accuracy on correct minus incorrect options above 0 (95% two-group bootstrap "
        "interval).",
        Compare("gap", ">", 0),
        paper={"gap": _published("§5", _ALIGN_ROW, "correct options") - _published("§5", _ALIGN_ROW, "incorrect options"),
               "correct": _published("§5", _ALIGN_ROW, "correct options"),
               "incorrect": _published("§5", _ALIGN_ROW, "incorrect options")}),
    ClaimSpec(
        "subq-exemplars-no-help-small",
        "In-context subquestion exemplars do not help smaller models (Vicuna 7B and 13B).",
        "SubQ accuracy with RULE exemplars is not above that with ReClor exemplars (same shots, scoring).",
        Compare("gain", "<=", 0),  # SubQ with RULE − with ReClor exemplars, per pair of settings
        paper={"gain": {"Vicuna 7B and 13B (§4.2, no number given)": 0.0}}),
    ClaimSpec(
        "rationales-help-main",
        "Appending the selective rationale to a main question improves accuracy; appending the eliminative "
        "rationales degrades it, even together with the selective one (Table 5).",
        "MainQ accuracy with the context: + selective above no rationale, + eliminative and + selective and "
        "eliminative below it, for every prompted setting (same main questions in every variant; 95% paired "
        "bootstrap intervals).",
        # per setting: + selective − no rationale, and no rationale − the better of the two eliminative variants
        AllOf((Compare("selective_gain", ">", 0), Compare("eliminative_loss", ">", 0))),
        # Table 5 is not in the text, only its direction (§5)
        paper={"selective_gain": {"InstructGPT, five-shot": _STATED},
               "eliminative_loss": {"InstructGPT, five-shot": _STATED}},
        sized=False),
    ClaimSpec(
        "subquestions-need-context",
        "Most rationales rest on facts stated in the context (Table 4: {contextual:.0f} of {total:.0f} sampled "
        "rationales are contextual), so answering the subquestions needs the context (our reading; Appendix M is "
        "not in the source text).",
        "SubQ accuracy is lower without the context, for the encoder and every prompted setting run both ways "
        "(the same subquestions; 95% paired bootstrap intervals).",
        Compare("drop", ">", 0),  # SubQ with − without the context, per system
        # our reading of Table 4: most rationales are contextual (Appendix M's numbers are not in the text)
        paper={"drop": {"most rationales contextual": _published("Table 4", "Contextual", "Total (random)")
                        - _published("Table 4", "External", "Total (random)")},
               "contextual": _published("Table 4", "Contextual", "Total (random)"),
               "total": _published("Table 4", "Total", "Total (random)")},
        sized=False),  # a count of rationales, not a drop in SubQ accuracy
    ClaimSpec(
        "no-trend-by-type",
        "Subquestion accuracy shows no remarkable trend across ReClor's question types (Appendix L).",
        "Chi-square test of independence between the encoder's subquestion correctness (first seed) and the "
        f"keyword type of the main question (types with under {TYPE_MIN_SUBQUESTIONS} subquestions pooled): "
        "holds if p ≥ 0.05. An encoder near chance passes it easily.",
        Compare("p", ">=", 0.05),
        # Appendix L reports no remarkable trend and no test: p = 1 stands for "no trend at all"
        paper={"p": 1.0}),
]
