"""Did each model learn? The gates the claims rest on (:mod:`rcstudy.learning`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, Mapping

from ... import learning
from .rationales import Rationales
from .units import Prompted, System, Trained, chance_of, mains_of, runs_by_question

#: How the page's table names a prompted setting gated on its subquestions, and one gated on its main questions.
ON_SUBQUESTIONS, ON_MAIN_QUESTIONS = " (subquestions)", " (main questions)"


def loss_checks(trained: Trained, seed: int) -> dict[str, learning.LossCheck]:
    """Did each fine-tuned model learn? It is judged on RULE's main questions, ReClor questions
    held out of its training (:func:`~.fine_tuned.training_questions`): its accuracy there, seeds
    then main questions resampled, against chance. The multiple-choice encoder's training loss (a
    4-way cross-entropy) is shown beside it against ln 4; the text-to-text models' is per token,
    with no ln k to compare with."""
    out = {}
    for name, runs in trained.runs.items():
        if not runs:
            continue
        main = runs_by_question(runs, "main")
        curves = [r.info["losses"] for r in runs] if name == trained.encoder_name else None
        out[name] = learning.check(name, curves, 4, correct=main.to_numpy(float),
                                   chance=chance_of(runs[0].data, main.columns, "main"),
                                   heldout="RULE's main questions (held out of training)", seed=seed)
    return out


def lm_checks(systems: Mapping[str, System], kind: Literal["main", "sub"], seed: int) -> dict[str, learning.LossCheck]:
    """Is each prompted setting above chance on the task a claim rests on: its main questions
    (``kind="main"``) or its subquestions (clustered by main question)? (:func:`rcstudy.learning.prompted`)"""
    out = {}
    for name, system in systems.items():
        runs = runs_by_question([system], kind)
        if not runs.shape[1]:
            continue
        task = "its main questions" if kind == "main" else "its subquestions"
        out[name] = learning.prompted(name, runs.to_numpy(float), 4, task=task, seed=seed,
                                      chance=chance_of(system.data, runs.columns, kind),
                                      clusters=None if kind == "main" else mains_of(system.data, runs.columns))
    return out


@dataclass(frozen=True)
class Gates:
    """The models the claims rest on, by row: each fine-tuned model (on the held-out main questions),
    each prompted setting on its subquestions, and each of Table 5's settings on its main questions."""

    trained: dict[str, learning.LossCheck]
    lm_sub: dict[str, learning.LossCheck]
    lm_main: dict[str, learning.LossCheck]

    def rows(self) -> dict[str, learning.LossCheck]:
        """Every gate by the row the page's table gives it, each named so."""
        named = {**self.trained, **{n + ON_SUBQUESTIONS: c for n, c in self.lm_sub.items()},
                 **{n + ON_MAIN_QUESTIONS: c for n, c in self.lm_main.items()}}
        return {row: replace(c, name=row) for row, c in named.items()}


def gates_of(trained: Trained, prompted: Prompted, rationales: Rationales, seed: int) -> Gates:
    """Every gate: the fine-tuned models, the prompted settings on their subquestions, and Table 5's
    settings (with the context) on their main questions answered with no rationale appended."""
    unappended = {n: rationales.runs[n]["no rationale"] for n in rationales.with_context.index}
    return Gates(loss_checks(trained, seed), lm_checks(prompted.systems, "sub", seed),
                 lm_checks(unappended, "main", seed))
