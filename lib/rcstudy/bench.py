"""Benchmark of the shared engines against the tools a user would otherwise pick.

``python -m rcstudy bench`` (also ``python -m rcstudy.bench``) measures, in one process on one
machine:

a. **training**: multiple-choice fine-tuning of ``mc_model`` on the first
   ``train_steps × batch_size`` ReClor training questions, once with our trainer
   (:func:`rcstudy.models.mc.finetune`: dynamic padding, length-bucketed batches) and once with a
   HuggingFace ``Trainer`` pipeline that pads every sequence to ``max_length`` (256), as the
   official ReClor script does. Same items, steps, batch size, optimiser (AdamW, linear warm-up
   over 10%, weight decay 0.01, gradient clipping at 1), seed and initial weights. Reported:
   questions/s of both (model loading and tokenisation included), the ratio, and both models'
   accuracy on ReClor val afterwards, with a paired bootstrap interval of the difference.
b. **scoring**: zero-shot option scoring on LogiQA test with ``lm_model``: our
   :meth:`rcstudy.models.lm.CausalLM.loglik` against lm-evaluation-harness (``HFLM`` over the
   same model object, a local task over the same prompts and options). Reported: whether the
   predictions are identical, the largest log-likelihood difference and the time ratio.
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
   and the scoring of (b) with our scorer, each once in fp32 and once under bf16 autocast,
   whatever the runtime's own choice, and the runtime's setup restored afterwards. Reported:
   the training speed of both and their ratio, the val accuracy of both with a paired bootstrap
   interval of the difference (fp32 − bf16), the share of LogiQA items whose predicted option
   is the same and the largest log-likelihood difference; each training run's FLOP/s against
   the matmul peak measured in its own dtype; and the ``Trainer`` reference trained in bf16, so
   that the ratio of (a) is also reported with both sides in bf16.

Results go to ``<out>/<device>.json`` and, as a markdown table, ``<out>/<device>.md``
(``<out>`` defaults to ``benchmarks/results``); the book's appendix page shows them. A run of
some stages keeps the other stages of the file when it comes from the same preset, sizes and
machine, each with the date it was measured (``--stages book`` after a cold build). Every size
is a parameter: presets ``cpu``, ``gpu`` and ``tiny`` (seconds, for the tests), refined with
``-p name=value``.

Heavy libraries are imported inside the stages, so ``--help`` and reading results stay fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timezone
from pathlib import Path

from . import __version__
from .settings import PROJECT_ROOT, book_root

STAGES = ("train", "score", "precision", "book")
#: The keys of a results record that each stage writes.
STAGE_KEYS = {"train": ("training", "flops"), "score": ("scoring",), "precision": ("precision",), "book": ("book",)}
#: What each preset runs unless ``--stages`` says otherwise. The tiny preset (the tests, the smoke
#: book) leaves out the precision stage: it repeats the training and scoring of the others.
DEFAULT_STAGES = {"cpu": ("train", "score", "precision"), "gpu": ("train", "score", "precision"),
                  "tiny": ("train", "score")}
#: The precisions the precision stage compares, the reference first.
PRECISIONS = ("fp32", "bf16")
RESULTS_DIR = PROJECT_ROOT / "benchmarks" / "results"

#: Targets the benchmark reports against (speed targets live here, not in timed tests).
TARGETS = {
    "train_speedup": 2.0,  # our questions/s ÷ the Trainer reference's
    "score_speedup": 1.0,  # lm-evaluation-harness seconds ÷ ours
    "cpu_peak_fraction": 0.40,  # training FLOP/s ÷ measured matmul peak, on CPU
    "precision_same_prediction": 0.97,  # share of items whose predicted option is the same in fp32 and bf16
    "cold_build_s": 3600.0,
    "warm_build_s": 120.0,
}


@dataclass(frozen=True)
class BenchConfig:
    mc_model: str = "minilm-l6"
    train_steps: int = 100
    batch_size: int = 8  # questions per optimiser step
    eval_batch_size: int = 32
    max_length: int = 256
    lr: float = 2e-5
    seed: int = 0
    eval_items: int | None = None  # ReClor val questions to score (None: all 500)
    lm_model: str = "smollm2-135m"
    lm_items: int | None = 100  # LogiQA test questions (None: all 651)
    lm_batch_size: int = 8  # sequences per forward pass, the same for both scorers
    peak_size: int = 2048  # n of the n×n matmuls that measure the peak
    peak_reps: int = 5
    book_profile: str = "quick"
    book_cold: bool = False  # also measure a cold build (an hour on 2 cores) instead of reading it
    book_edited: str = "reclor"  # the chapter whose text the warm rebuild treats as edited


PRESETS = {
    # a quiet 2-core CPU machine: about 35 minutes for train + score, roughly as much again for precision
    "cpu": BenchConfig(),
    # one GPU: one epoch of ReClor train at 32 questions a step, all of LogiQA test
    "gpu": BenchConfig(train_steps=144, batch_size=32, eval_batch_size=64, lm_items=None, lm_batch_size=32,
                       peak_size=8192, peak_reps=10),
    # the tests and the smoke profile: tiny random models, a handful of items
    "tiny": BenchConfig(mc_model="tiny-bert", train_steps=2, batch_size=2, eval_batch_size=4, eval_items=4,
                        lm_model="tiny-llama", lm_items=3, lm_batch_size=4, peak_size=128, peak_reps=2),
}


def config_from(preset: str, overrides: dict | None = None) -> BenchConfig:
    """A preset with ``overrides`` (``{"train_steps": 20}``) applied; unknown keys are an error."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    names = {f.name for f in fields(BenchConfig)}
    unknown = sorted(set(overrides or {}) - names)
    if unknown:
        raise ValueError(f"unknown benchmark setting(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    return replace(PRESETS[preset], **(overrides or {}))


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


# --- a. multiple-choice fine-tuning: ours vs HF Trainer padding to 256 -------------------------

def _reclor(cfg: BenchConfig):
    from .data.reclor import load_split

    train = [it for it in load_split("train") if it.label is not None]
    needed = cfg.train_steps * cfg.batch_size
    if needed > len(train):
        raise ValueError(f"train_steps × batch_size = {needed} questions, but ReClor train has {len(train)}")
    val = load_split("val")
    return train[:needed], val[: cfg.eval_items] if cfg.eval_items else val


def _train_ours(train, val, cfg: BenchConfig, rt, vocab_size: int) -> dict:
    from .models import mc

    mc_cfg = mc.MCConfig(model=cfg.mc_model, fields="CQA", max_length=cfg.max_length, epochs=1, lr=cfg.lr,
                         batch_size=cfg.batch_size, seed=cfg.seed, eval_batch_size=cfg.eval_batch_size)
    with EmbeddingShapes(vocab_size) as shapes:
        start = _now(rt)
        trained = mc.finetune(train, mc_cfg, rt)
        train_s = _now(rt) - start
    start = _now(rt)
    logits = mc.predict(trained, val, rt)
    eval_s = _now(rt) - start
    return {"train_seconds": train_s, "eval_seconds": eval_s, "predictions": logits.argmax(1).tolist(),
            "shapes": shapes}


def _padded_features(tokenizer, items, max_length: int) -> tuple[list[dict], int]:
    """The official script's features: every (context, question + option) pair padded to ``max_length``.

    Returns the per-question features and the number of real (non-padding) tokens.
    """
    from .models.mc import option_pairs

    pairs = [pair for it in items for pair in option_pairs(it, "CQA")]
    enc = tokenizer([a for a, _ in pairs], [b for _, b in pairs], truncation=True, max_length=max_length,
                    padding="max_length", return_tensors="pt")
    features, start = [], 0
    for it in items:
        n = len(it.options)
        features.append({k: v[start:start + n] for k, v in enc.items()} | {"labels": it.label})
        start += n
    return features, int(enc["attention_mask"].sum())


def _train_reference(train, val, cfg: BenchConfig, rt, vocab_size: int) -> dict:
    """The ``Trainer`` pipeline on the same items, in ``rt``'s dtype (``bf16=True`` under a bf16 runtime)."""
    from transformers import PrinterCallback, Trainer, TrainingArguments

    from .models import load_multiple_choice, load_tokenizer

    with tempfile.TemporaryDirectory(prefix="rcstudy-bench-trainer-") as workdir:
        args = TrainingArguments(
            output_dir=workdir, max_steps=cfg.train_steps, per_device_train_batch_size=cfg.batch_size,
            per_device_eval_batch_size=cfg.eval_batch_size, learning_rate=cfg.lr, warmup_steps=0.1,
            weight_decay=0.01, max_grad_norm=1.0, lr_scheduler_type="linear", seed=cfg.seed,
            bf16=rt.bf16, tf32=True if rt.cuda else None, use_cpu=not rt.cuda, dataloader_num_workers=0,
            save_strategy="no", logging_strategy="no", report_to="none", disable_tqdm=True,
        )
        with EmbeddingShapes(vocab_size) as shapes:
            start = _now(rt)
            tokenizer = load_tokenizer(cfg.mc_model)
            model = load_multiple_choice(cfg.mc_model, seed=cfg.seed)
            features, real_tokens = _padded_features(tokenizer, train, cfg.max_length)
            trainer = Trainer(model=model, args=args, train_dataset=features)
            trainer.remove_callback(PrinterCallback)  # it would print the final metrics dict
            trainer.train()
            train_s = _now(rt) - start
        start = _now(rt)
        out = trainer.predict(_padded_features(tokenizer, val, cfg.max_length)[0])
        eval_s = _now(rt) - start
    return {"train_seconds": train_s, "eval_seconds": eval_s, "predictions": out.predictions.argmax(-1).tolist(),
            "shapes": shapes, "real_tokens": real_tokens}


def _measured(result: dict, train, val, config, peak: dict, seed: int) -> dict:
    """What one training run measured: speed, val accuracy with its bootstrap interval, the
    per-question correctness that paired intervals compare, and the matmul FLOP rate as a share of
    ``peak``, which must have been measured in the run's dtype (the run's dtype is taken from it)."""
    import numpy as np

    from .stats import bootstrap_ci

    correct = (np.array(result["predictions"]) == np.array([it.label for it in val])).astype(int)
    seconds, flops = result["train_seconds"], result["shapes"].flops(config)
    return {
        "dtype": peak["dtype"], "train_seconds": seconds, "questions_per_s": len(train) / seconds,
        "eval_seconds": result["eval_seconds"], "eval_questions_per_s": len(val) / result["eval_seconds"],
        "accuracy": asdict(bootstrap_ci(correct, scale=100, seed=seed)), "correct": correct.tolist(),
        "tokens_processed": result["shapes"].tokens(), "train_flops": flops, "flops_per_s": flops / seconds,
        "fraction_of_peak": flops / seconds / peak["flops_per_s"],
    }


def _training_facts(cfg: BenchConfig, train, val) -> dict:
    """What every training run of a stage shares: the model, the steps and the items."""
    return {"model": cfg.mc_model, "train_questions": len(train), "steps": cfg.train_steps,
            "batch_size": cfg.batch_size, "eval_questions": len(val), "max_length": cfg.max_length}


def stage_train(cfg: BenchConfig, rt) -> tuple[dict, dict]:
    """Stages a and c: the training comparison and the FLOP rates of both runs."""
    from .models import model_config
    from .stats import paired_difference

    train, val = _reclor(cfg)
    config = model_config(cfg.mc_model)
    _log(f"▶ a. fine-tuning {cfg.mc_model} on {len(train)} ReClor questions, ours")
    ours = _train_ours(train, val, cfg, rt, config.vocab_size)
    _log(f"▶ a. the same with transformers.Trainer, padding to {cfg.max_length}")
    ref = _train_reference(train, val, cfg, rt, config.vocab_size)
    _log(f"▶ c. matmul peak ({cfg.peak_size}×{cfg.peak_size})")
    peak = matmul_peak(rt, cfg.peak_size, cfg.peak_reps)

    systems = {name: _measured(m, train, val, config, peak, cfg.seed)
               for name, m in (("ours", ours), ("reference", ref))}
    diff = paired_difference(systems["ours"]["correct"], systems["reference"]["correct"], seed=cfg.seed)
    training = {
        **_training_facts(cfg, train, val), "real_tokens": ref["real_tokens"], **systems,
        "speedup": systems["ours"]["questions_per_s"] / systems["reference"]["questions_per_s"],
        "eval_speedup": systems["ours"]["eval_questions_per_s"] / systems["reference"]["eval_questions_per_s"],
        "accuracy_difference": asdict(diff),
    }
    flops = {"peak": peak, **{name: {k: s[k] for k in ("flops_per_s", "fraction_of_peak")}
                              for name, s in systems.items()}}
    return training, flops


# --- b. zero-shot option scoring: ours vs lm-evaluation-harness ---------------------------------

TASK = "rcstudy_bench_logiqa"
TASK_YAML = """\
task: {task}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {docs}
  cache_dir: {cache}
output_type: multiple_choice
test_split: test
doc_to_text: "{{{{prompt}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{label}}}}"
target_delimiter: " "
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""


def logiqa_prompt(item) -> str:
    """The prompt of lm-evaluation-harness's ``logiqa`` task (``tasks/logiqa/utils_logiqa.py``)."""
    options = "".join(f"{letter}. {option}\n" for letter, option in zip("ABCD", item.options))
    return f"Passage: {item.context}\nQuestion: {item.question}\nChoices:\n{options}Answer:"


def _harness_loglik(lm, prompts: list[str], items, cfg: BenchConfig, rt) -> tuple[list[float], float]:
    """lm-evaluation-harness's log-likelihood of every option, and the seconds its evaluation took."""
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
            docs = Path(tmp) / "logiqa_test.jsonl"
            docs.write_text("".join(json.dumps({"prompt": p, "choices": list(it.options), "label": it.label}) + "\n"
                                    for p, it in zip(prompts, items)))
            (Path(tmp) / f"{TASK}.yaml").write_text(TASK_YAML.format(task=TASK, docs=docs, cache=Path(tmp) / "cache"))
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
    samples = sorted(out["samples"][TASK], key=lambda s: s["doc_id"])
    return [float(ll) for s in samples for ll, _ in s["filtered_resps"]], seconds


def _logiqa(cfg: BenchConfig) -> list:
    """The first ``lm_items`` LogiQA test questions (all of them for None)."""
    from .data.logiqa import load_logiqa

    items = load_logiqa("test")
    return items[: cfg.lm_items] if cfg.lm_items else items


def _our_loglik(lm, items, cfg: BenchConfig):
    """Our log-likelihood of every option of ``items`` after the harness's prompt, and its seconds."""
    import numpy as np

    contexts = [logiqa_prompt(it) for it in items for _ in it.options]
    continuations = [" " + option for it in items for option in it.options]
    start = _now(lm.rt)
    scores = lm.loglik(contexts, continuations, batch_size=cfg.lm_batch_size)
    return np.asarray(scores), _now(lm.rt) - start


def _predicted(scores, items):
    """Each item's highest-scoring option (``scores`` lists every item's options in turn)."""
    import numpy as np

    ends = np.cumsum([len(it.options) for it in items])
    return np.array([int(np.argmax(scores[end - len(it.options):end])) for it, end in zip(items, ends)])


def _scored(scores, seconds: float, items) -> dict:
    """One scorer's speed and accuracy."""
    import numpy as np

    gold = np.array([it.label for it in items])
    return {"seconds": seconds, "items_per_s": len(items) / seconds,
            "accuracy": 100 * float((_predicted(scores, items) == gold).mean())}


def _agreement(a, b, items) -> dict:
    """How far two scorings of the same options agree: on the predicted option, and in log-likelihood."""
    import numpy as np

    same = int((_predicted(a, items) == _predicted(b, items)).sum())
    return {"identical_predictions": same, "identical_share": same / len(items),
            "max_abs_loglik_difference": float(np.abs(a - b).max())}


def _scoring_facts(cfg: BenchConfig, items) -> dict:
    """What every scoring run of a stage shares: the model, the items and the batch size."""
    return {"model": cfg.lm_model, "items": len(items), "options": sum(len(it.options) for it in items),
            "batch_size": cfg.lm_batch_size}


def stage_score(cfg: BenchConfig, rt) -> dict:
    """Stage b: the same option log-likelihoods from our scorer and from lm-evaluation-harness."""
    import numpy as np

    from .models.lm import CausalLM

    items = _logiqa(cfg)
    lm = CausalLM.load(cfg.lm_model, rt)
    facts = _scoring_facts(cfg, items)
    _log(f"▶ b. scoring {facts['options']} LogiQA options with {cfg.lm_model}, ours")
    ours, ours_s = _our_loglik(lm, items, cfg)
    _log("▶ b. the same with lm-evaluation-harness")
    harness, harness_s = _harness_loglik(lm, [logiqa_prompt(it) for it in items], items, cfg, rt)
    harness = np.array(harness)
    return {**facts, "ours": _scored(ours, ours_s, items), "reference": _scored(harness, harness_s, items),
            "speedup": harness_s / ours_s, **_agreement(ours, harness, items)}


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
    """Our trainer in each precision, each against the matmul peak of its own dtype, and the
    ``Trainer`` reference in bf16, so that our speed-up over it is also known with both in bf16."""
    from .models import model_config
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
        _log("▶ e. the same with transformers.Trainer in bf16")
        trained = _train_reference(train, val, cfg, here, config.vocab_size)
    runs["reference_bf16"] = _measured(trained, train, val, config, peaks["bf16"], cfg.seed)
    diff = paired_difference(runs["fp32"]["correct"], runs["bf16"]["correct"], seed=cfg.seed)
    return {**_training_facts(cfg, train, val), **runs, "peaks": peaks,
            "speedup": runs["bf16"]["questions_per_s"] / runs["fp32"]["questions_per_s"],
            "reference_speedup": runs["bf16"]["questions_per_s"] / runs["reference_bf16"]["questions_per_s"],
            "accuracy_difference": asdict(diff)}


def _precision_scoring(cfg: BenchConfig, rt) -> dict:
    """Our scorer's option log-likelihoods in each precision, and how far bf16 moves them."""
    from .models.lm import CausalLM

    items = _logiqa(cfg)
    scores, runs = {}, {}
    for precision in PRECISIONS:
        with in_precision(rt, precision) as here:
            _log(f"▶ e. scoring LogiQA options with {cfg.lm_model} in {precision}, ours")
            scores[precision], seconds = _our_loglik(CausalLM.load(cfg.lm_model, here), items, cfg)
        runs[precision] = _scored(scores[precision], seconds, items)
    return {**_scoring_facts(cfg, items), **runs, **_agreement(scores["fp32"], scores["bf16"], items)}


def stage_precision(cfg: BenchConfig, rt) -> dict:
    """Stage e: the training of (a) and the scoring of (b) with our engines, in fp32 and in bf16;
    ``rt``'s own setup is in force again afterwards."""
    return {"training": _precision_training(cfg, rt), "scoring": _precision_scoring(cfg, rt)}


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
    add(name, "bf16 training questions/s, ours vs Trainer (ratio: ours ÷ Trainer)", f"{bf16['questions_per_s']:.2f}",
        f"{trainer['questions_per_s']:.2f}", f"{t['reference_speedup']:.2f}×", f"≥ {TARGETS['train_speedup']:g}×",
        _yes(t["reference_speedup"] >= TARGETS["train_speedup"]))
    add(name, "bf16 GFLOP/s of the bf16 matmul peak, ours vs Trainer", _of_peak(bf16, t["peaks"]["bf16"]),
        _of_peak(trainer, t["peaks"]["bf16"]))
    name = f"e. fp32 vs bf16: zero-shot scoring, {s['model']} (LogiQA test, {s['items']} items)"
    target = TARGETS["precision_same_prediction"]
    add(name, "items/s (ratio: bf16 ÷ fp32)", f"fp32 {s['fp32']['items_per_s']:.2f}", f"bf16 {s['bf16']['items_per_s']:.2f}",
        f"{s['bf16']['items_per_s'] / s['fp32']['items_per_s']:.2f}×")
    add(name, "accuracy %", f"fp32 {s['fp32']['accuracy']:.1f}", f"bf16 {s['bf16']['accuracy']:.1f}")
    add(name, SAME_PREDICTION_MEASURE, f"{s['identical_predictions']}/{s['items']} ({100 * s['identical_share']:.0f}%)",
        "", "", f"≥ {100 * target:g}%", _yes(s["identical_share"] >= target))
    add(name, "largest |Δ log-likelihood| over all options", f"{s['max_abs_loglik_difference']:.1e}")


def summary_rows(results: dict) -> list[dict]:
    """One row per measure: stage, measure, ours, reference, ratio, target, met (all text)."""
    rows = []

    def add(stage, measure, ours, reference="", ratio="", target="", met=""):
        rows.append({"stage": stage, "measure": measure, "ours": ours, "reference": reference, "ratio": ratio,
                     "target": target, "met": met})

    if t := results.get("training"):
        o, r = t["ours"], t["reference"]
        name = f"a. fine-tuning {t['model']} (ReClor, {t['steps']} steps × {t['batch_size']})"
        add(name, "training questions/s", f"{o['questions_per_s']:.2f}", f"{r['questions_per_s']:.2f}",
            f"{t['speedup']:.2f}×", f"≥ {TARGETS['train_speedup']:g}×", _yes(t["speedup"] >= TARGETS["train_speedup"]))
        add(name, f"evaluation questions/s ({t['eval_questions']} val)", f"{o['eval_questions_per_s']:.2f}",
            f"{r['eval_questions_per_s']:.2f}", f"{t['eval_speedup']:.2f}×")
        add(name, "tokens computed per real token", f"{o['tokens_processed'] / t['real_tokens']:.2f}",
            f"{r['tokens_processed'] / t['real_tokens']:.2f}")
        d = t["accuracy_difference"]
        add(name, ACCURACY_MEASURE, _interval(o["accuracy"]),
            _interval(r["accuracy"]), _interval(d), "difference CI contains 0", _yes(d["low"] <= 0 <= d["high"]))
    if s := results.get("scoring"):
        name = f"b. zero-shot scoring, {s['model']} (LogiQA test, {s['items']} items)"
        add(name, "seconds (ratio: reference ÷ ours)", f"{s['ours']['seconds']:.1f}",
            f"{s['reference']['seconds']:.1f}", f"{s['speedup']:.2f}×", f"≥ {TARGETS['score_speedup']:g}×",
            _yes(s["speedup"] >= TARGETS["score_speedup"]))
        add(name, "identical predictions", f"{s['identical_predictions']}/{s['items']}",
            f"max |Δ log-lik| {s['max_abs_loglik_difference']:.1e}", "", "all",
            _yes(s["identical_predictions"] == s["items"]))
        add(name, "accuracy %", f"{s['ours']['accuracy']:.1f}", f"{s['reference']['accuracy']:.1f}")
    if f := results.get("flops"):
        p = f["peak"]
        cpu = results.get("hardware", {}).get("device", "cpu") == "cpu"
        add(f"c. training FLOP/s vs {p['dtype']} matmul peak ({p['flops_per_s'] / 1e9:.1f} GFLOP/s)",
            "GFLOP/s (share of peak)",
            f"{f['ours']['flops_per_s'] / 1e9:.1f} ({100 * f['ours']['fraction_of_peak']:.0f}%)",
            f"{f['reference']['flops_per_s'] / 1e9:.1f} ({100 * f['reference']['fraction_of_peak']:.0f}%)",
            "", f"≥ {100 * TARGETS['cpu_peak_fraction']:.0f}% on CPU" if cpu else "",
            _yes(f["ours"]["fraction_of_peak"] >= TARGETS["cpu_peak_fraction"]) if cpu else "")
    if b := results.get("book"):
        name = f"d. book build ({b['profile']} profile)"
        add(name, f"cold, minutes ({b['cold']['source']})", f"{b['cold']['seconds'] / 60:.1f}", "", "",
            f"≤ {TARGETS['cold_build_s'] / 60:g}", _yes(b["cold"]["seconds"] <= TARGETS["cold_build_s"]))
        add(name, "warm, every chapter re-executed (cache filled), minutes", f"{b['warm_all']['seconds'] / 60:.1f}")
        add(name, f"after a text-only edit of {b['warm']['edited']}, minutes", f"{b['warm']['seconds'] / 60:.1f}",
            "", "", f"≤ {TARGETS['warm_build_s'] / 60:g}", _yes(b["warm"]["seconds"] <= TARGETS["warm_build_s"]))
        peaks = [x["peak_rss_mb"] for x in (b["cold"], b["warm_all"], b["warm"]) if "peak_rss_mb" in x]
        add(name, "peak memory of one process, GB", f"{max(peaks) / 1024:.1f}")
    if precision := results.get("precision"):
        _precision_rows(precision, add)
    return rows


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
    if rows:
        lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for prev, r in zip([None, *rows], rows):
            shown = {**r, "stage": "" if prev and prev["stage"] == r["stage"] else r["stage"]}
            lines.append("| " + " | ".join(cell(shown[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def stage_dates(results: dict) -> dict[str, str]:
    """When each stage of a results record was measured (records without ``measured``: its date)."""
    return results.get("measured") or {s: results["date"] for s in results["stages"]}


def same_setup(a: dict, b: dict) -> bool:
    """Whether two records come from the same preset, sizes and machine (their stages can be shown together)."""
    machine = ("device", "cpu_model", "cpu_count", "torch_threads", "gpu")
    return (a["preset"] == b["preset"] and a["config"] == b["config"]
            and all(a["hardware"].get(k) == b["hardware"].get(k) for k in machine))


def merge_stages(results: dict, previous: dict | None) -> dict:
    """``results`` with the stages of ``previous`` that it did not run, when both come from the same
    setup (:func:`same_setup`): a run of ``--stages book`` after a cold build keeps the training,
    scoring and precision figures of the last full run, each with the date it was measured."""
    measured = {s: results["date"] for s in results["stages"]}
    if previous is None or not same_setup(results, previous):
        return {**results, "measured": measured}
    kept = {s: d for s, d in stage_dates(previous).items() if s not in measured}
    merged = {**results, **{k: previous[k] for s in kept for k in STAGE_KEYS[s] if k in previous}}
    stages = [s for s in STAGES if s in measured or s in kept]
    return {**merged, "stages": stages, "measured": {s: {**kept, **measured}[s] for s in stages}}


def results_path(results: dict, out_dir: Path) -> Path:
    """``<out>/<device>.json``: one file per device type (cpu, cuda)."""
    return Path(out_dir) / f"{results['hardware']['device'].split(':')[0]}.json"


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


def run(cfg: BenchConfig, stages=None, *, preset: str = "custom", out_dir: Path | None = RESULTS_DIR,
        rt=None) -> dict:
    """Run the chosen stages (None: the preset's defaults, the cpu preset's for a custom one); write
    the results to ``out_dir`` (unless None) and return them."""
    from . import runtime

    stages = stages or DEFAULT_STAGES.get(preset, DEFAULT_STAGES["cpu"])
    unknown = sorted(set(stages) - set(STAGES))
    if unknown:
        raise ValueError(f"unknown stage(s) {', '.join(unknown)}; choose from {', '.join(STAGES)}")
    rt = rt or runtime.setup()
    results = {"rcstudy": __version__, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "preset": preset, "config": asdict(cfg), "stages": list(stages), "hardware": hardware(rt)}
    load_before = os.getloadavg()[0]
    if "train" in stages:
        results["training"], results["flops"] = stage_train(cfg, rt)
    if "score" in stages:
        results["scoring"] = stage_score(cfg, rt)
    if "precision" in stages:
        results["precision"] = stage_precision(cfg, rt)
    if "book" in stages:
        results["book"] = stage_book(cfg)
    results["load_average"] = [load_before, os.getloadavg()[0]]
    if out_dir is not None:
        previous = results_path(results, out_dir)
        results = merge_stages(results, json.loads(previous.read_text()) if previous.exists() else None)
        for path in write_results(results, out_dir):
            _log(f"✓ wrote {path}")
    return results


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--preset", choices=list(PRESETS), default=None,
                        help="sizes: cpu (a quiet 2-core machine, ~35 min for train,score), gpu (one GPU), "
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
