"""Published numbers of RULE (Kawabata & Sugawara, EMNLP 2023).

The paper's text gives only the numbers its prose quotes: Tables 1, 2, 3 and 5 themselves are
not in it, so every other cell of those tables is ``None`` (printed "n/a"). Two human scores
are derived from the text (the best model's score plus the stated gap) and say so in ``note``.
"""

from ..claims import STATED_UP, AllOf, Above, Below, ClaimSpec, Equivalent, chance_null, zero_null
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

#: The quick profile's samples: the encoder answers 300 main questions (~950 subquestions), the
#: LM 100 (~320 subquestions): the n of the nulls below.
_N_ENC_SUB, _N_LM_MAIN, _N_LM_SUB = 950, 100, 320
#: §4.2: the smallest gap the paper calls large: "lower than the human accuracy by large margins
#: (∆ = 11.2%, 16.9%)". The paper gives no number for its claims of no effect; this bounds them.
_LARGE = 11.2
_LARGE_WHY = ("the paper gives no number for these rows; the smallest gap it calls large is 'lower than the human "
              "accuracy by large margins (∆ = 11.2%, 16.9%)' (§4.2), so a difference within 11.2 points is not a "
              "large one (a bound from the paper's words, not its own test)")
_HUMAN_CONSISTENCY = _published(T2, "Human", "Consistency")

CLAIMS = [
    ClaimSpec(
        "eliminative-below-selective",
        "Models answer eliminative subquestions worse than selective ones.",
        "Selective − eliminative SubQ accuracy above 0 for every prompted LM setting (its subquestions pooled; "
        "95% bootstrap interval resampling main questions, one draw for both kinds; the setting must answer its "
        "subquestions above chance).",
        Above("gaps", 0),  # Selective − Eliminative, per setting
        paper={"gaps": {"§4.2 / §6, stated for LLMs": STATED_UP}},
        source="§6 'LLMs are particularly bad at answering eliminative subquestions'; §4.2 gives the best Selective "
               "(LLaMA 2 70B, 90.0) and the best Eliminative (Flan-UL2, 59.1) of two different models, no "
               "same-model pair: not sized",
        sized=False,
        null={"gaps": {"a guesser": zero_null(_N_LM_SUB, sd=100.0)}},
        null_what="an LM that guesses: 0 with the noise of ~320 subquestions split in two groups"),
    ClaimSpec(
        "consistency-below-human",
        "Models' consistency (the main question and all its subquestions right) is far below humans' "
        "({human:.1f}%; the best model, InstructGPT, {best:.1f}%), although they answer the main questions above "
        "chance.",
        "For every fine-tuned model and every prompted setting that answers its main questions above chance (the "
        "claim's premise: a setting at chance, trivially inconsistent, is set aside and named): the 95% bootstrap "
        "interval (seeds, then main questions, resampled) of consistency lies below the paper's human consistency, "
        "and that of MainQ accuracy above chance.",
        AllOf((Below("consistency", "human"), Above("mainq", "chance"))),
        paper={"consistency": {f"{T2}, InstructGPT (best model consistency, §4.2)":
                               _published(T2, "InstructGPT (setting not stated)", "Consistency")},
               "mainq": {f"{T2}, LLaMA 2 70B five-shot (best MainQ, §4.2)":
                         _published(T2, "LLaMA 2 70B, five-shot ReClor exemplars", "MainQ")},
               "human": _HUMAN_CONSISTENCY, "chance": _CHANCE,
               "best": _published(T2, "InstructGPT (setting not stated)", "Consistency")},
        source="§4.2 / Table 2: human consistency 52.9, the best model consistency 18.2 (InstructGPT), the best MainQ "
               "80.3 (LLaMA 2 70B); chance 25.0",
        null={"consistency": {"a guesser": zero_null(_N_LM_MAIN, sd=6.0, center=0.4)},
              "mainq": {"a guesser": chance_null(_N_LM_MAIN)}, "human": _HUMAN_CONSISTENCY, "chance": _CHANCE},
        null_what="a system that guesses: MainQ 25% and consistency ~0.4% (0.25⁴) on 100 main questions"),
    ClaimSpec(
        "finetuned-subq-near-chance",
        "Fine-tuned models' SubQ accuracy does not significantly exceed chance ({chance:.1f}%).",
        f"TOST (no gain): the 90% bootstrap interval of every ReClor-trained model's SubQ accuracy lies below chance "
        f"+ {_LARGE:g}.",
        Equivalent("subq", "chance", _LARGE, "§4.2 'does not significantly exceed the chance rate (25.0%)'; "
                   + _LARGE_WHY, side="upper"),
        paper={"subq": {"Table 2's fine-tuned rows (not in the text; §4.2: not above chance)": _CHANCE},
               "chance": _CHANCE},
        source="§4.2, Table 2's fine-tuned rows, whose numbers are not in the text: power at the claim itself "
               "(SubQ accuracy at chance)",
        sized=False,
        null={"subq": {"a model that reads the rationales": Interval(50.0, 46.8, 53.2, 0.95, _N_ENC_SUB)},
              "chance": _CHANCE},
        null_what="a fine-tuned model clearly above chance: 50% with the noise of ~950 subquestions"),
    ClaimSpec(
        "none-exemplar-helps",
        "None-answer subquestions are answered better when the prompt has a None-answer exemplar "
        "({with_exemplar:.1f}% vs {without_exemplar:.1f}%).",
        "The 95% two-group bootstrap interval of accuracy on None-answer subquestions, batches with minus without "
        "such an exemplar, lies above 0.",
        Above("diff", 0),
        paper={"diff": round(_published("§4.2", _NONE_ROW, "with a None-answer exemplar")
                             - _published("§4.2", _NONE_ROW, "without"), 2),
               "with_exemplar": _published("§4.2", _NONE_ROW, "with a None-answer exemplar"),
               "without_exemplar": _published("§4.2", _NONE_ROW, "without")},
        source="§4.2, five-shot InstructGPT with RULE exemplars: 40.9% with a None-answer exemplar, 13.7% without "
               "(the paper adds 'to some extent but not significantly')",
        null={"diff": zero_null(60, sd=100.0)},
        null_what="an exemplar that changes nothing: 0 with the noise of ~60 None-answer subquestions in two groups",
        needs="a bootstrap interval of the with − without accuracy over main questions"),
    ClaimSpec(
        "alignment-gap",
        "In rationale alignment, models match rationales to correct options far better than to incorrect "
        "ones ({correct:.1f}% vs {incorrect:.1f}%).",
        "Zero-shot alignment accuracy on correct minus incorrect options above 0 (95% two-group bootstrap "
        "interval).",
        Above("gap", 0),
        paper={"gap": round(_published("§5", _ALIGN_ROW, "correct options")
                            - _published("§5", _ALIGN_ROW, "incorrect options"), 2),
               "correct": _published("§5", _ALIGN_ROW, "correct options"),
               "incorrect": _published("§5", _ALIGN_ROW, "incorrect options")},
        source="§5, InstructGPT five-shot (mean of 5 prompts): 89.7% on correct options, 31.5% on incorrect ones",
        null={"gap": zero_null(_N_LM_SUB, sd=100.0)},
        null_what="an aligner that guesses: 0 with the noise of ~320 items in two groups"),
    ClaimSpec(
        "subq-exemplars-no-help-small",
        "In-context subquestion exemplars do not help smaller models (Vicuna 7B and 13B).",
        f"TOST (no gain): the 90% paired interval of SubQ accuracy with RULE exemplars minus with ReClor exemplars "
        f"(same shots, scoring) lies below +{_LARGE:g}.",
        Equivalent("gain", 0.0, _LARGE, "§4.2 'the in-context learning on subquestions is not helpful for smaller "
                   "models such as Vicuna 7B and 13B'; " + _LARGE_WHY, side="upper"),
        paper={"gain": {"Vicuna 7B and 13B (§4.2, no number given)": 0.0}},
        source="§4.2, Vicuna 7B and 13B: the text gives no number (0 stands for 'not helpful'): power at the claim "
               "itself (no gain)",
        sized=False,
        null={"gain": {"exemplars that help": zero_null(_N_LM_SUB, sd=50.0, center=20.0)}},
        null_what="exemplars that clearly help: +20 points with the noise of ~320 paired subquestions",
        needs="a paired bootstrap interval of the RULE − ReClor exemplar SubQ accuracy over main questions"),
    ClaimSpec(
        "rationales-help-main",
        "Appending the selective rationale to a main question improves accuracy; appending the eliminative "
        "rationales degrades it, even together with the selective one (Table 5).",
        "MainQ accuracy with the context: + selective above no rationale, + eliminative and + selective and "
        "eliminative below it, for every prompted setting (same main questions in every variant; 95% paired "
        "bootstrap intervals).",
        # per setting: + selective − no rationale, and no rationale − the better of the two eliminative variants
        AllOf((Above("selective_gain", 0), Above("eliminative_loss", 0))),
        paper={"selective_gain": {"InstructGPT, five-shot": STATED_UP},
               "eliminative_loss": {"InstructGPT, five-shot": STATED_UP}},
        source="§5 and Table 5 (five-shot InstructGPT); Table 5's numbers are not in the text, only the direction: "
               "not sized",
        sized=False,
        null={"selective_gain": {"a rationale the model ignores": zero_null(_N_LM_MAIN, sd=50.0)},
              "eliminative_loss": {"a rationale the model ignores": zero_null(_N_LM_MAIN, sd=50.0)}},
        null_what="an LM that ignores appended text: 0 with the noise of 100 paired main questions"),
    ClaimSpec(
        "no-trend-by-type",
        "Subquestion accuracy shows no remarkable trend across ReClor's question types (Appendix L).",
        f"TOST: the 90% bootstrap interval of the largest departure of a question type's SubQ accuracy from the "
        f"overall (types with under {TYPE_MIN_SUBQUESTIONS} subquestions pooled) lies below {_LARGE:g} points.",
        Equivalent("spread", 0.0, _LARGE, "§5 'we do not observe any remarkable trends in the subquestion accuracy "
                   "(Appendix L)'; " + _LARGE_WHY, side="upper"),
        paper={"spread": 0.0},
        source="§5 and Appendix L, which is not in the text: no number (0 stands for 'no trend'): power at the claim "
               "itself, a spread of 0; the largest of several noisy departures lies above 0 even with no trend, so "
               "this power is an upper bound",
        sized=False,
        null={"spread": zero_null(_N_ENC_SUB, sd=150.0, center=25.0)},
        null_what="a model 25 points better on one type than overall, with the noise of a type's ~100 subquestions",
        needs="a bootstrap interval of the largest |type − overall| SubQ accuracy (a chi-square p is absence of "
              "evidence, not evidence of no trend)"),
]

#: Checks of ours: readings of the paper that it does not state as results.
CHECKS = [
    ClaimSpec(
        "subquestions-need-context",
        "Our reading of Table 4 ({contextual:.0f} of {total:.0f} sampled rationales rest on the context): answering "
        "the subquestions needs the context. The paper states no result for it (Appendix M is not in the text).",
        "SubQ accuracy is lower without the context, for the encoder and every prompted setting run both ways "
        "(the same subquestions; 95% paired bootstrap intervals).",
        Above("drop", 0),  # SubQ with − without the context, per system
        paper={"drop": {"our reading of Table 4": STATED_UP},
               "contextual": _published("Table 4", "Contextual", "Total (random)"),
               "total": _published("Table 4", "Total", "Total (random)")},
        source="Table 4 (a count of rationales, not a drop in accuracy): not sized",
        sized=False,
        null={"drop": {"a model that ignores the context": zero_null(_N_ENC_SUB, sd=50.0)}},
        null_what="a model that ignores the context: 0 with the noise of ~950 paired subquestions"),
]
