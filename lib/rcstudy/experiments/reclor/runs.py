"""Training and scoring the families on the ReClor splits, every run cached on disk, keyed by its
settings, seed and the fingerprints of its training and evaluation items."""

from __future__ import annotations

from dataclasses import asdict
from functools import cached_property
from typing import Mapping, Sequence

import numpy as np

from ... import bias, sampling
from ...baselines import option_runs
from ...data.records import MCItem
from ...models import mc
from ...runtime import Runtime
from .. import shared
from .config import BILSTM, NGRAM, SCRATCH, Config
from .dataset import data_files


def stack_seeds(per_seed: Sequence[Mapping[str, np.ndarray]]) -> dict:
    """One run's scores over its seeds: ``{set: (seeds, items, options)}``, and the training
    ``"losses"`` of each seed where every seed reports them."""
    out = {k: np.stack([r[k] for r in per_seed]) for k in per_seed[0] if k != "losses"}
    if all("losses" in r for r in per_seed):
        out["losses"] = [np.asarray(r["losses"]) for r in per_seed]
    return out


class Runner:
    """Trains and evaluates families on the ReClor splits, caching every run."""

    def __init__(self, cfg: Config, splits: Mapping[str, Sequence[MCItem]], rt: Runtime):
        self.cfg, self.splits, self.rt = cfg, splits, rt
        self._features: dict[tuple[str, str], dict[str, np.ndarray]] = {}
        self._data = data_files(cfg.data_source)

    @cached_property
    def rule_main_ids(self) -> set[str]:
        """RULE's main questions, read once: every encoder run leaves them out of its training."""
        return shared.rule_main_ids()

    def train_items(self, family: str, fields: str, *, option_only: bool = False) -> list[MCItem]:
        """The training questions of a Table 7 run, or of an option-only run of Eq. 1 (see :class:`Sizes`)."""
        sizes = self.cfg.sizes
        if option_only:
            n = sizes.option_only_questions
        elif family in SCRATCH:
            n = None if family == NGRAM else sizes.bilstm_questions
        else:
            n = sizes.train_questions.get(fields)
        items = sampling.draw(self.splits["train"], n, sizes.seed)
        if not option_only and family not in SCRATCH and sizes.exclude_rule_mains:
            items = shared.reclor_training_questions(items, self.rule_main_ids)
        return items

    def features(self, model: str, fields: str, items: Sequence[MCItem]) -> np.ndarray:
        """Frozen-encoder features of ``items``, computed (and cached) once per item."""
        bank = self._features.setdefault((model, fields), {})
        missing = [it for it in items if it.id not in bank]
        if missing:
            feats = mc.frozen_features(model, missing, fields, self.rt, max_length=self.cfg.encoder.max_length[fields])
            bank.update(zip((it.id for it in missing), feats))
        return np.stack([bank[it.id] for it in items])

    def scores(self, family: str, fields: str, seed: int, train: Sequence[MCItem],
               eval_sets: Mapping[str, Sequence[MCItem]], *, option_only: bool = False) -> dict[str, np.ndarray]:
        """Option scores (higher = more likely right) on each evaluation set, for one seed; a
        fine-tuned run also returns its training ``"losses"``."""
        enc = self.cfg.encoder
        if self.cfg.finetunes(family, option_only=option_only):
            return mc.finetune_and_predict(enc.finetune.engine(family, fields, seed), train, dict(eval_sets), self.rt)
        key = option_runs.run_key(family, fields, seed, train, eval_sets)
        if family == NGRAM:
            return option_runs.fasttext_scores(key, self.cfg.fasttext.config(fields, seed), train, eval_sets, self._data)
        if family == BILSTM:
            return option_runs.bilstm_scores(key, self.cfg.bilstm.config(fields, seed), train, eval_sets, self.rt,
                                             self._data)
        return option_runs.frozen_head_scores(key, asdict(enc.head), enc.max_length[fields], seed, train, eval_sets,
                                              lambda items: self.features(family, fields, items), self._data)

    def seed_runs(self, family: str, fields: str, eval_sets: Mapping[str, Sequence[MCItem]], *,
                  option_only: bool = False) -> dict[str, np.ndarray]:
        """Scores for every seed, stacked: ``{set: (seeds, items, options)}``, and the training
        ``"losses"`` of each seed where the run reports them."""
        train = self.train_items(family, fields, option_only=option_only)
        return stack_seeds([self.scores(family, fields, s, train, eval_sets, option_only=option_only)
                            for s in self.cfg.seeds_of(family, option_only=option_only)])

    def table7_sets(self, family: str, fields: str) -> dict[str, list[MCItem]]:
        """A Table 7 run's evaluation sets: val, and test for the families whose predictions are exported."""
        exported = family in self.cfg.test_predictions and fields == "CQA" and bool(self.splits["test"])
        return {"val": self.splits["val"], "test": self.splits["test"]} if exported else {"val": self.splits["val"]}

    def folds(self) -> list[np.ndarray]:
        """The cross-fitting folds of the training set (the same for every family and seed)."""
        return bias.kfold(len(self.splits["train"]), self.cfg.crossfit.folds, self.cfg.crossfit.seed)

    def cross_fit(self, family: str, fields: str = "A") -> np.ndarray:
        """Out-of-fold scores on all of train for every seed, (seeds, items, options).

        The folds are the same for every seed and family, so the per-seed intersections compare
        models trained on the same data."""
        train = self.splits["train"]
        folds = self.folds()
        return np.stack([
            bias.cross_fit(train, folds, lambda tr, held, s=s: self.scores(family, fields, s, tr, {"held": held},
                                                                           option_only=True)["held"])
            for s in self.cfg.seeds])
