"""Did each model learn? The gates the claims rest on (:mod:`rcstudy.learning`), the section that
shows them, and what the full profile would spend on a row at chance (:func:`rcstudy.plan.row_needs`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Collection, Mapping

import numpy as np
from IPython.display import Markdown

from ... import learning
from ...report import md_text
from ..section import Section
from .config import Config, trained_setups
from .prompting import lm_checks
from .rationales import Rationales
from .units import (ON_ALL_MAIN_QUESTIONS, ON_MAIN_QUESTIONS, ON_SUBQUESTIONS, Prompted, Trained, chance_of,
                    runs_by_question)

#: What the full profile would spend on each row (:func:`rcstudy.plan.row_needs`), given :func:`full_profile_rows`.
FullProfile = Callable[[dict[str, dict]], dict[str, str]]

def loss_checks(trained: Trained, seed: int) -> dict[str, learning.LossCheck]:
    """Did each fine-tuned model learn? It is judged on RULE's main questions, ReClor questions
    held out of its training (:func:`~.fine_tuned.training_questions`): its accuracy there against
    chance, and its loss there — the cross-entropy at the gold option of its option scores
    normalised over the options (the encoder's logits; a text-to-text model's option
    log-likelihoods) — against the loss of guessing, seeds then main questions resampled (each
    main question its own unit: no two share a passage). The multiple-choice encoder's training
    loss (a 4-way cross-entropy) is shown beside it against ln 4; the text-to-text models' is per
    token, with no ln k to compare with."""
    out = {}
    for name, runs in trained.runs.items():
        if not runs:
            continue
        main = runs_by_question(runs, "main")
        curves = [r.info["losses"] for r in runs] if name == trained.encoder_name else None
        out[name] = learning.check(name, curves, 4, correct=main.to_numpy(float),
                                   chance=chance_of(runs[0].data, main.columns, "main"),
                                   scores=np.stack([[r.info["main logits"][m] for m in main.columns] for r in runs]),
                                   labels=[runs[0].data.main(m).label for m in main.columns],
                                   heldout="RULE's main questions (held out of training)", seed=seed)
    return out


def gates_of(trained: Trained, prompted: Mapping[str, learning.LossCheck], rationales: Rationales,
             seed: int) -> dict[str, learning.LossCheck]:
    """Every gate the claims rest on, by the row the page's table gives it: each fine-tuned model
    (on the held-out main questions), the prompted settings' gates
    (:func:`~.prompting.prompted_gates`), and each of Table 5's settings (with the context) on its
    main questions answered with no rationale appended (``ON_MAIN_QUESTIONS``); each gate is named
    as the model or setting it judges, as the claims resting on it quote it."""
    unappended = {n: rationales.runs[n]["no rationale"] for n in rationales.with_context.index}
    return {**loss_checks(trained, seed), **prompted,
            **{n + ON_MAIN_QUESTIONS: c for n, c in lm_checks(unappended, "main", seed).items()}}


@dataclass(frozen=True, kw_only=True)
class Learned(Section):
    """Did each model learn: the gate of each row a claim rests on, by row (:func:`gates_of`)."""

    checks: dict[str, learning.LossCheck]


def learned_section(cfg: Config, trained: Trained, prompted: Prompted, prompted_checks: Mapping[str, learning.LossCheck],
                    rationales: Rationales, full_profile: FullProfile | None) -> Learned:
    """The table of every gate (named by its row), and the warnings of the rows that did not learn
    (fine-tuned, prompted); a row at chance says what the full profile would spend on it where
    ``full_profile`` tells (given :func:`full_profile_rows` of those rows)."""
    checks = gates_of(trained, prompted_checks, rationales, cfg.sample_seed)
    stuck = [row for row, c in checks.items() if not c.learned]
    if full_profile and stuck:
        needs = full_profile(full_profile_rows(cfg, trained, prompted, rationales, stuck))
        checks = {row: replace(c, full_profile=needs.get(row, c.full_profile)) for row, c in checks.items()}
    rows = {row: replace(c, name=row) for row, c in checks.items()}
    fine_tuned = [c for row, c in rows.items() if row in trained.runs]
    lms = [c for row, c in rows.items() if row not in trained.runs]
    return Learned(tables={"rule_learned": learning.table(list(rows.values()))},
                   facts={"rule_loss_warnings": Markdown(md_text(learning.warnings_text(fine_tuned))),
                          "rule_lm_warnings": Markdown(md_text(learning.warnings_text(lms)))},
                   checks=checks)


def full_profile_rows(cfg: Config, trained: Trained, prompted: Prompted, rationales: Rationales,
                      rows: Collection[str]) -> dict[str, dict]:
    """The jobs of each of ``rows`` (as :func:`gates_of` names them) in the full profile, as
    :func:`rcstudy.plan.row_needs` selects them: the encoder as the full profile's encoder, a
    text-to-text model by its row where the full profile trains it, else by its step alone; a
    prompted row by the analysis that answers it (Table 5's rationales for the main questions of
    its sample, else the setting itself), its model and its setting where the full profile runs
    them (a model it does not prompt: that setting of each model it does)."""
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
    selectors |= {n + suffix: lm_row("setting", *prompted.origins[n], full.lm.settings)
                  for n in prompted.systems for suffix in (ON_SUBQUESTIONS, ON_ALL_MAIN_QUESTIONS)}
    selectors |= {n + ON_MAIN_QUESTIONS: lm_row("rationales", *rationales.origins[n], full.analyses.rationale_settings)
                  for n in rationales.with_context.index}
    return {row: selector for row, selector in selectors.items() if row in rows}
