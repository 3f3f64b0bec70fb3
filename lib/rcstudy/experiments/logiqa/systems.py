"""Every system of the chapter as :class:`~.predictions.Predictions`: the rule-based rows computed
here, the trained and scored ones read from their jobs' outputs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

import numpy as np

from ... import learning
from ...baselines import lexical
from ...baselines.readers import READERS
from ...data.records import MCItem
from ...errors import DataFileMissing
from ...jobs import Outputs
from .config import LM, Config, Encoder, Sizes
from .data import LogiQAData
from .predictions import Predictions, full_length, restrict
from .runs import (encoder_train_items, eval_positions, lm_items, reader_train_items, reclor_source,
                   transfer_eval_sets, transfer_row_stages)


def lexical_systems(data: LogiQAData) -> list[Predictions]:
    """Random (majority answer), word matching, sliding window and SW+D on every split."""
    systems = {"Word Matching": {}, "Sliding Window": {}, "Sliding Window + Distance": {}}
    for k, items in data.splits.items():
        lang = k.split("-")[0]
        wm = lexical.PAPER_WM if lang == "en" else lexical.PAPER_WM_ZH
        systems["Word Matching"][k] = lexical.word_matching_scores(items, wm)
        systems["Sliding Window"][k] = lexical.sliding_window_scores(items, lang=lang)
        systems["Sliding Window + Distance"][k] = lexical.sliding_window_scores(items, lang=lang, distance=True)
    return [Predictions(name, "Rule-based", "—", {k: lexical.first_argmax(s)[None, :] for k, s in by_split.items()},
                        {"scores": by_split})
            for name, by_split in systems.items()]


def majority_system(data: LogiQAData) -> Predictions:
    """Always answer the training set's most frequent letter (what a label-biased model learns)."""
    top = Counter(it.label for it in data.train.items).most_common(1)[0][0]
    return Predictions(f"Majority answer ({'ABCD'[top]})", "Random", "answer shares of the training set",
                       {k: np.full((1, len(v)), top) for k, v in data.splits.items()})


def reader_system(name: str, runs: Sequence, n_train: int) -> Predictions:
    """A from-scratch reader from its runs, one per seed (:func:`~.runs.reader_run`)."""
    logits = {k: np.stack([r.logits[k] for r in runs]) for k in ("en-eval", "en-test")}
    return Predictions(READERS[name][0], "Deep learning (re-impl.)", f"{n_train} training questions",
                       {k: v.argmax(-1) for k, v in logits.items()},
                       {"dev_curves": [r.dev_accuracy for r in runs], "losses": [r.losses for r in runs],
                        "logits": logits, "best_epoch": [r.best_epoch for r in runs], "vocab": runs[0].vocab_size})


def trained_row(data: LogiQAData, name: str, category: str, trained_on: str, runs: Sequence[Mapping],
                where: Mapping[str, np.ndarray], losses: list) -> Predictions:
    """A fine-tuned row from its runs, one per seed, each the option logits of the items at
    ``where[key]`` of each split key: its answers and its logits over the whole of each split (-1
    and NaN elsewhere), and its training losses (one curve per seed)."""
    n = {k: len(data.splits[k]) for k in where}
    logits = {k: np.stack([full_length(r[k], at, n[k], missing=np.nan) for r in runs]) for k, at in where.items()}
    preds = {k: np.stack([full_length(r[k].argmax(1), at, n[k]) for r in runs]) for k, at in where.items()}
    return Predictions(name, category, trained_on, preds, {"losses": losses, "logits": logits})


def plm_system(data: LogiQAData, encoder: Encoder, sizes: Sizes, runs: Sequence[Mapping]) -> Predictions:
    """The fine-tuned encoder (the paper's BERT/RoBERTa rows) on Eval (sample) and Test, from its
    runs, one per seed (:func:`~.runs.encoder_run`)."""
    train = encoder_train_items(data, encoder, sizes)
    pos = eval_positions(data, sizes)
    return trained_row(data, encoder.model, "Pre-trained (fine-tuned)", f"{len(train)} training questions", runs,
                       {k: pos[k] for k in ("en-eval", "en-test")}, [out["losses"] for out in runs])


def ablation_systems(data: LogiQAData, sizes: Sizes, main: Predictions,
                     runs: Mapping[str, Sequence[Mapping]]) -> list[Predictions]:
    """Figure 3's rows on the Test sample: the main model restricted to it ("full input"), then each
    ablation (name → its runs, one per seed; :func:`~.runs.ablation_run`)."""
    pos = eval_positions(data, sizes)["test-sub"]
    out = [Predictions("full input", main.category, main.trained_on, {"en-test": restrict(main.preds["en-test"], pos)})]
    return out + [trained_row(data, name, "Ablation", main.trained_on, seeds, {"en-test": pos},
                              [res["losses"] for res in seeds]) for name, seeds in runs.items()]


def transfer_systems(data: LogiQAData, encoder: Encoder, sizes: Sizes, main: Predictions, source: Sequence[MCItem],
                     source_name: str, runs: Sequence[Sequence[Mapping]]) -> list[Predictions]:
    """Table 4: the encoder trained on LogiQA only, on the source only, and source → LogiQA (``runs``:
    each trained row's runs, one per seed; :func:`~.runs.transfer_run`), scored on the Eval and
    Test samples. One stage of LogiQA is the Table 3 model, so the LogiQA-only row is ``main`` on
    those samples."""
    target = encoder_train_items(data, encoder, sizes)
    pos = eval_positions(data, sizes)
    sets = transfer_eval_sets(data, sizes)
    where = {"en-eval": pos["en-eval"], "en-test": pos["test-sub"]}
    m = encoder.model
    out = [Predictions(f"{m}_LogiQA", "Transfer", f"{len(target)} LogiQA",
                       {k: restrict(main.preds[k], where[k]) for k in sets})]
    names = [f"{m}_{source_name}", f"{m}_{source_name} → LogiQA"]
    trained = [f"{len(source)} {source_name}", f"{len(source)} {source_name}, then {len(target)} LogiQA"]
    # each row's training losses are its last stage's: what the row's model learned last
    return out + [trained_row(data, name, "Transfer", trained_on, seeds, {k: where[k] for k in sets},
                              [res["losses"][-1] for res in seeds])
                  for name, trained_on, seeds in zip(names, trained, runs)]


def lm_system(data: LogiQAData, lm: LM, sizes: Sizes, out: Mapping[str, np.ndarray]) -> Predictions:
    """Zero-shot log-likelihood scoring with a causal LM on Test (all of it, or ``lm.n_test``
    questions; ``out``: :func:`~.runs.lm_run`): each option is scored as the continuation of the
    paragraph and question. The row is the harness's ``acc`` (summed log-likelihood);
    ``extra["acc_norm"]`` holds the predictions of its ``acc_norm`` (log-likelihood per character
    of the option)."""
    n = len(data.splits["en-test"])
    positions, _ = lm_items(data, lm, sizes)
    return Predictions(f"{lm.model} (zero-shot LL)", "Zero-shot LM", "no LogiQA training",
                       {"en-test": full_length(out["sum"].argmax(1), positions, n)[None, :]},
                       {"acc_norm": full_length(out["per_char"].argmax(1), positions, n)[None, :]})


@dataclass
class Systems:
    """Every system the chapter runs, by role."""

    majority: Predictions
    rules: list[Predictions]  # word matching, sliding window, SW+D
    readers: list[Predictions]
    main: Predictions  # the fine-tuned encoder
    extra: list[Predictions]  # more encoders (Table 3 only)
    lm: Predictions
    ablations: list[Predictions]  # "full input" first
    transfer: list[Predictions]  # LogiQA only, source only, source → LogiQA; empty without ReClor
    source_n: int  # ReClor training questions (0 without ReClor)
    transfer_missing: str | None = None  # why there are no transfer rows (None: they ran)

    @property
    def table3(self) -> list[Predictions]:
        return [self.majority, *self.rules, *self.readers, self.main, *self.extra, self.lm]

    @property
    def trained(self) -> list[Predictions]:
        return [*self.readers, self.main, *self.extra, self.lm]

    @property
    def analysed(self) -> list[Predictions]:
        """The systems of the length, overlap and type analyses."""
        return [*self.rules, *self.trained]

    @property
    def everything(self) -> list[Predictions]:
        return [*self.table3, *self.ablations, *self.transfer]

    def loss_checks(self, data: LogiQAData, split_key: str = "en-test") -> dict[str, learning.LossCheck]:
        """Did each trained row learn? Every row that reports its training losses, judged by its
        accuracy on LogiQA Test against chance and by its loss there (the cross-entropy of its
        option logits at the gold option) against ln 4, seeds then questions resampled; its
        training loss is shown beside them, never decisive."""
        gold = data.gold(split_key)
        return {x.name: learning.check(x.name, x.extra["losses"], 4, correct=x.correct(split_key, gold),
                                       scores=x.extra["logits"][split_key], labels=gold, heldout="LogiQA Test")
                for x in self.everything if x.extra.get("losses") and split_key in x.preds}


def transfer_rows(cfg: Config, data: LogiQAData, main: Predictions, outputs: Outputs
                  ) -> tuple[list[Predictions], int, str | None]:
    """Table 4's rows from their jobs' outputs, the ReClor questions they used, and why they are
    missing (None: they ran)."""
    try:
        source = reclor_source(cfg.transfer, cfg.sizes.seed)
    except DataFileMissing as e:
        return [], 0, str(e.path)
    rows = transfer_row_stages(source, (), cfg.transfer.then_logiqa)  # the rows, without their LogiQA items
    runs = [[outputs.of("transfer_job", row=row, seed=s) for s in cfg.encoder.seeds] for row in range(len(rows))]
    return transfer_systems(data, cfg.encoder, cfg.sizes, main, source, "ReClor", runs), len(source), None


def systems(cfg: Config, data: LogiQAData, outputs: Outputs) -> Systems:
    """Every system of the chapter: the rule-based rows, and the others from the outputs of the
    jobs that trained and scored them (:func:`~.steps.jobs`)."""
    enc, n_reader = cfg.encoder, len(reader_train_items(data, cfg.readers, cfg.sizes.seed))
    readers = [reader_system(name, [outputs.of("reader_job", name=name, seed=s) for s in cfg.readers.seeds], n_reader)
               for name in cfg.readers.names]
    encoders = [plm_system(data, replace(enc, model=m), cfg.sizes,
                           [outputs.of("encoder_job", model=m, seed=s) for s in enc.seeds])
                for m in (enc.model, *enc.extra_models)]
    main = encoders[0]
    ablations = ablation_systems(data, cfg.sizes, main, {a: [outputs.of("ablation_job", name=a, seed=s)
                                                             for s in enc.seeds] for a in cfg.ablations})
    transfer, source_n, missing = transfer_rows(cfg, data, main, outputs)
    return Systems(majority_system(data), lexical_systems(data), readers, main, encoders[1:],
                   lm_system(data, cfg.lm, cfg.sizes, outputs.of("lm_job")), ablations, transfer, source_n, missing)
