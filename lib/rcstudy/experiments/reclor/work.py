"""The chapter's heavy work as jobs (:mod:`rcstudy.jobs`): every fine-tuning (Table 7's encoders
per input and seed, Eq. 1's option-only encoders per seed on val and per fold of the
cross-fitting), and the runs the notebook does itself, one (family, input) at a time. Each step
returns its result; :func:`rcstudy.jobs.execute` runs them all over this module and
:func:`chapter_runs` gathers what the page reads from their outputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ... import bias
from ...data.records import MCItem
from ...jobs import Job, Outputs, loaded_once, mc_tokens
from ...models.registry import split_revision
from ...runtime import Runtime
from .config import P, SCRATCH, Config
from .dataset import load_splits
from .runs import Runner, stack_seeds


def job_runner(cfg: Config, rt: Runtime) -> Runner:
    """A :class:`~.runs.Runner` over the splits, read once per process (:func:`rcstudy.jobs.loaded_once`)."""
    return Runner(cfg, loaded_once(load_splits, cfg.data_source), rt)


# --------------------------------------------------------------------------------------------
# The steps


def table7_job(cfg: Config, rt: Runtime, family: str, fields: str, seed: int) -> dict[str, np.ndarray]:
    runner = job_runner(cfg, rt)
    return runner.scores(family, fields, seed, runner.train_items(family, fields), runner.table7_sets(family, fields))


def option_only_job(cfg: Config, rt: Runtime, family: str, seed: int) -> dict[str, np.ndarray]:
    runner = job_runner(cfg, rt)
    return runner.scores(family, "A", seed, runner.train_items(family, "A", option_only=True),
                         {"val": runner.splits["val"]}, option_only=True)


def cross_fit_job(cfg: Config, rt: Runtime, family: str, seed: int, fold: int) -> dict[str, np.ndarray]:
    runner = job_runner(cfg, rt)
    train, held = bias.fold_items(runner.splits["train"], runner.folds()[fold])
    return runner.scores(family, "A", seed, train, {"held": held}, option_only=True)


@dataclass(frozen=True)
class NotebookRuns:
    """The runs of one (family, input) that the notebook does itself, where the family has them:
    Eq. 1's option-only runs on val and cross-fitted on train, (seeds, items, options), and its
    Table 7 run (:meth:`~.runs.Runner.seed_runs`)."""

    option_only: np.ndarray | None
    cross_fitted: np.ndarray | None
    table7: dict | None


def notebook_job(cfg: Config, rt: Runtime, family: str, fields: str) -> NotebookRuns:
    """A from-scratch or frozen family's runs on one input, with one runner: a frozen encoder's
    features extend one bank per model and input, filled in this order."""
    runner = job_runner(cfg, rt)
    eq1 = fields == "A" and family in cfg.bias_models and not cfg.finetunes(family, option_only=True)
    table7 = (family, fields) in cfg.table7_runs() and not cfg.finetunes(family)
    option_only = runner.seed_runs(family, "A", {"val": runner.splits["val"]}, option_only=True)["val"] if eq1 else None
    cross_fitted = runner.cross_fit(family, "A") if eq1 else None
    return NotebookRuns(option_only, cross_fitted,
                        runner.seed_runs(family, fields, runner.table7_sets(family, fields)) if table7 else None)


# --------------------------------------------------------------------------------------------
# The jobs, and what the page reads from their outputs


def jobs(cfg: Config) -> list[Job]:
    """Every run of the chapter: the fine-tunings as jobs that fill the cache entries the chapter
    reads (Table 7's encoders per input and seed, and the option-only encoders of Eq. 1 per seed
    on val and per fold of the cross-fitting), then one job per (family, input) of the runs the
    notebook does itself (no step, a notebook step): frozen encoders (not distributed: each run's
    features extend a bank filled in the order the notebook asks for them), fastText and the
    Bi-LSTM (trained from scratch)."""
    runner = job_runner(cfg, None)
    train, val = runner.splits["train"], runner.splits["val"]
    out = []

    def fine_tuning(name, family, fields, seed, items, eval_items, step, arguments, fold=None):
        c = cfg.encoder.finetune.engine(family, fields, seed)
        out.append(Job(P, "train", name, family, fields, seed, fold, items=len(items), epochs=c.epochs,
                       train_tokens=round(mc_tokens(items, fields, c.max_length) * c.epochs),
                       score_tokens=mc_tokens(eval_items, fields, c.max_length), step=step, arguments=arguments))

    notebook = {}  # (family, fields) → evaluated items of the runs the notebook does itself
    for family in cfg.bias_models:
        items = runner.train_items(family, "A", option_only=True)
        if not cfg.finetunes(family, option_only=True):
            notebook[(family, "A")] = [*items, *val, *train]
            continue
        short = split_revision(family)[0]
        for seed in cfg.seeds_of(family, option_only=True):
            fine_tuning(f"option-only {short} seed {seed}", family, "A", seed, items, val, "option_only_job",
                        {"family": family, "seed": seed})
            for k, fold in enumerate(runner.folds()):
                fold_train, held = bias.fold_items(train, fold)
                fine_tuning(f"option-only {short} seed {seed} fold {k}", family, "A", seed, fold_train, held,
                            "cross_fit_job", {"family": family, "seed": seed, "fold": k}, fold=k)
    for family, fields in cfg.table7_runs():
        items = runner.train_items(family, fields)
        sets = [it for s in runner.table7_sets(family, fields).values() for it in s]
        if not cfg.finetunes(family):
            notebook.setdefault((family, fields), []).extend([*items, *sets])
            continue
        for seed in cfg.seeds_of(family):
            fine_tuning(f"{split_revision(family)[0]} ({fields}) seed {seed}", family, fields, seed, items, sets,
                        "table7_job", {"family": family, "fields": fields, "seed": seed})
    return out + [notebook_runs(cfg, family, fields, items) for (family, fields), items in notebook.items()]


def notebook_runs(cfg: Config, family: str, fields: str, items: Sequence[MCItem]) -> Job:
    """The job of one (family, input) the notebook does itself (:func:`notebook_job`): from-scratch
    training of unknown size, or a frozen encoder's features over every item it scores once."""
    scratch = family in SCRATCH
    unique = list({it.id: it for it in items}.values())
    return Job(P, "train" if scratch else "score", f"{split_revision(family)[0]} ({fields}) in the notebook",
               family, fields, items=len(unique),
               score_tokens=0 if scratch else mc_tokens(unique, fields, cfg.encoder.max_length[fields]),
               note="trained from scratch" if scratch else "frozen features, computed in the chapter's order",
               notebook_step="notebook_job", arguments={"family": family, "fields": fields})


@dataclass(frozen=True)
class Runs:
    """Every run of the chapter as the page reads it, from its jobs' outputs."""

    option_only: dict[str, np.ndarray]  # family → (seeds, val items, options): Eq. 1 on val
    cross_fitted: dict[str, np.ndarray]  # family → (seeds, train items, options): Eq. 1 on train
    table7: dict[tuple[str, str], dict]  # (family, fields) → {"val": ..., "test"?: ..., "losses"?: ...}


def out_of_fold(train: Sequence[MCItem], folds: Sequence[np.ndarray], held: Sequence[np.ndarray]) -> np.ndarray:
    """One seed's scores on all of train from each fold's held-out scores (:func:`rcstudy.bias.cross_fit`)."""
    per_fold = iter(held)
    return bias.cross_fit(train, folds, lambda _train, _held: next(per_fold))


def chapter_runs(cfg: Config, outputs: Outputs) -> Runs:
    """Each family's runs, asked of the job outputs as :func:`jobs` declares them: a fine-tuned
    family's seeds (and folds) one job each, any other family's from its notebook job."""
    def notebook(family: str, fields: str) -> NotebookRuns:
        return outputs.of("notebook_job", family=family, fields=fields)

    runner = job_runner(cfg, None)
    train, folds = runner.splits["train"], runner.folds()
    option_only, cross_fitted = {}, {}
    for f in cfg.bias_models:
        if not cfg.finetunes(f, option_only=True):
            option_only[f], cross_fitted[f] = notebook(f, "A").option_only, notebook(f, "A").cross_fitted
            continue
        seeds = cfg.seeds_of(f, option_only=True)
        option_only[f] = stack_seeds([outputs.of("option_only_job", family=f, seed=s) for s in seeds])["val"]
        held = [[outputs.of("cross_fit_job", family=f, seed=s, fold=k)["held"] for k in range(len(folds))] for s in seeds]
        cross_fitted[f] = np.stack([out_of_fold(train, folds, per_fold) for per_fold in held])
    table7 = {(f, x): stack_seeds([outputs.of("table7_job", family=f, fields=x, seed=s) for s in cfg.seeds_of(f)])
              if cfg.finetunes(f) else notebook(f, x).table7 for f, x in cfg.table7_runs()}
    return Runs(option_only, cross_fitted, table7)
