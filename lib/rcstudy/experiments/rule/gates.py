"""Did each model learn? The gates the claims rest on (:mod:`rcstudy.learning`), and what the full
profile would spend on a row at chance (:func:`rcstudy.plan.row_needs`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Collection, Literal, Mapping

from ... import learning
from .config import Config, trained_setups
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

    def with_full_profile(self, needs: Mapping[str, str]) -> "Gates":
        """These gates with what the full profile would spend on each row of ``needs`` (by row, as
        :meth:`rows` names them), said in their warnings and in the claims resting on them."""
        def group(checks: dict[str, learning.LossCheck], suffix: str) -> dict[str, learning.LossCheck]:
            return learning.with_full_profile(checks, {c.name: needs[n + suffix] for n, c in checks.items()
                                                       if n + suffix in needs})

        return Gates(group(self.trained, ""), group(self.lm_sub, ON_SUBQUESTIONS),
                     group(self.lm_main, ON_MAIN_QUESTIONS))


def gates_of(trained: Trained, prompted: Prompted, rationales: Rationales, seed: int) -> Gates:
    """Every gate: the fine-tuned models, the prompted settings on their subquestions, and Table 5's
    settings (with the context) on their main questions answered with no rationale appended."""
    unappended = {n: rationales.runs[n]["no rationale"] for n in rationales.with_context.index}
    return Gates(loss_checks(trained, seed), lm_checks(prompted.systems, "sub", seed),
                 lm_checks(unappended, "main", seed))


def full_profile_rows(cfg: Config, trained: Trained, prompted: Prompted, rationales: Rationales,
                      rows: Collection[str]) -> dict[str, dict]:
    """The jobs of each of ``rows`` (as :meth:`Gates.rows` names them) in the full profile, as
    :func:`rcstudy.plan.row_needs` selects them: the encoder as the full profile's encoder, a
    text-to-text model by its row where the full profile trains it, else by its step alone; a
    prompted row by the analysis that answers it, its model and its setting where the full
    profile runs them (a model it does not prompt: that setting of each model it does)."""
    full = Config.load("full")
    full_encoder, full_setups = trained_setups(full)

    def trained_row(name: str) -> dict:
        if name == trained.encoder_name:
            return {"step": "trained_job", "arguments": {"name": full_encoder}}
        return {"step": "trained_job", "arguments": {"name": name}} if name in full_setups else {"step": "trained_job"}

    def lm_row(analysis: str, model: str, spec: str, specs: Collection[str]) -> dict:
        arguments = {"analysis": analysis}
        if model in full.lm.models:
            arguments["model"] = model
        if spec in specs:
            arguments["spec"] = spec
        return {"step": "lm_job", "arguments": arguments}

    selectors = {name: trained_row(name) for name in trained.runs}
    selectors |= {n + ON_SUBQUESTIONS: lm_row("setting", *prompted.origins[n], full.lm.settings)
                  for n in prompted.systems}
    selectors |= {n + ON_MAIN_QUESTIONS: lm_row("rationales", *rationales.origins[n], full.analyses.rationale_settings)
                  for n in rationales.with_context.index}
    return {row: selector for row, selector in selectors.items() if row in rows}
