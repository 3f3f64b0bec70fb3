"""Benchmark of the shared engines against the tools a user would otherwise pick.

``python -m rcstudy bench`` (also ``python -m rcstudy.bench``) measures, in one process on one
machine:

a. **training**: multiple-choice fine-tuning of ``mc_model`` on the first
   ``train_steps × batch_size`` ReClor training questions with our trainer
   (:func:`rcstudy.models.mc.finetune`: dynamic padding, length-bucketed batches, on a CPU dropout
   masks drawn in bulk, :mod:`rcstudy.models.bulk_dropout`) and with two
   HuggingFace ``Trainer`` configurations (:data:`REFERENCES`): as a practitioner sets it up
   (``DataCollatorForMultipleChoice``, ``group_by_length``), the strongest reference, and as the
   official ReClor script does (every pair padded to ``max_length``). Same items, steps, batch
   size, optimiser (torch's fused AdamW, linear warm-up over 10%, weight decay 0.01, gradient
   clipping at 1), dropout rates,
   dtype, seed and initial weights; no logging or per-step NaN check in the ``Trainer``
   (:func:`_loss_keeping`), so neither reads a value back from the device every step.
   Reported: questions/s (model loading and tokenisation included) and tokens computed per real
   token of each, the ratios, and the val accuracies.
b. **scoring**: zero-shot option scoring on LogiQA test with ``lm_model``: the LogiQA chapter's
   scorer (:func:`rcstudy.baselines.option_lm.option_scores`) against lm-evaluation-harness's
   own ``logiqa`` task (``HFLM`` over the same model object). Reported: whether the predictions
   of ``acc`` and ``acc_norm`` are identical, the largest log-likelihood difference, both
   metrics as each reports them, and the time ratio. Where the runtime is bf16, both scorers run
   once more in fp32, where rounding cannot flip a near tie, for the agreement alone.
c. **FLOP/s**: the matmul FLOPs of the training runs of (a), counted from the tensor shapes the
   model actually ran (forward + backward), per second of training, against this machine's best
   measured ``torch.matmul`` rate in the same dtype (the runtime's: bf16 on CUDA and on CPUs with
   native bf16, fp32 elsewhere; ``RCSTUDY_PRECISION`` forces one). The Trainer and the harness run
   in the same dtype.
d. **book** (optional, ``--stages book``): the wall time of building the book in a profile, cold
   (as recorded by the runner in ``book/timings.json``, or measured with ``book_cold=true``)
   warm in two ways (every chapter re-executed with the result cache filled; and a rebuild after a
   text-only edit of ``book_edited``, which re-executes that chapter and the pages that read it),
   and the peak memory of the largest process.
e. **precision** (by default in the cpu and gpu presets): the training of (a) with our trainer
   and the scoring of (b) with our scorer (on ``precision_lm_items`` questions), each once in
   fp32 and once under bf16 autocast, whatever the runtime's own choice, and the runtime's setup
   restored afterwards. Reported: the training speed of both and their ratio, the val accuracy of
   both with a paired bootstrap interval of the difference (fp32 − bf16), the share of LogiQA
   items whose predicted option is the same and the largest log-likelihood difference; each
   training run's FLOP/s against the matmul peak measured in its own dtype; and the tuned
   ``Trainer`` trained in bf16, so that the ratio of (a) is also reported with both sides in bf16.
f. **quality**: ours and the tuned ``Trainer`` trained where the model learns within the budget
   (ReClor's options alone, ``quality_epochs`` over ``quality_questions``); a TOST equivalence
   test of their per-question correctness on ReClor val and ``quality_holdout`` train questions
   held out of their training (``equivalence_margin`` points), or "not comparable" where a run
   did not learn (:func:`learned`).
g. **curves**: time and peak memory of ours and the strongest reference at growing amounts of
   work (:data:`CURVES`: questions fine-tuned, tokens per pair, questions scored), each point in
   a fresh process, with each line's growth exponent.

Results go to ``<out>/<device>.json`` and, as a markdown table, ``<out>/<device>.md``
(``<out>`` defaults to ``benchmarks/results``); the book's appendix page shows them. A run of
some stages keeps the other stages of the file when it comes from the same preset, sizes and
machine, each with the date it was measured (``--stages book`` after a cold build), and the
load average before and after each stage. Every size
is a parameter: presets ``cpu``, ``gpu`` and ``tiny`` (seconds, for the tests), refined with
``-p name=value``.

Heavy libraries are imported inside the stages, so ``--help`` and reading results stay fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path

from . import __version__
from .bench_presets import DEFAULT_STAGES, PRESETS, STAGE_KEYS, STAGES, BenchConfig, config_from
from .settings import PROJECT_ROOT, book_root

#: The precisions the precision stage compares, the reference first.
PRECISIONS = ("fp32", "bf16")
RESULTS_DIR = PROJECT_ROOT / "benchmarks" / "results"

#: Targets the benchmark reports against (speed targets live here, not in timed tests).
TARGETS = {
    "train_speedup": 1.3,  # our questions/s ÷ the strongest Trainer configuration's
    "score_speedup": 1.0,  # lm-evaluation-harness seconds ÷ ours
    "cpu_peak_fraction": 0.40,  # training FLOP/s ÷ measured matmul peak, on CPU
    "precision_same_prediction": 0.97,  # share of items whose predicted option is the same in fp32 and bf16
    "cold_build_s": 3600.0,
    "warm_build_s": 120.0,
}


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- the machine ------------------------------------------------------------------------------

def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def hardware(rt) -> dict:
    """What the numbers were measured on, including the load average (contention shows there)."""
    import torch

    from .runtime import describe

    info = describe(rt)
    info["cpu_model"] = _cpu_model()
    info["memory_gb"] = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    info["platform"] = platform.platform()
    if rt.cuda:
        info["gpu_memory_gb"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    return info


def _now(rt) -> float:
    """``perf_counter`` after the device has finished its queued work."""
    if rt.cuda:
        import torch

        torch.cuda.synchronize()
    return time.perf_counter()


@contextlib.contextmanager
def in_precision(rt, precision: str):
    """``rt``'s device and threads with ``precision`` ("fp32" or "bf16"), set up for the block.

    :func:`rcstudy.runtime.setup` changes module-wide state (the numerics in every cache key,
    torch's thread count), so ``rt``'s own setup is restored afterwards: the stages that follow
    run as they would have without this one.
    """
    from . import runtime

    try:
        yield runtime.setup(str(rt.device), rt.threads, precision)
    finally:
        runtime.setup(str(rt.device), rt.threads, "bf16" if rt.bf16 else "fp32")


# --- FLOPs --------------------------------------------------------------------------------------

def encoder_flops(config, sequences: int, length: int, *, backward: bool = True) -> int:
    """Matmul FLOPs of a BERT-style multiple-choice encoder on ``sequences`` sequences of ``length``.

    Per layer and token: the Q, K, V and output projections (8·d²), the feed-forward block
    (4·d·f) and the two attention products (4·L·d); then the pooler and the option scorer per
    sequence. The backward pass costs twice the forward. Embedding look-ups, norms and
    softmaxes are not matmuls and are not counted (as in the usual MFU accounting).
    """
    d, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    per_layer = 8 * length * d * d + 4 * length * d * f + 4 * length * length * d
    per_sequence = layers * per_layer + 2 * d * d + 2 * d
    return (3 if backward else 1) * sequences * per_sequence


class EmbeddingShapes:
    """While active, records (sequences, length) of every look-up in a ``vocab_size``-row embedding.

    Works for any training loop (ours or ``Trainer``): the word-embedding table is the only
    embedding with the vocabulary's number of rows, so each forward pass is recorded once.
    """

    def __init__(self, vocab_size: int):
        self.vocab_size = vocab_size
        self.shapes: list[tuple[int, int]] = []

    def _hook(self, module, args, output):
        import torch

        if isinstance(module, torch.nn.Embedding) and module.num_embeddings == self.vocab_size and output.dim() == 3:
            self.shapes.append((int(output.shape[0]), int(output.shape[1])))

    def __enter__(self) -> "EmbeddingShapes":
        import torch

        self._handle = torch.nn.modules.module.register_module_forward_hook(self._hook)
        return self

    def __exit__(self, *exc) -> None:
        self._handle.remove()

    def tokens(self) -> int:
        return sum(n * length for n, length in self.shapes)

    def flops(self, config) -> int:
        return sum(encoder_flops(config, n, length) for n, length in self.shapes)


def matmul_peak(rt, size: int, reps: int) -> dict:
    """The best rate of ``size``×``size`` ``torch.matmul`` here, in the engine's training dtype."""
    import torch

    dtype = rt.dtype
    a = torch.randn(size, size, device=rt.device, dtype=dtype)
    b = torch.randn(size, size, device=rt.device, dtype=dtype)
    inner = 10 if rt.cuda else 1  # a GPU matmul is too short to time alone
    for _ in range(2):
        a @ b
    best = float("inf")
    for _ in range(reps):
        start = _now(rt)
        for _ in range(inner):
            a @ b
        best = min(best, (_now(rt) - start) / inner)
    return {"dtype": str(dtype).removeprefix("torch."), "size": size, "flops_per_s": 2 * size**3 / best}


def warm_device(cfg: BenchConfig, rt) -> float:
    """Pay a GPU process's one-time costs before anything is timed; returns their seconds (0 on a CPU).

    The first work of a process on a GPU creates the CUDA context and cuBLAS's handles, loads each
    kernel on its first use and grows the memory pool, and whichever run comes first pays for all
    of it: on an H200 our trainer, the first work of its process, took 44 s for a run that took 20 s
    in another process. So a matmul and a forward and backward pass of the benchmark's model at
    lengths up to ``max_length`` go first, untimed."""
    if not rt.cuda:
        return 0.0
    import torch

    from .models.loading import load_multiple_choice

    start = _now(rt)
    matmul_peak(rt, 4096, 2)
    model = load_multiple_choice(cfg.mc_model, seed=cfg.seed).to(rt.device)
    for length in range(16, cfg.max_length + 1, 16):
        ids = torch.ones((cfg.batch_size, 4, length), dtype=torch.long, device=rt.device)
        with rt.autocast():
            model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits.float().sum().backward()
    del model
    return _now(rt) - start


# --- a. multiple-choice fine-tuning: ours vs HF Trainer padding to 256 -------------------------

def _reclor_train(n: int | None) -> list:
    """The first ``n`` labelled ReClor training questions (all of them for None)."""
    from .data.reclor import load_split

    return [it for it in load_split("train") if it.label is not None][:n]


def _reclor_val(cfg: BenchConfig) -> list:
    """The first ``eval_items`` ReClor val questions (all 500 for None)."""
    from .data.reclor import load_split

    return load_split("val")[: cfg.eval_items]


def _quality_split(cfg: BenchConfig) -> tuple[list, list]:
    """The quality stage's training questions (the first ``quality_questions`` of ReClor train but
    its last ``quality_holdout``) and the held-out ones, which it scores beside val."""
    train = _reclor_train(None)
    if not 0 <= cfg.quality_holdout < len(train):
        raise ValueError(f"quality_holdout = {cfg.quality_holdout}, but ReClor train has {len(train)} questions")
    cut = len(train) - cfg.quality_holdout
    return train[:cut][: cfg.quality_questions], train[cut:]


def _reclor(cfg: BenchConfig):
    train = _reclor_train(None)
    needed = cfg.train_steps * cfg.batch_size
    if needed > len(train):
        raise ValueError(f"train_steps × batch_size = {needed} questions, but ReClor train has {len(train)}")
    return train[:needed], _reclor_val(cfg)


def _train_ours(train, val, cfg: BenchConfig, rt, vocab_size: int, *, fields: str = "CQA", epochs: float = 1) -> dict:
    from .models import mc

    mc_cfg = mc.MCConfig(model=cfg.mc_model, fields=fields, max_length=cfg.max_length, epochs=epochs, lr=cfg.lr,
                         batch_size=cfg.batch_size, seed=cfg.seed, eval_batch_size=cfg.eval_batch_size)
    with EmbeddingShapes(vocab_size) as shapes:
        start = _now(rt)
        trained = mc.finetune(train, mc_cfg, rt)
        train_s = _now(rt) - start
    start = _now(rt)
    logits = mc.predict(trained, val, rt)
    eval_s = _now(rt) - start
    real_tokens = sum(len(o["input_ids"]) for it in train for o in mc.encode_item(trained.tokenizer, it, fields,
                                                                                  cfg.max_length))
    return {"train_seconds": train_s, "eval_seconds": eval_s, "predictions": logits.argmax(1).tolist(),
            "shapes": shapes, "losses": list(trained.losses), "real_tokens": real_tokens * epochs}


#: The ``Trainer`` configurations the fine-tuning stage runs beside ours: as a practitioner sets it
#: up (the strongest reference), and as the paper's official script does.
REFERENCES = {
    "trainer_tuned": "Trainer, dynamic padding (DataCollatorForMultipleChoice) + group_by_length",
    "trainer_official": "Trainer, the official script's features (every pair padded to max_length)",
}


def _trainer_features(tokenizer, items, fields: str, max_length: int, padded: bool):
    """The questions as ``Trainer`` datasets read them: a ``datasets.Dataset`` of per-question
    option lists with their labels and (for ``group_by_length``) their longest option's length,
    or, ``padded``, every (context, question + option) pair padded to ``max_length`` as the
    official script's features are. Returns the dataset and its number of real tokens."""
    import datasets

    from .models.mc import option_pairs

    pairs = [pair for it in items for pair in option_pairs(it, fields)]
    texts = ([b for _, b in pairs],) if pairs[0][0] is None else ([a for a, _ in pairs], [b for _, b in pairs])
    enc = tokenizer(*texts, truncation=True, max_length=max_length, padding="max_length" if padded else False)
    columns, start = {k: [] for k in enc}, 0
    for it in items:
        n = len(it.options)
        for k, v in enc.items():
            columns[k].append(v[start:start + n])
        start += n
    real = sum(sum(mask) for mask in enc["attention_mask"])
    lengths = [max(sum(mask) for mask in masks) for masks in columns["attention_mask"]]
    return datasets.Dataset.from_dict({**columns, "labels": [it.label for it in items], "length": lengths}), real


def _loss_keeping(trainer_class):
    """``trainer_class`` keeping each step's loss on the device until the end. With logging off and
    no NaN filter (which reads every step's loss back), the reference then waits for the GPU no
    more often than ours does; logging every step would make it wait each step."""

    class LossKeepingTrainer(trainer_class):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.step_losses = []

        def training_step(self, *args, **kwargs):
            loss = super().training_step(*args, **kwargs)
            self.step_losses.append(loss.detach())
            return loss

    return LossKeepingTrainer


def _train_reference(train, val, cfg: BenchConfig, rt, vocab_size: int, *, padded: bool, fields: str = "CQA",
                     epochs: float = 1, compiled: bool = False) -> dict:
    """The ``Trainer`` pipeline on the same items, in ``rt``'s dtype (``bf16=True`` under a bf16
    runtime): padded to ``max_length`` as the official script does, or (``padded=False``) as a
    practitioner configures it, padded per batch by ``DataCollatorForMultipleChoice`` with batches
    of similar lengths (``group_by_length``)."""
    import torch
    from transformers import DataCollatorForMultipleChoice, Trainer, TrainingArguments

    from .models.loading import load_multiple_choice, load_tokenizer

    with tempfile.TemporaryDirectory(prefix="rcstudy-bench-trainer-") as workdir:
        args = TrainingArguments(
            output_dir=workdir, num_train_epochs=epochs, per_device_train_batch_size=cfg.batch_size,
            per_device_eval_batch_size=cfg.eval_batch_size, learning_rate=cfg.lr, warmup_steps=0.1,
            weight_decay=0.01, max_grad_norm=1.0, lr_scheduler_type="linear", seed=cfg.seed,
            bf16=rt.bf16, use_cpu=not rt.cuda, dataloader_num_workers=0,
            train_sampling_strategy="random" if padded else "group_by_length",
            remove_unused_columns=False,  # else the length column is dropped before the sampler reads it
            save_strategy="no", logging_strategy="no", logging_nan_inf_filter=False, report_to="none",
            disable_tqdm=True, torch_compile=compiled,
        )
        with EmbeddingShapes(vocab_size) as shapes:
            start = _now(rt)
            tokenizer = load_tokenizer(cfg.mc_model)
            model = load_multiple_choice(cfg.mc_model, seed=cfg.seed)
            features, real_tokens = _trainer_features(tokenizer, train, fields, cfg.max_length, padded)
            pad = DataCollatorForMultipleChoice(tokenizer, padding=True)
            collate = lambda batch: pad([{k: v for k, v in f.items() if k != "length"} for f in batch])  # noqa: E731
            trainer = _loss_keeping(Trainer)(model=model, args=args, train_dataset=features, data_collator=collate)
            trainer.train()
            train_s = _now(rt) - start
        # under group_by_length, transformers groups evaluation batches by length too and `predict`
        # returns them in that order: evaluate in the questions' own order
        trainer.args.train_sampling_strategy = "random"
        start = _now(rt)
        out = trainer.predict(_trainer_features(tokenizer, val, fields, cfg.max_length, padded)[0])
        eval_s = _now(rt) - start
        if out.label_ids.tolist() != [it.label for it in val]:
            raise RuntimeError("Trainer.predict returned the val questions out of their order")
    losses = torch.stack(trainer.step_losses).tolist()
    return {"train_seconds": train_s, "eval_seconds": eval_s, "predictions": out.predictions.argmax(-1).tolist(),
            "shapes": shapes, "losses": losses, "real_tokens": real_tokens * epochs}


def _measured(result: dict, train, val, config, peak: dict | None, seed: int, epochs: float = 1) -> dict:
    """What one training run measured over ``epochs`` of ``train``: speed (every epoch's questions
    counted), tokens computed per real token, val accuracy with its bootstrap interval, the
    per-question correctness that paired intervals compare, the training loss curve, and the matmul FLOP rate as a share of ``peak``, which must have been measured in
    the run's dtype (the run's dtype is taken from it; None: no FLOP rate)."""
    import numpy as np

    from .stats import bootstrap_ci

    correct = (np.array(result["predictions"]) == np.array([it.label for it in val])).astype(int)
    seconds = result["train_seconds"]
    measured = {
        "train_seconds": seconds, "questions_per_s": len(train) * epochs / seconds,
        "eval_seconds": result["eval_seconds"], "eval_questions_per_s": len(val) / result["eval_seconds"],
        "accuracy": asdict(bootstrap_ci(correct, scale=100, seed=seed)), "correct": correct.tolist(),
        "tokens_processed": result["shapes"].tokens(), "real_tokens": result["real_tokens"],
        "tokens_per_real_token": result["shapes"].tokens() / result["real_tokens"], "losses": result["losses"],
    }
    if peak is None:
        return measured
    flops = result["shapes"].flops(config)
    return {"dtype": peak["dtype"], **measured, "train_flops": flops, "flops_per_s": flops / seconds,
            "fraction_of_peak": flops / seconds / peak["flops_per_s"]}


def _training_facts(cfg: BenchConfig, train, val) -> dict:
    """What every training run of a stage shares: the model, the steps and the items."""
    return {"model": cfg.mc_model, "train_questions": len(train), "steps": cfg.train_steps,
            "batch_size": cfg.batch_size, "eval_questions": len(val), "max_length": cfg.max_length}


def _references(train, val, cfg: BenchConfig, rt, vocab_size: int, **kwargs) -> dict:
    """Both ``Trainer`` configurations of :data:`REFERENCES` on the same items."""
    runs = {}
    for name, label in REFERENCES.items():
        _log(f"▶ the same with transformers.{label}")
        runs[name] = _train_reference(train, val, cfg, rt, vocab_size, padded=name == "trainer_official", **kwargs)
    return runs


def stage_train(cfg: BenchConfig, rt) -> tuple[dict, dict]:
    """Stages a and c: ours against both ``Trainer`` configurations, the ratio against the faster
    of them (the strongest reference), and the FLOP rates of every run."""
    from .models.loading import model_config
    from .stats import paired_difference

    train, val = _reclor(cfg)
    config = model_config(cfg.mc_model)
    _log(f"▶ a. fine-tuning {cfg.mc_model} on {len(train)} ReClor questions, ours")
    runs = {"ours": _train_ours(train, val, cfg, rt, config.vocab_size)}
    runs |= _references(train, val, cfg, rt, config.vocab_size)
    _log(f"▶ c. matmul peak ({cfg.peak_size}×{cfg.peak_size})")
    peak = matmul_peak(rt, cfg.peak_size, cfg.peak_reps)

    systems = {name: _measured(m, train, val, config, peak, cfg.seed) for name, m in runs.items()}
    strongest = max(REFERENCES, key=lambda name: systems[name]["questions_per_s"])
    ours, ref = systems["ours"], systems[strongest]
    training = {
        **_training_facts(cfg, train, val), **systems, "strongest": strongest,
        "speedups": {name: ours["questions_per_s"] / systems[name]["questions_per_s"] for name in REFERENCES},
        "speedup": ours["questions_per_s"] / ref["questions_per_s"],
        "eval_speedup": ours["eval_questions_per_s"] / ref["eval_questions_per_s"],
        "accuracy_difference": asdict(paired_difference(ours["correct"], ref["correct"], seed=cfg.seed)),
    }
    flops = {"peak": peak, **{name: {k: s[k] for k in ("flops_per_s", "fraction_of_peak")}
                              for name, s in systems.items()}}
    return training, flops


# --- f. quality: the same accuracy from ours and the strongest reference, where both learn ------

#: A run learned when its final training loss is below this share of ln k and its val accuracy's
#: interval lies above chance; only then can two runs be tested for equivalence.
LEARNED_LOSS_SHARE = 0.9


def learned(run: dict, k: int) -> bool:
    """Whether a measured run (:func:`_measured`) learned: loss below 0.9 · ln k, accuracy above 1/k."""
    from .learning import final_loss

    return (final_loss(run["losses"]) < LEARNED_LOSS_SHARE * math.log(k)
            and run["accuracy"]["low"] > 100 / k)


def equivalence_verdict(ours: dict, ref: dict, equivalence, k: int) -> str:
    """"equivalent", "equivalence not shown", or "not comparable" naming the run(s) that did not learn."""
    failed = [name for name, run in (("ours", ours), ("the reference", ref)) if not learned(run, k)]
    if len(failed) == 2:
        return "not comparable: neither run learned"
    if failed:
        return f"not comparable: {failed[0]} did not learn"
    return "equivalent" if equivalence.equivalent else "equivalence not shown: the interval reaches past the margin"


def stage_quality(cfg: BenchConfig, rt) -> dict:
    """Stage f: ours and the tuned ``Trainer`` trained on a task the model learns within the
    budget (ReClor with ``quality_fields``, by default the options alone, whose biases a small
    encoder picks up), then a TOST equivalence test of their per-question correctness on val and
    the held-out train questions with a margin of ``equivalence_margin`` points; "not comparable"
    where a run did not learn."""
    from .learning import final_loss
    from .models.loading import model_config
    from .stats import paired_equivalence

    train, held_out = _quality_split(cfg)
    val = _reclor_val(cfg)
    scored = val + held_out
    config = model_config(cfg.mc_model)
    what = dict(fields=cfg.quality_fields, epochs=cfg.quality_epochs)
    _log(f"▶ f. fine-tuning {cfg.mc_model} on {len(train)} ReClor questions ({cfg.quality_fields}) "
         f"for {cfg.quality_epochs:g} epochs, ours")
    ours = _train_ours(train, scored, cfg, rt, config.vocab_size, **what)
    _log(f"▶ f. the same with transformers.{REFERENCES['trainer_tuned']}")
    ref = _train_reference(train, scored, cfg, rt, config.vocab_size, padded=False, **what)
    systems = {name: _measured(m, train, scored, config, None, cfg.seed, cfg.quality_epochs)
               for name, m in (("ours", ours), ("reference", ref))}
    k = len(val[0].options)
    test = paired_equivalence(systems["ours"]["correct"], systems["reference"]["correct"],
                              margin=cfg.equivalence_margin, seed=cfg.seed)
    return {"model": cfg.mc_model, "fields": cfg.quality_fields, "epochs": cfg.quality_epochs,
            "train_questions": len(train), "eval_questions": len(scored), "val_questions": len(val),
            "held_out_questions": len(held_out), "options": k,
            **{name: {**run, "final_loss": final_loss(run["losses"]), "learned": learned(run, k)}
               for name, run in systems.items()},
            "difference": asdict(test.difference), "margin": test.margin, "equivalent": test.equivalent,
            "verdict": equivalence_verdict(systems["ours"], systems["reference"], test, k)}


# --- b. zero-shot option scoring: ours vs lm-evaluation-harness ---------------------------------

TASK = "rcstudy_bench_task"
#: lm-evaluation-harness's own ``logiqa`` task (its prompt, choices, target, ``acc`` and ``acc_norm``),
#: reading the local LogiQA test questions in its dataset's layout (``EleutherAI/logiqa``).
TASK_YAML = """\
include: {harness}/logiqa/logiqa.yaml
task: {task}
dataset_path: json
dataset_name: null
dataset_kwargs:
  data_files:
    test: {docs}
  cache_dir: {cache}
training_split: null
validation_split: null
test_split: test
"""
#: Its ``record`` task (SuperGLUE's ReCoRD: the passage and its highlights, then each entity
#: filled into the query as a bullet; EM and F1 of the likeliest entity) on local ReCoRD queries.
RECORD_YAML = """\
include: {harness}/super_glue/record/default.yaml
task: {task}
tag: []
dataset_path: json
dataset_name: null
dataset_kwargs:
  data_files:
    validation: {docs}
  cache_dir: {cache}
training_split: null
"""
#: The harness's metrics, with the scores that decide each (our scorer's ``option_scores`` keys).
HARNESS_METRICS = {"acc": "sum", "acc_norm": "per_char"}


def harness_doc(item) -> dict:
    """A LogiQA question as a document of the harness's ``logiqa`` dataset (``EleutherAI/logiqa``)."""
    return {"label": "abcd"[item.label], "context": item.context, "question": item.question,
            "options": list(item.options)}


def _harness_evaluate(lm, task_yaml: str, docs: list[dict], cfg: BenchConfig, rt) -> tuple[list[dict], float]:
    """Run one harness task (``task_yaml``, formatted with ``docs``' file and a cache folder) on
    ``lm``'s model object: its per-document samples in order, and the seconds the evaluation took."""
    import torch

    try:
        from lm_eval import evaluator
        from lm_eval.models.huggingface import HFLM
        from lm_eval.tasks import TaskManager
    except ImportError:
        raise ImportError("the scoring stage compares with lm-evaluation-harness: "
                          "pip install -r requirements-dev.txt (lm-eval)") from None

    quiet = logging.getLogger("lm_eval")
    level, quiet.level = quiet.level, logging.ERROR
    try:
        with tempfile.TemporaryDirectory(prefix="rcstudy-bench-task-") as tmp:
            path = Path(tmp) / "docs.jsonl"
            path.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
            (Path(tmp) / "task.yaml").write_text(task_yaml.format(task=TASK, harness=_harness_tasks(), docs=path,
                                                                  cache=Path(tmp) / "cache"))
            tasks = TaskManager(include_path=tmp, include_defaults=False).load([TASK])
            model = HFLM(pretrained=lm.model, tokenizer=lm.tokenizer, batch_size=cfg.lm_batch_size,
                         max_length=lm.max_length, softmax_dtype=torch.float32,
                         mixed_precision_dtype=torch.bfloat16 if rt.bf16 else None)
            start = _now(rt)
            out = evaluator.evaluate(lm=model, task_dict=tasks, log_samples=True, bootstrap_iters=0,
                                     verbosity="ERROR")
            seconds = _now(rt) - start
    finally:
        quiet.level = level
    return sorted(out["samples"][TASK], key=lambda s: s["doc_id"]), seconds


def _harness_tasks() -> Path:
    import lm_eval

    return Path(lm_eval.__file__).parent / "tasks"


def _harness_scores(lm, items, cfg: BenchConfig, rt) -> tuple[dict, dict, float]:
    """lm-evaluation-harness's ``logiqa`` task on ``items``: the log-likelihood of every option,
    each document's ``acc`` and ``acc_norm``, and the seconds its evaluation took."""
    import numpy as np

    samples, seconds = _harness_evaluate(lm, TASK_YAML, [harness_doc(it) for it in items], cfg, rt)
    logliks = np.array([[float(ll) for ll, _ in s["filtered_resps"]] for s in samples])
    return logliks, {m: np.array([float(s[m]) for s in samples]) for m in HARNESS_METRICS}, seconds


def _logiqa(n: int | None) -> list:
    """The first ``n`` LogiQA test questions (all of them for None)."""
    from .data.logiqa import load_logiqa

    items = load_logiqa("test")
    return items[:n] if n else items


def _our_scores(lm, items, cfg: BenchConfig) -> tuple[dict, float]:
    """The LogiQA chapter's scores of every option (:func:`rcstudy.baselines.option_lm.option_scores`,
    the harness's prompt), and their seconds."""
    from .baselines.option_lm import option_scores

    start = _now(lm.rt)
    scores = option_scores(lm, items, batch_size=cfg.lm_batch_size)
    return scores, _now(lm.rt) - start


def _scored(scores: dict, seconds: float, items) -> dict:
    """One scorer's speed and its accuracy under each of the harness's metrics."""
    import numpy as np

    gold = np.array([it.label for it in items])
    return {"seconds": seconds, "items_per_s": len(items) / seconds,
            **{metric: 100 * float((scores[key].argmax(1) == gold).mean()) for metric, key in HARNESS_METRICS.items()}}


def _agreement(a: dict, b: dict, items) -> dict:
    """How far two scorings of the same options agree: on the predicted option under ``acc`` (and
    ``acc_norm``), and in log-likelihood."""
    import numpy as np

    same = {m: int((a[k].argmax(1) == b[k].argmax(1)).sum()) for m, k in HARNESS_METRICS.items()}
    return {"identical_predictions": same["acc"], "identical_share": same["acc"] / len(items),
            "identical_predictions_norm": same["acc_norm"],
            "max_abs_loglik_difference": float(np.abs(a["sum"] - b["sum"]).max())}


def _scoring_facts(cfg: BenchConfig, items) -> dict:
    """What every scoring run of a stage shares: the model, the items and the batch size."""
    return {"model": cfg.lm_model, "items": len(items), "options": sum(len(it.options) for it in items),
            "batch_size": cfg.lm_batch_size}


def record_doc(query) -> dict:
    """A ReCoRD query as a document of the harness's ``record`` task, its ``process_docs`` applied."""
    return {"passage": query.passage, "query": query.query, "entities": sorted(set(query.candidates)),
            "answers": sorted(set(query.answers))}


def _squad_metrics_module() -> str:
    """Make the harness's ``record`` task importable: its ``util`` imports
    ``transformers.data.metrics.squad_metrics``, which transformers 5 no longer has. Where it is
    missing, the ReCoRD chapter's EM and F1 (the official ReCoRD script's) stand in for its
    ``compute_exact`` / ``compute_f1``. Returns the module the harness's EM and F1 came from."""
    import importlib
    import types

    name = "transformers.data.metrics.squad_metrics"
    try:
        importlib.import_module(name)
        return name
    except ModuleNotFoundError:
        from .metrics.record import exact_match_score, f1_score

        stand_in = types.ModuleType(name)
        stand_in.compute_exact, stand_in.compute_f1 = exact_match_score, f1_score
        for parent in ("transformers.data", "transformers.data.metrics"):
            sys.modules.setdefault(parent, types.ModuleType(parent))
        sys.modules[name] = stand_in
        return "rcstudy.metrics.record (transformers has no squad_metrics)"


def _harness_pair(context: str, continuation: str) -> tuple[str, str]:
    """A (context, continuation) request as the harness's ``HFLM`` scores it: whitespace that ends
    the context moves to the start of the continuation (ReCoRD's passage ends in a newline)."""
    spaces = len(context) - len(context.rstrip())
    return (context[:-spaces], context[-spaces:] + continuation) if spaces else (context, continuation)


def _record_comparison(lm, cfg: BenchConfig, rt) -> dict:
    """Our scorer and metrics against the harness's ``record`` task on ``record_items`` ReCoRD
    eval queries. The prompts are the harness's own (its ``util`` functions), so what is compared
    is the log-likelihood engine and the EM / F1 of the likeliest entity."""
    import numpy as np

    metric_source = _squad_metrics_module()
    from lm_eval.tasks.super_glue.record import util

    from .data.record import load_record
    from .metrics.record import exact_match_score, f1_score, max_over_ground_truths

    queries = load_record().eval[: cfg.record_items]
    docs = [record_doc(q) for q in queries]
    pairs = [_harness_pair(util.doc_to_text(d), " " + choice) for d in docs for choice in util.doc_to_choice(d)]
    contexts, continuations = [c for c, _ in pairs], [c for _, c in pairs]
    _log(f"▶ b. scoring {len(contexts)} ReCoRD candidates of {len(docs)} queries with {cfg.lm_model}, ours")
    start = _now(rt)
    flat = np.asarray(lm.loglik(contexts, continuations, batch_size=cfg.lm_batch_size))
    ours_s = _now(rt) - start
    ends = np.cumsum([len(d["entities"]) for d in docs])
    ours = [flat[end - len(d["entities"]):end] for d, end in zip(docs, ends)]
    _log("▶ b. the same with lm-evaluation-harness's record task")
    samples, harness_s = _harness_evaluate(lm, RECORD_YAML, docs, cfg, rt)
    harness = [np.array([float(ll) for ll, _ in s["filtered_resps"]]) for s in samples]
    picked = [d["entities"][int(np.argmax(scores))] for d, scores in zip(docs, ours)]
    same = sum(int(np.argmax(a) == np.argmax(b)) for a, b in zip(ours, harness))
    return {"items": len(docs), "options": len(contexts), "identical_predictions": same, "harness_metrics": metric_source,
            "max_abs_loglik_difference": float(max(np.abs(a - b).max() for a, b in zip(ours, harness))),
            "ours": {"seconds": ours_s, "items_per_s": len(docs) / ours_s,
                     "em": 100 * float(np.mean([max_over_ground_truths(exact_match_score, p, d["answers"])
                                                for p, d in zip(picked, docs)])),
                     "f1": 100 * float(np.mean([max_over_ground_truths(f1_score, p, d["answers"])
                                                for p, d in zip(picked, docs)]))},
            "reference": {"seconds": harness_s, "items_per_s": len(docs) / harness_s,
                          **{m: 100 * float(np.mean([s[m] for s in samples])) for m in ("em", "f1")}},
            "speedup": harness_s / ours_s}


def stage_score(cfg: BenchConfig, rt) -> dict:
    """Stage b: the LogiQA chapter's option scores against lm-evaluation-harness's own ``logiqa``
    task on the same model object: the predictions of ``acc`` and ``acc_norm``, the harness's
    own per-document metrics, and the time of each."""
    from .baselines.option_lm import per_character
    from .models.lm import CausalLM

    items = _logiqa(cfg.lm_items)
    lm = CausalLM.load(cfg.lm_model, rt)
    facts = _scoring_facts(cfg, items)
    _log(f"▶ b. scoring {facts['options']} LogiQA options with {cfg.lm_model}, ours")
    ours, ours_s = _our_scores(lm, items, cfg)
    _log("▶ b. the same with lm-evaluation-harness's logiqa task")
    logliks, metrics, harness_s = _harness_scores(lm, items, cfg, rt)
    harness = {"sum": logliks, "per_char": per_character(logliks, items)}
    reference = _scored(harness, harness_s, items)
    # the harness's own acc / acc_norm must be what its log-likelihoods give under our definitions
    reported = {m: 100 * float(v.mean()) for m, v in metrics.items()}
    out = {**facts, "ours": _scored(ours, ours_s, items), "reference": reference, "harness_reported": reported,
           "speedup": harness_s / ours_s, **_agreement(ours, harness, items),
           "record": _record_comparison(lm, cfg, rt)}
    if rt.bf16:
        out["fp32"] = _fp32_agreement(cfg, rt, items)
    return out


def _fp32_agreement(cfg: BenchConfig, rt, items) -> dict:
    """Both scorers again in fp32. Under bf16 the two round differently (other batches, other
    kernels), so a near tie can flip; in fp32 the definitions alone decide: identical predictions
    here show that a bf16 disagreement is rounding, not a difference in what is computed."""
    from .baselines.option_lm import per_character
    from .models.lm import CausalLM

    with in_precision(rt, "fp32") as here:
        lm = CausalLM.load(cfg.lm_model, here)
        _log("▶ b. the LogiQA comparison again in fp32, ours then the harness's")
        ours, ours_s = _our_scores(lm, items, cfg)
        logliks, _, harness_s = _harness_scores(lm, items, cfg, here)
    harness = {"sum": logliks, "per_char": per_character(logliks, items)}
    return {"ours_seconds": ours_s, "reference_seconds": harness_s, **_agreement(ours, harness, items)}


# --- g. cost curves: how time and memory grow with the work -------------------------------------

#: The curves: which engine, which reference (the strongest of stages a and b), what grows.
CURVES = {"fine-tuning: questions": ("train", "trainer_tuned", "questions"),
          "fine-tuning: tokens per option": ("train", "trainer_tuned", "length"),
          "scoring: questions": ("score", "harness", "questions")}


def lengthened(items, tokenizer, length: int) -> list:
    """``items`` with each passage repeated until every (passage, question + option) pair fills
    ``length`` tokens once truncated to it: the same questions at a chosen sequence length."""
    out = []
    for it in items:
        tokens = len(tokenizer(it.context)["input_ids"])
        out.append(replace(it, context=" ".join([it.context] * (length // max(tokens, 1) + 1))))
    return out


def peak_rss_mb() -> float:
    """This process's peak resident memory since it started its program (``VmHWM``). Not
    ``ru_maxrss``: after fork and exec, Linux carries the parent's peak into the child's."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (2**20 if sys.platform == "darwin" else 1024)


def cost_point(spec: dict) -> dict:
    """One point of a cost curve (run in a process of its own, whose peak memory is the point's):
    ``spec`` names the engine (train, score), the system, the number of questions and, for
    training, the sequence length. Returns the seconds of the work alone."""
    from . import runtime
    from .models.loading import model_config

    rt = runtime.setup(spec["device"], threads=spec["threads"], precision=spec["precision"])
    cfg = BenchConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in spec["config"].items()})
    if spec["engine"] == "score":
        from .models.lm import CausalLM

        items, lm = _logiqa(spec["questions"]), CausalLM.load(cfg.lm_model, rt)
        seconds = (_our_scores(lm, items, cfg)[1] if spec["system"] == "ours"
                   else _harness_scores(lm, items, cfg, rt)[2])
        return {"seconds": seconds, "peak_rss_mb": peak_rss_mb()}
    from .models.loading import load_tokenizer

    train = _reclor_train(spec["questions"])
    val = train[:1]  # the work timed is the training; one question keeps the evaluation negligible
    if spec.get("length"):
        cfg = replace(cfg, max_length=spec["length"])
        train = lengthened(train, load_tokenizer(cfg.mc_model), spec["length"])
    cfg = replace(cfg, batch_size=min(cfg.batch_size, len(train)))
    # A training point is timed from loading its model, a scoring point only after it: only training
    # needs the GPU's one-time costs paid first, at the point's own lengths and batch size.
    warm_device(cfg, rt)
    vocab = model_config(cfg.mc_model).vocab_size
    run = (_train_ours(train, val, cfg, rt, vocab) if spec["system"] == "ours"
           else _train_reference(train, val, cfg, rt, vocab, padded=False))
    return {"seconds": run["train_seconds"], "tokens_processed": run["shapes"].tokens(), "peak_rss_mb": peak_rss_mb()}


def _timed_point(spec: dict, folder: Path) -> dict:
    """:func:`cost_point` in a child process: its seconds and its own peak memory."""
    out = folder / f"point-{time.monotonic_ns()}.json"
    code = ("import json, sys; from rcstudy.bench import cost_point; "
            "json.dump(cost_point(json.loads(sys.argv[1])), open(sys.argv[2], 'w'))")
    result = timed_process([sys.executable, "-c", code, json.dumps(spec), str(out)], log=out.with_suffix(".log"),
                           cwd=PROJECT_ROOT)
    if result["returncode"] != 0:
        tail = "\n".join(out.with_suffix(".log").read_text(errors="replace").splitlines()[-20:])
        raise RuntimeError(f"a cost-curve point failed ({spec['engine']}, {spec['system']}, "
                           f"{spec['questions']} questions):\n{tail}")
    return json.loads(out.read_text())


def growth_exponent(sizes, seconds) -> float:
    """The slope of log(seconds) against log(size): 1 for linear growth, 2 for quadratic."""
    import numpy as np

    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def stage_curves(cfg: BenchConfig, rt) -> dict:
    """Stage g: time and peak memory of ours and the strongest reference at growing amounts of work
    (:data:`CURVES`), each point in a fresh process, with the fitted growth exponent of each line."""
    base = {"device": rt.device.type, "threads": rt.threads, "precision": "bf16" if rt.bf16 else "fp32",
            "config": asdict(cfg)}
    curves = {}
    with tempfile.TemporaryDirectory(prefix="rcstudy-bench-curves-") as tmp:
        for name, (engine, reference, grows) in CURVES.items():
            xs = cfg.curve_lengths if grows == "length" else cfg.curve_sizes
            lines = {}
            for system in ("ours", reference):
                points = []
                for x in xs:
                    _log(f"▶ g. {name} = {x}, {system}")
                    spec = {**base, "engine": engine, "system": system,
                            "questions": cfg.curve_length_questions if grows == "length" else x,
                            "length": x if grows == "length" else None}
                    points.append({"x": x, **_timed_point(spec, Path(tmp))})
                lines[system] = {"points": points,
                                 "exponent": growth_exponent(xs, [p["seconds"] for p in points])}
            curves[name] = {"x": grows, "lines": lines}
    return curves


# --- d. the book build ------------------------------------------------------------------------

def timed_process(cmd: list[str], *, log: Path, **kwargs) -> dict:
    """Run ``cmd`` (output to ``log``); its wall time, exit code and the peak RSS of its largest process."""
    start = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, **kwargs)
        _, status, usage = os.wait4(proc.pid, 0)  # the rusage of the child and its waited-for descendants
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"seconds": time.perf_counter() - start, "returncode": proc.returncode,
            "peak_rss_mb": usage.ru_maxrss / 1024}


def recorded_timings(profile: str, root: Path | None = None, kind: str = "cold") -> dict[str, float]:
    """The per-chapter wall times (``kind`` cold or latest) the runner recorded for ``profile``."""
    from .run import read_timings

    return {chapter: t[kind] for chapter, t in read_timings(root).get(profile, {}).items() if kind in t}


def _timed_build(profile: str, root: Path, env: dict) -> dict:
    log = root.parent / f"build-{time.monotonic_ns()}.log"
    result = timed_process([sys.executable, "-m", "rcstudy", "build", "--profile", profile, "--root", str(root)],
                           log=log, env=env, cwd=PROJECT_ROOT)
    if result["returncode"] != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"`rcstudy build --profile {profile}` failed (exit {result['returncode']}):\n{tail}")
    return {**result, "chapters": recorded_timings(profile, root, kind="latest")}


def edited_chapters(folder: Path, chapter: str) -> Path:
    """A copy of the chapters' sources in ``folder`` with a sentence added to ``chapter``'s text."""
    from .run import CHAPTERS_DIR

    shutil.copytree(CHAPTERS_DIR, folder)
    with open(folder / f"{chapter}.md", "a") as f:
        f.write("\nA sentence added to the text.\n")
    return folder


def stage_book(cfg: BenchConfig) -> dict:
    """Stage d: the book built in ``cfg.book_profile`` into a temporary root, warm (and cold)."""
    profile = cfg.book_profile
    recorded = recorded_timings(profile)
    if not cfg.book_cold and not recorded:
        raise RuntimeError(
            f"no cold {profile}-profile timings in {book_root() / 'book' / 'timings.json'}: build the book "
            f"once from an empty cache (`make book PROFILE={profile}`) so that the cold time is recorded, "
            f"or pass -p book_cold=true to measure a cold build here (about an hour on 2 cores)")
    with tempfile.TemporaryDirectory(prefix="rcstudy-bench-book-") as tmp:
        env = dict(os.environ)
        result = {"profile": profile}
        if cfg.book_cold:
            env["RCSTUDY_CACHE"] = str(Path(tmp) / "cache")  # nothing cached: every result is computed
            _log(f"▶ d. cold build of the {profile} book")
            result["cold"] = {**_timed_build(profile, Path(tmp) / "cold", env), "source": "measured"}
        else:
            result["cold"] = {"seconds": sum(recorded.values()), "chapters": recorded,
                              "source": "book/timings.json (chapter execution only)"}
        root = Path(tmp) / "warm"
        _log(f"▶ d. warm build of the {profile} book (every chapter re-executed, results cached)")
        result["warm_all"] = _timed_build(profile, root, env)
        edited = edited_chapters(Path(tmp) / "chapters", cfg.book_edited)
        _log(f"▶ d. rebuild after a text-only edit of {cfg.book_edited}")
        result["warm"] = {**_timed_build(profile, root, {**env, "RCSTUDY_CHAPTERS": str(edited)}),
                          "edited": cfg.book_edited}
    return result


# --- e. the same work in fp32 and in bf16 -------------------------------------------------------

def _precision_training(cfg: BenchConfig, rt) -> dict:
    """Our trainer in each precision, each against the matmul peak of its own dtype, and the tuned
    ``Trainer`` in bf16, so that our speed-up over it is also known with both in bf16."""
    from .models.loading import model_config
    from .stats import paired_difference

    train, val = _reclor(cfg)
    config = model_config(cfg.mc_model)
    runs, peaks = {}, {}
    for precision in PRECISIONS:
        with in_precision(rt, precision) as here:
            _log(f"▶ e. fine-tuning {cfg.mc_model} on {len(train)} ReClor questions in {precision}, ours")
            trained = _train_ours(train, val, cfg, here, config.vocab_size)
            _log(f"▶ e. {precision} matmul peak ({cfg.peak_size}×{cfg.peak_size})")
            peaks[precision] = matmul_peak(here, cfg.peak_size, cfg.peak_reps)
            runs[precision] = _measured(trained, train, val, config, peaks[precision], cfg.seed)
    with in_precision(rt, "bf16") as here:
        _log(f"▶ e. the same with transformers.{REFERENCES['trainer_tuned']}, in bf16")
        trained = _train_reference(train, val, cfg, here, config.vocab_size, padded=False)
    runs["reference_bf16"] = _measured(trained, train, val, config, peaks["bf16"], cfg.seed)
    diff = paired_difference(runs["fp32"]["correct"], runs["bf16"]["correct"], seed=cfg.seed)
    return {**_training_facts(cfg, train, val), **runs, "peaks": peaks, "reference": "trainer_tuned",
            "speedup": runs["bf16"]["questions_per_s"] / runs["fp32"]["questions_per_s"],
            "reference_speedup": runs["bf16"]["questions_per_s"] / runs["reference_bf16"]["questions_per_s"],
            "accuracy_difference": asdict(diff)}


def _precision_scoring(cfg: BenchConfig, rt) -> dict:
    """Our scorer's option log-likelihoods in each precision, and how far bf16 moves them."""
    from .models.lm import CausalLM

    items = _logiqa(cfg.precision_lm_items)
    scores, runs = {}, {}
    for precision in PRECISIONS:
        with in_precision(rt, precision) as here:
            _log(f"▶ e. scoring LogiQA options with {cfg.lm_model} in {precision}, ours")
            scores[precision], seconds = _our_scores(CausalLM.load(cfg.lm_model, here), items, cfg)
        runs[precision] = _scored(scores[precision], seconds, items)
    return {**_scoring_facts(cfg, items), **runs, **_agreement(scores["fp32"], scores["bf16"], items)}


def stage_precision(cfg: BenchConfig, rt) -> dict:
    """Stage e: the training of (a) and the scoring of (b) with our engines, in fp32 and in bf16;
    ``rt``'s own setup is in force again afterwards."""
    return {"training": _precision_training(cfg, rt), "scoring": _precision_scoring(cfg, rt)}


# --- h. full-size replicas: the plan's utilisation, measured, and the plan checked ---------------

def _replica_texts() -> list[str]:
    """The text replica tokenizers learn (the test fixtures'), whichever data directory is in use."""
    from .models.replicas import fixture_texts

    return fixture_texts(PROJECT_ROOT / "tests" / "fixtures" / "data")


def _write_replica(name: str, folder: Path, cfg: BenchConfig, texts: list[str]) -> Path:
    """The replica of Hub id ``name`` under ``folder`` (``RCSTUDY_REPLICAS``'s layout): full-size
    random weights (``replica_full_size``) or the tiny one, with a tokenizer trained on ``texts``."""
    from .models import replicas

    target = replicas.replica_dir(folder, name)
    if not cfg.replica_full_size:
        return replicas.build_replica(name, target, texts)
    family = replicas.FAMILIES[replicas.family_of(name)]
    tokenizer = replicas.train_tokenizer(family, texts)
    model = replicas.build_full_replica(name, "cpu")
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def _gpu_card(rt, peak: dict):
    """The GPU of :data:`rcstudy.plan.GPUS` this device is (its data-sheet peak and bandwidth), or,
    on a CPU or an unknown GPU, the peak measured here (no bandwidth)."""
    from .plan import GPU, GPUS, gpu_of_device

    if rt.cuda:
        import torch

        key = gpu_of_device(torch.cuda.get_device_name(0))
        if key:
            return key, GPUS[key]
    return None, GPU(peak["flops_per_s"], f"the matmul peak measured here ({peak['dtype']})")


def _replica_training(cfg: BenchConfig, rt, folder: Path, card, peak: dict) -> dict:
    """Fine-tuning the mc replica at the paper's length: ours and the tuned ``Trainer`` (and, with
    ``trainer_compile``, the tuned ``Trainer`` under torch.compile), FLOP/s on real tokens against
    the GPU's data-sheet peak (the plan's) and the measured matmul peak."""
    from .models.loading import model_config

    run_cfg = replace(cfg, mc_model=cfg.replica_mc_model, train_steps=cfg.replica_train_steps,
                      batch_size=cfg.replica_batch_size, max_length=cfg.replica_max_length)
    train, val = _reclor(run_cfg)
    val = val[: cfg.replica_batch_size]  # the training is timed; a batch of val keeps evaluation short
    config = model_config(run_cfg.mc_model)
    _log(f"▶ h. fine-tuning the {cfg.replica_mc_model} replica on {len(train)} ReClor questions, ours")
    warm_device(run_cfg, rt)
    runs = {"ours": _train_ours(train, val, run_cfg, rt, config.vocab_size)}
    _log(f"▶ h. the same with transformers.{REFERENCES['trainer_tuned']}")
    runs["trainer_tuned"] = _train_reference(train, val, run_cfg, rt, config.vocab_size, padded=False)
    if cfg.trainer_compile:
        _log("▶ h. the same under torch.compile")
        runs["trainer_tuned_compiled"] = _train_reference(train, val, run_cfg, rt, config.vocab_size, padded=False,
                                                          compiled=True)
    out = {**_training_facts(run_cfg, train, val), "model": f"{cfg.replica_mc_model} replica"}
    for name, result in runs.items():
        m = _measured(result, train, val, config, peak, cfg.seed)
        real_share = m["fraction_of_peak"] * m["real_tokens"] / m["tokens_processed"]  # the work on real tokens
        out[name] = {k: m[k] for k in ("train_seconds", "questions_per_s", "tokens_processed", "real_tokens",
                                       "tokens_per_real_token", "train_flops", "flops_per_s", "fraction_of_peak")}
        out[name] |= {"real_fraction_of_peak": real_share,
                      "real_share_of_card": m["flops_per_s"] * m["real_tokens"] / m["tokens_processed"] / card.bf16_flops}
    out["speedup"] = out["ours"]["questions_per_s"] / out["trainer_tuned"]["questions_per_s"]
    return out


class _RealTokens:
    """While active, counts the non-padding token ids each forward pass of ``model`` embeds."""

    def __init__(self, model, pad_id: int):
        self.model, self.pad_id, self.tokens = model, pad_id, 0

    def _hook(self, module, args, output):
        self.tokens += int((args[0] != self.pad_id).sum())

    def __enter__(self):
        self._handle = self.model.get_input_embeddings().register_forward_hook(self._hook)
        return self

    def __exit__(self, *exc):
        self._handle.remove()


def _replica_lm(cfg: BenchConfig, rt, folder: Path, texts: list[str]):
    """Our causal-LM engine over the replica of ``replica_lm_model``: full size, its weights drawn on
    the device in fp32 (as the engine holds them), or the tiny one from ``folder``."""
    from .models import replicas
    from .models.lm import CausalLM, fp32_output_head

    name = cfg.replica_lm_model
    if not cfg.replica_full_size:
        return CausalLM.load(name, rt)
    tokenizer = replicas.train_tokenizer(replicas.FAMILIES[replicas.family_of(name)], texts)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = fp32_output_head(replicas.build_full_replica(name, rt.device).eval())
    return CausalLM(name, model, tokenizer, rt, 2048)


def _replica_scoring(cfg: BenchConfig, rt, folder: Path, texts: list[str], card) -> dict:
    """Scoring LogiQA options with the LM replica (ours, and lm-evaluation-harness's task where it
    runs), and greedy generation; the scoring share of the data-sheet peak on the tokens run, and
    the decoding steps' share of the memory bandwidth."""
    import math as _math

    from .plan import WEIGHT_BYTES, model_size

    lm = _replica_lm(cfg, rt, folder, texts)
    size = model_size(cfg.replica_lm_model)
    params = size.params if cfg.replica_full_size else sum(p.numel() for p in lm.model.parameters())
    items = _logiqa(cfg.replica_lm_items)
    run_cfg = replace(cfg, lm_model=cfg.replica_lm_model)
    _log(f"▶ h. scoring {sum(len(it.options) for it in items)} LogiQA options with the {cfg.replica_lm_model} replica, ours")
    _our_scores(lm, items[:2], run_cfg)  # untimed: kernels and the autocast cast of the weights
    with _RealTokens(lm.model, lm.tokenizer.pad_token_id) as counted:
        _, seconds = _our_scores(lm, items, run_cfg)
    out = {"model": f"{cfg.replica_lm_model} replica", "items": len(items), "batch_size": cfg.lm_batch_size,
           "ours": {"seconds": seconds, "items_per_s": len(items) / seconds, "tokens": counted.tokens,
                    "share_of_card": 2 * params * counted.tokens / seconds / card.bf16_flops}}
    if cfg.replica_harness:
        _log("▶ h. the same with lm-evaluation-harness's logiqa task")
        try:
            with _RealTokens(lm.model, lm.tokenizer.pad_token_id) as counted:
                harness_s = _harness_scores(lm, items, run_cfg, rt)[2]
            out["reference"] = {"seconds": harness_s, "items_per_s": len(items) / harness_s, "tokens": counted.tokens}
            out["speedup"] = harness_s / seconds
        except Exception as e:  # noqa: BLE001 - the comparison is optional; the record says why it is missing
            out["reference_error"] = f"{type(e).__name__}: {e}".splitlines()[0]
    prompts = [f"{it.context}\n{it.question}" for it in items][: cfg.replica_generate_prompts]
    gen = lm.model.generation_config
    gen.eos_token_id, gen.min_new_tokens = None, cfg.replica_generate_tokens  # random weights: no early stop
    n, t, b = len(prompts), cfg.replica_generate_tokens, cfg.replica_generate_batch
    _log(f"▶ h. generating {t} tokens after {n} prompts, {b} a batch")
    start = _now(rt)
    lm.generate(prompts, t, batch_size=b)
    gen_s = _now(rt) - start
    steps = t * _math.ceil(n / b)
    decoding = size.decoding if cfg.replica_full_size else params
    out["generation"] = {"prompts": n, "new_tokens": t, "batch_size": b, "decode_steps": steps, "seconds": gen_s,
                         "seconds_per_step": gen_s / steps,
                         "bandwidth_share": (WEIGHT_BYTES * decoding * steps / gen_s / card.bandwidth
                                             if _math.isfinite(card.bandwidth) else None)}
    del lm
    return out


def _plan_check(cfg: BenchConfig, rt, folder: Path, card, table: dict) -> dict:
    """One full-profile job of ``plan_check_chapter`` (its first fine-tuning of ``replica_mc_model``,
    one seed, one epoch) run here on replicas, its wall time against the plan's prediction for the
    same job with this run's utilisation (:func:`rcstudy.plan.job_cost`)."""
    from . import chapters, plan
    from .models.registry import split_revision

    chapter = cfg.plan_check_chapter
    overrides = _plan_check_overrides(chapter, cfg)
    jobs = plan.chapter_jobs(chapter, "full", overrides)
    job = next(j for j in jobs if j.kind == "train" and j.step and split_revision(j.model)[0] == cfg.replica_mc_model)
    cost = plan.job_cost(job, card, table=table)
    module = plan.chapter_module(chapter)
    run_cfg = plan.chapter_config(chapter, "full", overrides)
    _log(f"▶ h. plan check: the {chapter} chapter's job {job.name!r} on replicas")
    with tempfile.TemporaryDirectory(prefix="rcstudy-bench-plan-cache-") as cache:
        previous = os.environ.get("RCSTUDY_CACHE")
        os.environ["RCSTUDY_CACHE"] = cache  # computed here, not read from a cache
        try:
            start = _now(rt)
            getattr(module, job.step)(run_cfg, rt, **job.arguments)
            seconds = _now(rt) - start
        finally:
            if previous is None:
                os.environ.pop("RCSTUDY_CACHE", None)
            else:
                os.environ["RCSTUDY_CACHE"] = previous
    del chapters
    return {"chapter": chapter, "job": job.name, "model": f"{split_revision(job.model)[0]} replica", "items": job.items,
            "epochs": job.epochs, "train_tokens": job.train_tokens, "score_tokens": job.score_tokens,
            "predicted_seconds": cost.seconds, "measured_seconds": seconds, "ratio": seconds / cost.seconds,
            "overrides": _as_json(overrides)}


def _plan_check_overrides(chapter: str, cfg: BenchConfig) -> dict:
    """The full profile cut to one fine-tuning: the ``replica_mc_model`` alone, one seed, one epoch,
    nothing else trained (a chapter other than ReClor: its replica run's sizes)."""
    from . import chapters

    if chapter != "reclor":
        return chapters.replica_sizes(chapter)
    questions = cfg.plan_check_questions
    sizes = {"train_questions": {"CQA": questions}} if questions else {}
    return {"main_models": [cfg.replica_mc_model], "partial_inputs": [], "bias_models": [], "test_predictions": [],
            "seeds": [1], "encoder.finetune.epochs": 1.0, "encoder.finetune.max_length": cfg.replica_max_length,
            **({"sizes": sizes} if sizes else {})}


PLAN_CHECK_TARGET = 0.25  # the plan's seconds within 25% of the measured


def stage_replicas(cfg: BenchConfig, rt) -> tuple[dict, dict]:
    """Stage h: on full-size random-weight replicas of the full profile's models, fine-tuning and
    scoring as the chapters run them, the utilisation the plan reads (by engine and size class,
    against the GPU's data-sheet peak and bandwidth), and one chapter job's time against its plan."""
    from .plan import size_class, model_size

    texts = _replica_texts()
    peak = matmul_peak(rt, cfg.peak_size, cfg.peak_reps)
    gpu_key, card = _gpu_card(rt, peak)
    with tempfile.TemporaryDirectory(prefix="rcstudy-bench-replicas-") as tmp:
        folder = Path(tmp)
        _log(f"▶ h. writing the {cfg.replica_mc_model} replica ({'full size' if cfg.replica_full_size else 'tiny'})")
        _write_replica(cfg.replica_mc_model, folder, cfg, texts)
        if not cfg.replica_full_size:
            _write_replica(cfg.replica_lm_model, folder, cfg, texts)
        previous = os.environ.get("RCSTUDY_REPLICAS")
        os.environ["RCSTUDY_REPLICAS"] = str(folder)
        try:
            training = _replica_training(cfg, rt, folder, card, peak)
            scoring = _replica_scoring(cfg, rt, folder, texts, card)
            measured_as = "the replica's" if not cfg.replica_full_size else "full size"
            utilisation = {
                "train": {size_class(model_size(cfg.replica_mc_model).params): {
                    "share": training["ours"]["real_share_of_card"], "model": training["model"],
                    "measured_on": measured_as}},
                "score": {size_class(model_size(cfg.replica_lm_model).params): {
                    "share": scoring["ours"]["share_of_card"], "model": scoring["model"], "measured_on": measured_as}}}
            if scoring["generation"]["bandwidth_share"]:
                utilisation["generate"] = {size_class(model_size(cfg.replica_lm_model).params): {
                    "share": scoring["generation"]["bandwidth_share"], "model": scoring["model"]}}
            from .plan import Utilisation

            table = {(e, c): Utilisation(m["share"], True, "this run") for e, by in utilisation.items()
                     for c, m in by.items()}
            check = _plan_check(cfg, rt, folder, card, table)
        finally:
            if previous is None:
                os.environ.pop("RCSTUDY_REPLICAS", None)
            else:
                os.environ["RCSTUDY_REPLICAS"] = previous
    check["met"] = abs(check["measured_seconds"] / check["predicted_seconds"] - 1) <= PLAN_CHECK_TARGET
    replicas = {"full_size": cfg.replica_full_size, "gpu": gpu_key, "card": card.source, "peak": peak,
                "training": training, "scoring": scoring, "plan_check": check}
    if not cfg.replica_full_size:
        utilisation = {}  # a tiny replica's share says nothing of a full-size model: the plan reads none
    return replicas, utilisation


# --- results ----------------------------------------------------------------------------------

def _interval(d: dict) -> str:
    return f"{d['estimate']:.1f} [{d['low']:.1f}, {d['high']:.1f}]"


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


ACCURACY_MEASURE = "val accuracy %, 95% CI (ratio column: ours − reference)"
PRECISION_ACCURACY_MEASURE = "val accuracy %, 95% CI (ratio column: fp32 − bf16, paired)"
SAME_PREDICTION_MEASURE = "items with the same predicted option in fp32 and bf16"


def _of_peak(system: dict, peak: dict) -> str:
    return (f"{system['flops_per_s'] / 1e9:.1f} of {peak['flops_per_s'] / 1e9:.1f} "
            f"({100 * system['fraction_of_peak']:.0f}%)")


def _precision_rows(p: dict, add) -> None:
    """Stage e's rows: speeds and FLOP shares in fp32 and bf16, the accuracy difference, and how
    often the scorer's prediction survives bf16."""
    t, s = p["training"], p["scoring"]
    fp32, bf16, trainer = t["fp32"], t["bf16"], t["reference_bf16"]
    name = f"e. fp32 vs bf16: fine-tuning {t['model']} (ReClor, {t['steps']} steps × {t['batch_size']})"
    add(name, "training questions/s (ratio: bf16 ÷ fp32)", f"fp32 {fp32['questions_per_s']:.2f}",
        f"bf16 {bf16['questions_per_s']:.2f}", f"{t['speedup']:.2f}×")
    d = t["accuracy_difference"]
    add(name, PRECISION_ACCURACY_MEASURE, f"fp32 {_interval(fp32['accuracy'])}", f"bf16 {_interval(bf16['accuracy'])}",
        _interval(d), "difference CI contains 0", _yes(d["low"] <= 0 <= d["high"]))
    add(name, "GFLOP/s of the matmul peak in the same dtype", f"fp32 {_of_peak(fp32, t['peaks']['fp32'])}",
        f"bf16 {_of_peak(bf16, t['peaks']['bf16'])}")
    add(name, f"bf16 training questions/s, ours vs {t['reference']} (ratio: ours ÷ Trainer)", f"{bf16['questions_per_s']:.2f}",
        f"{trainer['questions_per_s']:.2f}", f"{t['reference_speedup']:.2f}×", f"≥ {TARGETS['train_speedup']:g}×",
        _yes(t["reference_speedup"] >= TARGETS["train_speedup"]))
    add(name, f"bf16 GFLOP/s of the bf16 matmul peak, ours vs {t['reference']}", _of_peak(bf16, t["peaks"]["bf16"]),
        _of_peak(trainer, t["peaks"]["bf16"]))
    name = f"e. fp32 vs bf16: zero-shot scoring, {s['model']} (LogiQA test, {s['items']} items)"
    target = TARGETS["precision_same_prediction"]
    add(name, "items/s (ratio: bf16 ÷ fp32)", f"fp32 {s['fp32']['items_per_s']:.2f}", f"bf16 {s['bf16']['items_per_s']:.2f}",
        f"{s['bf16']['items_per_s'] / s['fp32']['items_per_s']:.2f}×")
    add(name, "acc %", f"fp32 {s['fp32']['acc']:.1f}", f"bf16 {s['bf16']['acc']:.1f}")
    add(name, SAME_PREDICTION_MEASURE, f"{s['identical_predictions']}/{s['items']} ({100 * s['identical_share']:.0f}%)",
        "", "", f"≥ {100 * target:g}%", _yes(s["identical_share"] >= target))
    add(name, "largest |Δ log-likelihood| over all options", f"{s['max_abs_loglik_difference']:.1e}")


def _training_rows(t: dict, add) -> None:
    """Stage a's rows: ours against each ``Trainer`` configuration; the target is against the strongest."""
    o, strongest = t["ours"], t["strongest"]
    name = f"a. fine-tuning {t['model']} (ReClor, {t['steps']} steps × {t['batch_size']})"
    for ref in REFERENCES:
        r, mark = t[ref], " (strongest)" if ref == strongest else ""
        target = (f"≥ {TARGETS['train_speedup']:g}×", _yes(t["speedups"][ref] >= TARGETS["train_speedup"])) if mark else ()
        add(name, f"training questions/s vs {REFERENCES[ref]}{mark}", f"{o['questions_per_s']:.2f}",
            f"{r['questions_per_s']:.2f}", f"{t['speedups'][ref]:.2f}×", *target)
        add(name, f"tokens computed per real token vs {ref}", f"{o['tokens_per_real_token']:.2f}",
            f"{r['tokens_per_real_token']:.2f}")
    r = t[strongest]
    add(name, f"evaluation questions/s ({t['eval_questions']} val) vs {strongest}", f"{o['eval_questions_per_s']:.2f}",
        f"{r['eval_questions_per_s']:.2f}", f"{t['eval_speedup']:.2f}×")
    add(name, f"{ACCURACY_MEASURE} vs {strongest}", _interval(o["accuracy"]), _interval(r["accuracy"]),
        _interval(t["accuracy_difference"]))


def _scored_questions(q: dict) -> str:
    """What stage f scored: "500 val + 1000 held-out train questions" (records before the hold-out: val only)."""
    held_out = q.get("held_out_questions", 0)
    val = q["eval_questions"] - held_out
    return f"{val} val + {held_out} held-out train questions" if held_out else f"{val} val questions"


def _quality_rows(q: dict, add) -> None:
    """Stage f's rows: whether both runs learned, their accuracies, and the equivalence verdict."""
    name = (f"f. quality: {q['model']} on ReClor ({q['fields']}), {q['train_questions']} questions × "
            f"{q['epochs']:g} epochs, ours vs {REFERENCES['trainer_tuned']}")
    k = q["options"]
    add(name, f"final training loss (learned: < {LEARNED_LOSS_SHARE:g} · ln {k} = "
        f"{LEARNED_LOSS_SHARE * math.log(k):.3f})",
        f"{q['ours']['final_loss']:.3f}", f"{q['reference']['final_loss']:.3f}")
    add(name, f"accuracy % on {_scored_questions(q)}, 95% CI (learned: above {100 / k:g})",
        _interval(q["ours"]["accuracy"]), _interval(q["reference"]["accuracy"]))
    # from the seconds: records before the hold-out counted one epoch's questions in questions_per_s
    speed = {run: q["train_questions"] * q["epochs"] / q[run]["train_seconds"] for run in ("ours", "reference")}
    add(name, "training questions/s, every epoch counted (ratio: ours ÷ reference)", f"{speed['ours']:.2f}",
        f"{speed['reference']:.2f}", f"{speed['ours'] / speed['reference']:.2f}×")
    d = q["difference"]
    add(name, f"ours − reference, points ({100 * d['level']:.0f}% paired interval; TOST ±{q['margin']:g})",
        _interval(d), "", "", f"equivalent within ±{q['margin']:g}", "yes" if q["verdict"] == "equivalent" else "no")
    add(name, "verdict", q["verdict"])


def _curve_rows(curves: dict, add) -> None:
    """Stage g's rows: per curve, the seconds and peak memory at each size and the growth exponents."""
    for name, curve in curves.items():
        (ours_name, ours), (ref_name, ref) = curve["lines"].items()
        stage = f"g. cost curve, {name} (reference: {ref_name})"
        xs = " / ".join(str(p["x"]) for p in ours["points"])
        joined = lambda line, key, f: " / ".join(f.format(p[key]) for p in line["points"])  # noqa: E731
        add(stage, f"seconds at {xs}", joined(ours, "seconds", "{:.1f}"), joined(ref, "seconds", "{:.1f}"))
        add(stage, "growth exponent (slope of log seconds on log size)", f"{ours['exponent']:.2f}",
            f"{ref['exponent']:.2f}")
        add(stage, f"peak memory of the process, MB, at {xs}", joined(ours, "peak_rss_mb", "{:.0f}"),
            joined(ref, "peak_rss_mb", "{:.0f}"))


def _replica_rows(r: dict, add) -> None:
    """Stage h's rows: fine-tuning and scoring on replicas, their share of the GPU, and the plan check."""
    t, sc, check = r["training"], r["scoring"], r["plan_check"]
    size = "full-size" if r["full_size"] else "tiny"
    name = f"h. {size} replica: fine-tuning {t['model']} ({t['steps']} steps × {t['batch_size']}, {t['max_length']} tokens)"
    add(name, "training questions/s vs Trainer, dynamic padding + group_by_length (ratio: ours ÷ Trainer)",
        f"{t['ours']['questions_per_s']:.2f}", f"{t['trainer_tuned']['questions_per_s']:.2f}", f"{t['speedup']:.2f}×")
    if "trainer_tuned_compiled" in t:
        add(name, "training questions/s vs the same Trainer under torch.compile", f"{t['ours']['questions_per_s']:.2f}",
            f"{t['trainer_tuned_compiled']['questions_per_s']:.2f}")
    add(name, f"share of the bf16 peak on real tokens ({r['card']}; of the measured matmul peak)",
        f"{100 * t['ours']['real_share_of_card']:.0f}% ({100 * t['ours']['real_fraction_of_peak']:.0f}%)",
        f"{100 * t['trainer_tuned']['real_share_of_card']:.0f}% ({100 * t['trainer_tuned']['real_fraction_of_peak']:.0f}%)")
    name = f"h. {size} replica: scoring LogiQA options with {sc['model']} ({sc['items']} items)"
    if "reference" in sc:
        add(name, "seconds (ratio: harness ÷ ours)", f"{sc['ours']['seconds']:.1f}", f"{sc['reference']['seconds']:.1f}",
            f"{sc['speedup']:.2f}×")
    else:
        add(name, "seconds", f"{sc['ours']['seconds']:.1f}", sc.get("reference_error", "harness not run"))
    add(name, "tokens run (a prompt once for its options; the harness: every pair)", f"{sc['ours']['tokens']:,}",
        f"{sc['reference']['tokens']:,}" if "reference" in sc else "")
    add(name, "share of the bf16 peak on the tokens run", f"{100 * sc['ours']['share_of_card']:.0f}%")
    g = sc["generation"]
    add(name, f"generation: seconds per decoding step ({g['batch_size']} sequences), share of memory bandwidth",
        f"{1000 * g['seconds_per_step']:.1f} ms", "" if g["bandwidth_share"] is None else f"{100 * g['bandwidth_share']:.0f}%")
    name = f"h. plan vs measurement: the {check['chapter']} chapter's job {check['job']} ({check['model']})"
    add(name, "seconds: measured vs the plan's prediction (ratio: measured ÷ plan)", f"{check['measured_seconds']:.1f}",
        f"{check['predicted_seconds']:.1f}", f"{check['measured_seconds'] / check['predicted_seconds']:.2f}×",
        f"within ±{100 * PLAN_CHECK_TARGET:.0f}%", _yes(check["met"]))


def _scoring_rows(s: dict, add) -> None:
    """Stage b: our zero-shot scoring against lm-evaluation-harness on LogiQA and ReCoRD."""
    name = f"b. zero-shot scoring, {s['model']} (LogiQA test, {s['items']} items; harness task logiqa)"
    add(name, "seconds (ratio: reference ÷ ours)", f"{s['ours']['seconds']:.1f}",
        f"{s['reference']['seconds']:.1f}", f"{s['speedup']:.2f}×", f"≥ {TARGETS['score_speedup']:g}×",
        _yes(s["speedup"] >= TARGETS["score_speedup"]))
    add(name, "identical predictions, acc", f"{s['identical_predictions']}/{s['items']}",
        f"max |Δ log-lik| {s['max_abs_loglik_difference']:.1e}", "", "all",
        _yes(s["identical_predictions"] == s["items"]))
    add(name, "identical predictions, acc_norm", f"{s['identical_predictions_norm']}/{s['items']}", "", "", "all",
        _yes(s["identical_predictions_norm"] == s["items"]))
    if fp32 := s.get("fp32"):
        for metric, key in (("acc", "identical_predictions"), ("acc_norm", "identical_predictions_norm")):
            add(name, f"identical predictions, {metric}, both in fp32", f"{fp32[key]}/{s['items']}",
                f"max |Δ log-lik| {fp32['max_abs_loglik_difference']:.1e}" if metric == "acc" else "", "", "all",
                _yes(fp32[key] == s["items"]))
    for metric in HARNESS_METRICS:
        add(name, f"{metric} % (reference: as the harness reports it)", f"{s['ours'][metric]:.1f}",
            f"{s['harness_reported'][metric]:.1f}")
    r = s["record"]
    name = f"b. zero-shot scoring, {s['model']} (ReCoRD eval, {r['items']} queries; harness task record)"
    add(name, "seconds (ratio: reference ÷ ours)", f"{r['ours']['seconds']:.1f}", f"{r['reference']['seconds']:.1f}",
        f"{r['speedup']:.2f}×", f"≥ {TARGETS['score_speedup']:g}×", _yes(r["speedup"] >= TARGETS["score_speedup"]))
    add(name, "identical predictions", f"{r['identical_predictions']}/{r['items']}",
        f"max |Δ log-lik| {r['max_abs_loglik_difference']:.1e}", "", "all", _yes(r["identical_predictions"] == r["items"]))
    for metric in ("em", "f1"):
        add(name, f"{metric.upper()} % (harness's from {r['harness_metrics']})", f"{r['ours'][metric]:.1f}",
            f"{r['reference'][metric]:.1f}")


def _flops_rows(f: dict, results: dict, add) -> None:
    """Stage c: training FLOP/s as a share of the matmul peak."""
    p = f["peak"]
    cpu = results.get("hardware", {}).get("device", "cpu") == "cpu"
    ref = results["training"]["strongest"]
    add(f"c. training FLOP/s vs {p['dtype']} matmul peak ({p['flops_per_s'] / 1e9:.1f} GFLOP/s)",
        f"GFLOP/s (share of peak), reference: {ref}",
        f"{f['ours']['flops_per_s'] / 1e9:.1f} ({100 * f['ours']['fraction_of_peak']:.0f}%)",
        f"{f[ref]['flops_per_s'] / 1e9:.1f} ({100 * f[ref]['fraction_of_peak']:.0f}%)",
        "", f"≥ {100 * TARGETS['cpu_peak_fraction']:.0f}% on CPU" if cpu else "",
        _yes(f["ours"]["fraction_of_peak"] >= TARGETS["cpu_peak_fraction"]) if cpu else "")


def _book_rows(b: dict, add) -> None:
    """Stage d: the book's cold and warm build times and peak memory."""
    name = f"d. book build ({b['profile']} profile)"
    add(name, f"cold, minutes ({b['cold']['source']})", f"{b['cold']['seconds'] / 60:.1f}", "", "",
        f"≤ {TARGETS['cold_build_s'] / 60:g}", _yes(b["cold"]["seconds"] <= TARGETS["cold_build_s"]))
    add(name, "warm, every chapter re-executed (cache filled), minutes", f"{b['warm_all']['seconds'] / 60:.1f}")
    add(name, f"after a text-only edit of {b['warm']['edited']}, minutes", f"{b['warm']['seconds'] / 60:.1f}",
        "", "", f"≤ {TARGETS['warm_build_s'] / 60:g}", _yes(b["warm"]["seconds"] <= TARGETS["warm_build_s"]))
    peaks = [x["peak_rss_mb"] for x in (b["cold"], b["warm_all"], b["warm"]) if "peak_rss_mb" in x]
    add(name, "peak memory of one process, GB", f"{max(peaks) / 1024:.1f}")


def summary_rows(results: dict) -> list[dict]:
    """One row per measure: stage, measure, ours, reference, ratio, target, met (all text)."""
    rows = []

    def add(stage, measure, ours, reference="", ratio="", target="", met=""):
        rows.append({"stage": stage, "measure": measure, "ours": ours, "reference": reference, "ratio": ratio,
                     "target": target, "met": met})

    if t := results.get("training"):
        _training_rows(t, add)
    if r := results.get("replicas"):
        _replica_rows(r, add)
    if s := results.get("scoring"):
        _scoring_rows(s, add)
    if f := results.get("flops"):
        _flops_rows(f, results, add)
    if b := results.get("book"):
        _book_rows(b, add)
    if precision := results.get("precision"):
        _precision_rows(precision, add)
    if q := results.get("quality"):
        _quality_rows(q, add)
    if curves := results.get("curves"):
        _curve_rows(curves, add)
    return rows


def _fp32_clause(s: dict) -> str:
    """The fp32 agreement of a scoring record, as a clause of the headline (none without it)."""
    if not (fp32 := s.get("fp32")):
        return ""
    return (f" under bf16 (in fp32: {fp32['identical_predictions']} and {fp32['identical_predictions_norm']} "
            f"of {s['items']})")


#: How the headline names each ``Trainer`` configuration.
REFERENCE_NAMES = {"trainer_tuned": "the tuned `Trainer`",
                   "trainer_official": "the `Trainer` configured as the official script"}


def _warm_up_clause(results: dict) -> str:
    """For a GPU record whose training ran without a warm-up: what the first run paid, read off
    the same bf16 run of stage e (none otherwise)."""
    t, p = results.get("training"), results.get("precision")
    if not results["hardware"]["device"].startswith("cuda") or "warm_up_seconds" in results or not t:
        return ""
    clause = (f" (ours ran first in its process, with no warm-up, and paid the GPU's one-time costs: "
              f"{t['ours']['train_seconds']:.1f} s")
    if p and t["ours"]["dtype"] == p["training"]["bf16"]["dtype"]:
        pt = p["training"]
        clause += (f", where stage e's bf16 run of the same work took {pt['bf16']['train_seconds']:.1f} s, at "
                   f"{pt['reference_speedup']:.2f} times the questions per second of the tuned `Trainer`")
    return clause + ")"


def headline(results: dict) -> str:
    """The benchmark page's summary of a record, in words: the speed against the strongest
    ``Trainer`` configuration (said plainly where ours is not faster), the quality verdict and the scoring.
    Text read from the record (model, verdict, machine) is shown as text, never as Markdown."""
    from .report import md_text

    parts = []
    if t := results.get("training"):
        ratio, strongest = t["speedup"], t["strongest"]
        other = next(name for name in REFERENCES if name != strongest)
        if ratio > 1:
            speed = f"{ratio:.2f} times the questions per second of {REFERENCE_NAMES[strongest]}"
        else:
            speed = f"no faster than {REFERENCE_NAMES[strongest]} ({ratio:.2f} times its questions per second)"
        met = "meets" if ratio >= TARGETS["train_speedup"] else "misses"
        parts.append(f"our trainer fine-tuned {md_text(t['model'])} at {speed}, the faster reference here, which {met} the "
                     f"target of {TARGETS['train_speedup']:g}, and at {t['speedups'][other]:.2f} times "
                     f"{REFERENCE_NAMES[other]}{_warm_up_clause(results)}")
    if q := results.get("quality"):
        parts.append(f"trained where both should learn, their accuracies compare as: {md_text(q['verdict'])}")
    if s := results.get("scoring"):
        parts.append(f"the LogiQA scorer ran {s['speedup']:.2f} times as fast as lm-evaluation-harness's `logiqa` "
                     f"task on {s['items']} questions, with the same `acc` prediction on "
                     f"{s['identical_predictions']} and the same `acc_norm` prediction on "
                     f"{s['identical_predictions_norm']}{_fp32_clause(s)}, and {s['record']['speedup']:.2f} "
                     f"times as fast as its "
                     f"`record` task on {s['record']['items']} ReCoRD queries, with the same prediction on "
                     f"{s['record']['identical_predictions']}")
    if r := results.get("replicas"):
        check = r["plan_check"]
        parts.append(f"on {'full-size' if r['full_size'] else 'tiny'} replicas, our trainer reached "
                     f"{100 * r['training']['ours']['real_share_of_card']:.0f}% of the bf16 peak with "
                     f"{md_text(r['training']['model'])}, our scorer {100 * r['scoring']['ours']['share_of_card']:.0f}% "
                     f"with {md_text(r['scoring']['model'])}, and the {md_text(check['chapter'])} chapter's job "
                     f"{md_text(check['job'])} took {check['measured_seconds']:.0f} s where the plan predicted "
                     f"{check['predicted_seconds']:.0f} s ({'within' if check['met'] else 'outside'} "
                     f"±{100 * PLAN_CHECK_TARGET:.0f}%)")
    if not parts:
        return f"The {md_text(results['hardware']['device'])} run has no training or scoring stage."
    return f"On the {_where(results)} run, " + "; ".join(parts) + "." + code_note(results)


#: The modules whose speed the benchmark measures: a record keeps a fingerprint of their source.
ENGINE_MODULES = ("rcstudy.models.mc", "rcstudy.models.bulk_dropout", "rcstudy.models.lm",
                  "rcstudy.baselines.option_lm", "rcstudy.runtime")


def engine_code() -> str:
    """A fingerprint of the source of :data:`ENGINE_MODULES` (not of what they import)."""
    from .cache import file_checksum, fingerprint, module_file

    return fingerprint({m: file_checksum(module_file(m)) for m in ENGINE_MODULES})


def code_note(results: dict) -> str:
    """Whether a record measured the engines as they are now, as a sentence (none when it did)."""
    recorded = results.get("engine_code")
    if recorded == engine_code():
        return ""
    engines = ", ".join(f"`{m}`" for m in ENGINE_MODULES)
    return (f" This record measured an earlier version of the engines ({engines}) than the one here"
            if recorded else " This record does not say which version of the engines it measured") + \
        ": run the benchmark again to measure them as they are."


def _where(results: dict) -> str:
    """The machine of a record in a few words, as Markdown text (a GPU's name is the record's text)."""
    from .report import md_text

    h = results["hardware"]
    return md_text(h["gpu"]) if h.get("gpu") else f"{int(h['cpu_count'])}-core CPU"


def hardware_line(results: dict) -> str:
    h = results["hardware"]
    where = h.get("gpu") or f"{h['cpu_model']}, {h['torch_threads']} torch threads"
    return (f"{where} ({h['cpu_count']} CPUs, {h['memory_gb']} GB; 1-min load "
            f"{results['load_average'][0]:.1f} before, {results['load_average'][1]:.1f} after); "
            f"torch {h['torch']}, rcstudy {results['rcstudy']}, {results['date']}")


def markdown(results: dict) -> str:
    rows = summary_rows(results)
    cols = list(rows[0]) if rows else []
    cell = lambda v: str(v).replace("|", "\\|")  # noqa: E731
    lines = [f"# Benchmark ({results['preset']} preset, {results['hardware']['device']})", "",
             hardware_line(results), ""]
    dates = stage_dates(results)
    if len(set(dates.values())) > 1:
        lines += ["Measured: " + "; ".join(f"{s} {d}" for s, d in dates.items()) + ".", ""]
    if results["hardware"]["device"].startswith("cuda"):
        warm = results.get("warm_up_seconds")
        lines += [f"An untimed warm-up of the GPU ran first ({warm:.1f} s)." if warm is not None else
                  "No warm-up ran first: the first run of each process paid the GPU's one-time costs "
                  "(context, kernels loaded on first use, memory pool).", ""]
    if load := results.get("load"):
        lines += ["1-minute load average before → after each stage (ratios come from one run; absolute "
                  "seconds are context): " + "; ".join(f"{s} {a:.1f} → {b:.1f}" for s, (a, b) in load.items()) + ".", ""]
    if rows:
        lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for prev, r in zip([None, *rows], rows):
            shown = {**r, "stage": "" if prev and prev["stage"] == r["stage"] else r["stage"]}
            lines.append("| " + " | ".join(cell(shown[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def stage_dates(results: dict) -> dict[str, str]:
    """When each stage of a results record was measured (records without ``measured``: its date)."""
    return results.get("measured") or {s: results["date"] for s in results["stages"]}


#: The settings each stage's results depend on: a stage of an earlier record is kept beside a new
#: run only when these are the same (a setting the earlier record lacks had its default then).
_TRAINING = ("mc_model", "train_steps", "batch_size", "eval_batch_size", "max_length", "lr", "seed", "eval_items")
STAGE_SETTINGS = {
    "train": (*_TRAINING, "peak_size", "peak_reps"),
    "quality": (*_TRAINING, "quality_fields", "quality_questions", "quality_holdout", "quality_epochs",
                "equivalence_margin"),
    "score": ("lm_model", "lm_items", "record_items", "lm_batch_size"),
    "precision": (*_TRAINING, "peak_size", "peak_reps", "lm_model", "precision_lm_items", "lm_batch_size"),
    "curves": (*_TRAINING, "lm_model", "lm_batch_size", "curve_sizes", "curve_lengths", "curve_length_questions"),
    "book": ("book_profile", "book_cold", "book_edited"),
    "replicas": ("peak_size", "peak_reps", "eval_batch_size", "lm_batch_size", "seed", "lr", "replica_full_size",
                 "replica_mc_model", "replica_train_steps", "replica_batch_size", "replica_max_length",
                 "trainer_compile", "replica_lm_model", "replica_lm_items", "replica_harness",
                 "replica_generate_prompts", "replica_generate_tokens", "replica_generate_batch",
                 "plan_check_chapter", "plan_check_questions"),
}


def _as_json(value):
    """``value`` as it reads back from a results file (tuples become lists)."""
    return json.loads(json.dumps(value))


def same_setup(a: dict, b: dict, stage: str) -> bool:
    """Whether ``stage`` ran with the same preset, settings (:data:`STAGE_SETTINGS`), machine and
    engine code in two records (so its results in one can be shown beside the other's)."""
    machine = ("device", "cpu_model", "cpu_count", "torch_threads", "gpu")
    defaults = _as_json(asdict(BenchConfig()))
    setting = lambda record, k: record["config"].get(k, defaults[k])  # noqa: E731
    return (a["preset"] == b["preset"] and all(setting(a, k) == setting(b, k) for k in STAGE_SETTINGS[stage])
            and all(a["hardware"].get(k) == b["hardware"].get(k) for k in machine)
            and a.get("engine_code") == b.get("engine_code"))


def merge_stages(results: dict, previous: dict | None) -> dict:
    """``results`` with the stages of ``previous`` that it did not run, each where it comes from the
    same setup (:func:`same_setup`): a run of ``--stages book`` after a cold build keeps the training,
    scoring and precision figures of the last full run, each with the date it was measured."""
    measured = {s: results["date"] for s in results["stages"]}
    if previous is None:
        return {**results, "measured": measured}
    kept = {s: d for s, d in stage_dates(previous).items() if s not in measured and same_setup(results, previous, s)}
    merged = {**results, **{k: previous[k] for s in kept for k in STAGE_KEYS[s] if k in previous},
              "load": {**{s: v for s, v in previous.get("load", {}).items() if s in kept}, **results.get("load", {})}}
    stages = [s for s in STAGES if s in measured or s in kept]
    return {**merged, "stages": stages, "measured": {s: {**kept, **measured}[s] for s in stages}}


#: Presets whose records have a file of their own beside the device's (``<device>-check.json``), so
#: that they neither replace nor are merged with the full benchmark's record.
OWN_FILE_PRESETS = {"gpu-check": "check"}


def results_path(results: dict, out_dir: Path) -> Path:
    """``<out>/<device>.json``: one file per device type (cpu, cuda); ``<device>-check.json`` for the
    gpu-check preset's replica measurements."""
    suffix = OWN_FILE_PRESETS.get(results.get("preset", ""))
    device = results["hardware"]["device"].split(":")[0]
    return Path(out_dir) / (f"{device}-{suffix}.json" if suffix else f"{device}.json")


def write_results(results: dict, out_dir: Path) -> tuple[Path, Path]:
    """``<out>/<device>.json`` and ``<out>/<device>.md`` (the latest run per device type)."""
    from .cache import atomic_write_bytes

    json_path = results_path(results, out_dir)
    md_path = json_path.with_suffix(".md")
    atomic_write_bytes(json_path, json.dumps(results, indent=1).encode())
    atomic_write_bytes(md_path, markdown(results).encode())
    return json_path, md_path


def load_results(out_dir: Path = RESULTS_DIR) -> list[dict]:
    """Every result file in ``out_dir``, newest first."""
    found = [json.loads(p.read_text()) for p in sorted(Path(out_dir).glob("*.json"))]
    return sorted(found, key=lambda r: r["date"], reverse=True)


def _run_stage(stage: str, cfg: BenchConfig, rt) -> dict:
    """The results (under the stage's :data:`STAGE_KEYS`) of one stage."""
    if stage == "train":
        return dict(zip(STAGE_KEYS["train"], stage_train(cfg, rt)))
    if stage == "book":
        return {"book": stage_book(cfg)}
    if stage == "replicas":
        return dict(zip(STAGE_KEYS["replicas"], stage_replicas(cfg, rt)))
    run_stage = {"quality": stage_quality, "score": stage_score, "curves": stage_curves,
                 "precision": stage_precision}[stage]
    return {STAGE_KEYS[stage][0]: run_stage(cfg, rt)}


def run(cfg: BenchConfig, stages=None, *, preset: str = "custom", out_dir: Path | None = RESULTS_DIR,
        rt=None) -> dict:
    """Run the chosen stages (None: the preset's defaults, the cpu preset's for a custom one) and
    return the results. With ``out_dir``, the file there is rewritten (atomically, merged with the
    stages it held before the run) after every stage, so an interrupted run keeps what it measured
    and a later stage (the book's pages) reads the earlier ones."""
    from . import runtime

    stages = stages or DEFAULT_STAGES.get(preset, DEFAULT_STAGES["cpu"])
    unknown = sorted(set(stages) - set(STAGES))
    if unknown:
        raise ValueError(f"unknown stage(s) {', '.join(unknown)}; choose from {', '.join(STAGES)}")
    rt = rt or runtime.setup()
    results = {"rcstudy": __version__, "engine_code": engine_code(),
               "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "preset": preset,
               "config": _as_json(asdict(cfg)), "stages": [], "hardware": hardware(rt), "load": {}}
    path = results_path(results, out_dir) if out_dir is not None else None
    previous = json.loads(path.read_text()) if path is not None and path.exists() else None
    if set(stages) - {"book", "replicas"}:  # the replicas stage warms the device with its own model
        results["warm_up_seconds"] = warm_device(cfg, rt)
    load_before = os.getloadavg()[0]
    for stage in STAGES:  # in this order, whatever the order asked for
        if stage not in stages:
            continue
        before = os.getloadavg()[0]
        results |= _run_stage(stage, cfg, rt)
        results["load"][stage] = [before, os.getloadavg()[0]]
        results["stages"].append(stage)
        results["load_average"] = [load_before, os.getloadavg()[0]]
        if path is not None:
            for written in write_results(merge_stages(results, previous), out_dir):
                _log(f"✓ wrote {written} ({stage})")
    return merge_stages(results, previous) if path is not None else results


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--preset", choices=list(PRESETS), default=None,
                        help="sizes: cpu (a quiet 2-core machine, about 1.5 h for every stage but book), gpu (one GPU), "
                             "tiny (seconds); default: gpu when CUDA is available, else cpu")
    defaults = "; ".join(f"{preset}: {','.join(stages)}" for preset, stages in DEFAULT_STAGES.items())
    parser.add_argument("--stages", default=None,
                        help=f"comma-separated, from {', '.join(STAGES)} (default: the preset's; {defaults})")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE", dest="settings",
                        help="override one setting of the preset, e.g. train_steps=20; repeatable")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="folder for <device>.json and <device>.md")
    parser.add_argument("--online", action="store_true",
                        help="allow HuggingFace Hub downloads (default: HF_HUB_OFFLINE=1, as the runner sets)")
    return parser


def run_from_args(args: argparse.Namespace) -> int:
    from . import runtime
    from .run import parse_overrides

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if not args.online:
        os.environ["HF_HUB_OFFLINE"] = os.environ["HF_DATASETS_OFFLINE"] = "1"
    rt = runtime.setup(args.device)
    preset = args.preset or ("gpu" if rt.cuda else "cpu")
    cfg = config_from(preset, parse_overrides(args.settings))
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip()) if args.stages else None
    results = run(cfg, stages, preset=preset, out_dir=args.out, rt=rt)
    print(markdown(results))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = add_arguments(argparse.ArgumentParser(prog="rcstudy bench", description=__doc__,
                                                   formatter_class=argparse.RawDescriptionHelpFormatter))
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
