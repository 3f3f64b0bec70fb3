"""A GPU-hour plan of a chapter's jobs (:mod:`rcstudy.jobs`): ``python -m rcstudy plan``.

FLOPs follow the benchmark's count (:func:`rcstudy.bench.encoder_flops`): matmuls only, 2 per
parameter and token forward, twice that backward, so training costs 6·N·tokens and scoring
2·N·tokens, with N the parameters of the model's matmuls (embeddings are look-ups; the
benchmark's attention term, 4·length·hidden per layer and token, is left out: a few per cent at
256 tokens). Tokens are estimated from the text (:func:`rcstudy.jobs.option_tokens`), truncated at
the configured length. Where a job tells its tokens apart (:class:`rcstudy.jobs.Tokens`), a
prompt whose key/value cache serves its options counts once, an encoder-decoder model's source
tokens count against its encoder's parameters and its target tokens against its decoder's, and
generation is memory-bound: each decoding step of a batch reads every weight once, so it takes
the weights' bytes ÷ the GPU's memory bandwidth (or its FLOPs at the compute rate, if longer).
Hours of computing are FLOPs ÷ (the GPU's bf16 dense peak × a utilisation per engine, training
or scoring, and model size: what the benchmark's gpu preset measured on full-size replicas
(``results["utilisation"]`` of ``cuda.json``) where it measured that engine at that size, else
:data:`ASSUMED_UTILISATION`); the plan says which.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from . import config
from .chapters import experiments_module, toc_chapters
from .errors import closest, did_you_mean
from .jobs import Job, Tokens
from .settings import PROJECT_ROOT

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ModelSize:
    params: float  # parameters of the matmuls (the N of 6·N·tokens), all stacks together
    source: str
    encoder: float | None = None  # an encoder-decoder model's encoder (None: not one)
    decoder: float | None = None  # ... its decoder, but the cross-attention's key and value projections
    cross_kv: float = 0.0  # ... those, which run over the source tokens once per target sequence

    @property
    def encoder_decoder(self) -> bool:
        return self.encoder is not None

    @property
    def decoding(self) -> float:
        """The parameters one generated token runs through (a decoder-only model: all of them)."""
        return self.decoder if self.decoder is not None else self.params


def _transformer(layers: int, hidden: int, ffn: int, *, gated: bool = False, kv: int | None = None) -> float:
    """Matmul parameters of a transformer stack: attention projections (Q and output d×d, K and V
    d×kv) and the feed-forward block (two d×f matrices, three when gated)."""
    kv = kv or hidden
    return layers * (2 * hidden * hidden + 2 * hidden * kv + (3 if gated else 2) * hidden * ffn)


def _t5(layers: int, d_model: int, inner: int, ffn: int, source: str, *, gated: bool = False) -> ModelSize:
    """An encoder-decoder T5 of ``layers`` blocks per stack: the encoder's self-attention (4·d·inner)
    and feed-forward block; the decoder's self-attention, cross-attention query and output
    (2·d·inner) and feed-forward block, and apart from them the cross-attention's key and value
    projections (2·d·inner per layer)."""
    ff = (3 if gated else 2) * d_model * ffn
    encoder = layers * (4 * d_model * inner + ff)
    decoder = layers * (6 * d_model * inner + ff)
    cross = layers * 2 * d_model * inner
    return ModelSize(encoder + decoder + cross, source, encoder, decoder, cross)


_BERT_BASE = _transformer(12, 768, 3072)
_BERT_LARGE = _transformer(24, 1024, 4096)
_LLAMA2_7B = _transformer(32, 4096, 11008, gated=True)

#: Matmul parameters of the models the profiles name (a pin ``@<sha>`` is ignored), from the
#: dimensions in each model's config.json on the Hub (layers, hidden, feed-forward) or, where
#: marked, the parameter count its authors published.
MODEL_SIZES: dict[str, ModelSize] = {
    "bert-base-uncased": ModelSize(_BERT_BASE, "config.json: 12 layers, hidden 768, ffn 3072"),
    "roberta-base": ModelSize(_BERT_BASE, "config.json: 12 layers, hidden 768, ffn 3072"),
    "xlnet-base-cased": ModelSize(_BERT_BASE, "config.json: 12 layers, d_model 768, d_inner 3072"),
    "gpt2": ModelSize(_BERT_BASE, "config.json: 12 layers, n_embd 768, ffn 4×768"),
    "openai-gpt": ModelSize(_BERT_BASE, "config.json: 12 layers, n_embd 768, ffn 4×768"),
    "bert-large-uncased": ModelSize(_BERT_LARGE, "config.json: 24 layers, hidden 1024, ffn 4096"),
    "bert-large-cased": ModelSize(_BERT_LARGE, "config.json: 24 layers, hidden 1024, ffn 4096"),
    "roberta-large": ModelSize(_BERT_LARGE, "config.json: 24 layers, hidden 1024, ffn 4096"),
    "xlnet-large-cased": ModelSize(_BERT_LARGE, "config.json: 24 layers, d_model 1024, d_inner 4096"),
    "microsoft/deberta-v3-large": ModelSize(_BERT_LARGE, "config.json: 24 layers, hidden 1024, ffn 4096"),
    "gpt2-large": ModelSize(_transformer(36, 1280, 5120), "config.json: 36 layers, n_embd 1280, ffn 4×1280"),
    "t5-large": _t5(24, 1024, 1024, 4096, "config.json: 24 layers per stack, d_model 1024, 16 heads of 64, d_ff 4096"),
    "allenai/unifiedqa-v2-t5-base-1363200": _t5(12, 768, 768, 3072, "T5-Base's config.json: 12 layers per stack, "
                                                "d_model 768, 12 heads of 64, d_ff 3072"),
    "allenai/unifiedqa-v2-t5-large-1363200": _t5(24, 1024, 1024, 4096, "T5-Large's config.json: 24 layers per stack, "
                                                 "d_model 1024, 16 heads of 64, d_ff 4096"),
    "allenai/unifiedqa-v2-t5-3b-1363200": _t5(24, 1024, 4096, 16384, "T5-3B's config.json: 24 layers per stack, "
                                              "d_model 1024, 32 heads of 128, d_ff 16384"),
    "google/flan-t5-xxl": _t5(24, 4096, 4096, 10240, "config.json: 24 layers per stack, d_model 4096, 64 heads of 64, "
                              "gated d_ff 10240", gated=True),
    "meta-llama/Llama-2-7b-hf": ModelSize(_LLAMA2_7B, "config.json: 32 layers, hidden 4096, gated ffn 11008"),
    "lmsys/vicuna-7b-v1.5": ModelSize(_LLAMA2_7B, "a Llama-2-7B fine-tune: the same config.json"),
    "meta-llama/Llama-2-13b-hf": ModelSize(_transformer(40, 5120, 13824, gated=True),
                                           "config.json: 40 layers, hidden 5120, gated ffn 13824"),
    "mistralai/Mistral-7B-v0.1": ModelSize(_transformer(32, 4096, 14336, gated=True, kv=1024),
                                           "config.json: 32 layers, hidden 4096, 8 KV heads of 128, gated ffn 14336"),
    "Qwen/Qwen2.5-7B": ModelSize(_transformer(28, 3584, 18944, gated=True, kv=512),
                                 "config.json: 28 layers, hidden 3584, 4 KV heads of 128, gated ffn 18944 "
                                 "(6.53B non-embedding parameters on the model card)"),
    "minilm-l6": ModelSize(_transformer(6, 384, 1536), "config.json: 6 layers, hidden 384, ffn 1536"),
    "smollm2-135m": ModelSize(_transformer(30, 576, 1536, gated=True, kv=192),
                              "config.json: 30 layers, hidden 576, 3 KV heads of 64, gated ffn 1536"),
    "tiny-bert": ModelSize(_transformer(2, 32, 64), "rcstudy.models.loading.TINY_DIMS"),
    "tiny-llama": ModelSize(_transformer(2, 32, 64, gated=True), "rcstudy.models.loading.TINY_DIMS"),
}


@dataclass(frozen=True)
class GPU:
    bf16_flops: float  # dense (no sparsity) bf16 tensor-core peak, FLOP/s
    source: str
    bandwidth: float = math.nan  # memory bandwidth, bytes/s


#: bf16 dense peaks and memory bandwidths from the vendors' data sheets (SXM parts where there are
#: several): NVIDIA H100 SXM 989 TFLOP/s, 3.35 TB/s HBM3; H200 SXM 989 TFLOP/s, 4.8 TB/s HBM3e;
#: A100 80GB SXM 312 TFLOP/s, 2,039 GB/s HBM2e; L40S 362 TFLOP/s, 864 GB/s GDDR6; L4 121 TFLOP/s,
#: 300 GB/s GDDR6; A10 125 TFLOP/s, 600 GB/s GDDR6; AMD Instinct MI300X 1,307 TFLOP/s, 5.3 TB/s HBM3.
GPUS: dict[str, GPU] = {
    "h100": GPU(989e12, "NVIDIA H100 SXM data sheet: 989 TFLOP/s bf16 dense, 3.35 TB/s", 3.35e12),
    "h200": GPU(989e12, "NVIDIA H200 SXM data sheet: 989 TFLOP/s bf16 dense, 4.8 TB/s", 4.8e12),
    "a100": GPU(312e12, "NVIDIA A100 80GB SXM data sheet: 312 TFLOP/s bf16 dense, 2,039 GB/s", 2.039e12),
    "l40s": GPU(362e12, "NVIDIA L40S data sheet: 362 TFLOP/s bf16 dense, 864 GB/s", 864e9),
    "l4": GPU(121e12, "NVIDIA L4 data sheet: 121 TFLOP/s bf16 dense, 300 GB/s", 300e9),
    "a10": GPU(125e12, "NVIDIA A10 data sheet: 125 TFLOP/s bf16 dense, 600 GB/s", 600e9),
    "mi300x": GPU(1307e12, "AMD Instinct MI300X data sheet: 1307 TFLOP/s bf16 dense, 5.3 TB/s", 5.3e12),
}


def gpu_of_device(name: str) -> str | None:
    """The key of :data:`GPUS` a CUDA device's name stands for ("NVIDIA H100 80GB HBM3" → h100)."""
    lowered = name.lower().replace(" ", "")
    return next((key for key in sorted(GPUS, key=len, reverse=True) if key in lowered), None)

#: Share of the bf16 peak assumed where no GPU benchmark has been recorded: a typical model FLOP
#: utilisation of encoder fine-tuning with dynamic padding, near what the CPU benchmark measured.
ASSUMED_UTILISATION = 0.30
BENCH_RESULTS = PROJECT_ROOT / "benchmarks" / "results"


class PlanError(ValueError):
    """A plan that cannot be made (an unknown chapter or GPU), said in one line."""


def unknown(name: str, choices: Sequence[str], what: str) -> PlanError:
    match = closest(name, choices, cutoff=0.3)
    return PlanError(f"unknown {what} {name!r}" + (did_you_mean(match) if match else f"; choose one of {', '.join(choices)}"))


def gpu(name: str) -> GPU:
    if name.lower() not in GPUS:
        raise unknown(name, sorted(GPUS), "GPU")
    return GPUS[name.lower()]


#: Share of the memory bandwidth a decoding step is assumed to reach where the benchmark has not
#: measured generation: Hugging Face's ``generate`` launches every layer's kernels from Python.
ASSUMED_BANDWIDTH_SHARE = 0.5
#: Bytes read per weight in a decoding step: the engines hold fp32 weights and compute under bf16
#: autocast, which casts each weight once per ``generate`` call and keeps the bf16 copy.
WEIGHT_BYTES = 2

#: Model sizes (matmul parameters) whose utilisation the benchmark measures apart: a model below
#: the first bound leaves a GPU waiting on the work around each step, so its share says nothing of
#: the full profile's models.
SIZE_CLASSES = (("small", 0.0), ("base", 50e6), ("large", 200e6), ("billions", 1.5e9))
REPRESENTATIVE_PARAMS = SIZE_CLASSES[1][1]
#: The engines the utilisation table tells apart: training (forward and backward), scoring
#: (forward, prompts of generation included) and generation (a share of the memory bandwidth).
ENGINES = ("train", "score", "generate")


def size_class(params: float) -> str:
    """The :data:`SIZE_CLASSES` name of a model with ``params`` matmul parameters."""
    return [name for name, low in SIZE_CLASSES if params >= low][-1]


@dataclass(frozen=True)
class Utilisation:
    """The share of the GPU an engine reaches at a model size, and where the number comes from."""

    share: float
    measured: bool
    source: str


def utilisation_table(results_dir: Path = BENCH_RESULTS) -> dict[tuple[str, str], Utilisation]:
    """The measured shares by (engine, size class): ``results["utilisation"]`` of
    ``<results_dir>/cuda-check.json`` (the gpu-check preset's replica stage: ``{engine: {class:
    {"share", "model", ...}}}``), and, from ``cuda.json``, the training stage's FLOP share of its model."""
    table = {}
    check = Path(results_dir) / "cuda-check.json"
    measured = json.loads(check.read_text()) if check.is_file() else {}
    path = Path(results_dir) / "cuda.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
    gpu_name = measured.get("hardware", {}).get("gpu") or "a GPU"
    for engine, by_size in (measured.get("utilisation") or {}).items():
        for size, m in by_size.items():
            if size != "small" and m.get("share"):
                what = "memory bandwidth" if engine == "generate" else "bf16 peak"
                table[(engine, size)] = Utilisation(float(m["share"]), True,
                                                    f"measured {float(m['share']):.0%} of {what} with {m.get('model', 'a replica')} "
                                                    f"on {gpu_name} (cuda-check.json)")
    share = results.get("flops", {}).get("ours", {}).get("fraction_of_peak")
    model = results.get("config", {}).get("mc_model")
    size = model_size(model) if model else None
    if share and size is not None and size.params >= REPRESENTATIVE_PARAMS:
        table.setdefault(("train", size_class(size.params)), Utilisation(
            float(share), True, f"measured by the benchmark on CUDA (cuda.json: {float(share):.0%} of peak with {model})"))
    return table


def engine_utilisation(engine: str, params: float, results_dir: Path = BENCH_RESULTS,
                       table: dict | None = None) -> Utilisation:
    """The share for ``engine`` at a model of ``params`` matmul parameters: measured at that size
    class, else assumed (:data:`ASSUMED_UTILISATION`, or :data:`ASSUMED_BANDWIDTH_SHARE` for
    generation), said so."""
    table = utilisation_table(results_dir) if table is None else table
    size = size_class(params)
    if (engine, size) in table:
        return table[(engine, size)]
    if engine == "generate":
        return Utilisation(ASSUMED_BANDWIDTH_SHARE, False, f"assumed {ASSUMED_BANDWIDTH_SHARE:.0%} of memory bandwidth")
    return Utilisation(ASSUMED_UTILISATION, False, f"assumed {ASSUMED_UTILISATION:.0%} of peak")


def utilisation(results_dir: Path = BENCH_RESULTS) -> tuple[float, str]:
    """The training share of a base-to-large model, and where it comes from (the benchmark's
    measurement on CUDA, else :data:`ASSUMED_UTILISATION`): the headline number of a plan."""
    table = utilisation_table(results_dir)
    for size in ("large", "base", "billions"):
        if ("train", size) in table:
            u = table[("train", size)]
            return u.share, u.source
    measured = _measured_share(Path(results_dir) / "cuda.json")
    if measured:
        share, model = measured
        return ASSUMED_UTILISATION, (
            f"assumed {ASSUMED_UTILISATION:.0%} of peak (the GPU benchmark measured {share:.1%} with {model or 'its model'}, "
            f"a model too small to keep a GPU busy)")
    cpu = _measured_share(Path(results_dir) / "cpu.json")
    cpu_note = f"; the CPU benchmark measured {cpu[0]:.0%}" if cpu else ""
    return ASSUMED_UTILISATION, f"assumed {ASSUMED_UTILISATION:.0%} of peak (no GPU benchmark recorded{cpu_note})"


def _measured_share(path: Path) -> tuple[float, str | None] | None:
    """Our trainer's FLOP/s as a share of the matmul peak in a benchmark results file, and the
    model it trained (None: not there)."""
    if not path.is_file():
        return None
    results = json.loads(path.read_text())
    share = results.get("flops", {}).get("ours", {}).get("fraction_of_peak")
    return (float(share), results.get("config", {}).get("mc_model")) if share else None


def model_size(model: str) -> ModelSize | None:
    from .models.registry import split_revision

    return MODEL_SIZES.get(split_revision(model)[0])


def job_tokens(job: Job) -> Tokens:
    """A job's :class:`~rcstudy.jobs.Tokens`: its own, else its two totals (training tokens forward
    and backward, scored tokens forward)."""
    return job.tokens if job.tokens is not None else Tokens(train=job.train_tokens, forward=job.score_tokens)


@dataclass(frozen=True)
class Cost:
    """What one job's work costs: matmul FLOPs (training, forward) and seconds on a GPU."""

    train_flops: float
    forward_flops: float
    generate_flops: float
    seconds: float
    generate_seconds: float

    @property
    def flops(self) -> float:
        return self.train_flops + self.forward_flops + self.generate_flops


def work_cost(size: ModelSize, tokens: Tokens, card: GPU, results_dir: Path = BENCH_RESULTS,
              table: dict | None = None) -> Cost:
    """The FLOPs and seconds of ``tokens`` of work on a model of ``size`` on ``card``.

    Training: 6 FLOPs per parameter and token, scoring 2; an encoder-decoder model's source tokens
    against its encoder, target tokens against its decoder, and its cross-attention's key and value
    projections against the source tokens once per target sequence. Seconds: those FLOPs at the
    GPU's peak × the engine's utilisation (:func:`engine_utilisation`); each decoding step of a
    generation takes the decoding weights' bytes (:data:`WEIGHT_BYTES` each) ÷ the GPU's memory
    bandwidth × its measured share, or its FLOPs at the scoring rate where that is longer."""
    table = utilisation_table(results_dir) if table is None else table
    if size.encoder_decoder:
        cross = tokens.forward if tokens.cross is None else tokens.cross
        train = size.encoder * tokens.train + size.decoder * tokens.train_target + size.cross_kv * tokens.train
        forward = size.encoder * tokens.forward + size.decoder * tokens.forward_target + size.cross_kv * cross
    else:
        train = size.params * (tokens.train + tokens.train_target)
        forward = size.params * (tokens.forward + tokens.forward_target)
    train_flops, forward_flops = 6 * train, 2 * forward
    generate_flops = 2 * size.decoding * tokens.generated
    u_train = engine_utilisation("train", size.params, results_dir, table).share
    u_score = engine_utilisation("score", size.params, results_dir, table).share
    seconds = train_flops / (card.bf16_flops * u_train) + forward_flops / (card.bf16_flops * u_score)
    generate_seconds = 0.0
    if tokens.decode_steps:
        bandwidth = card.bandwidth * engine_utilisation("generate", size.params, results_dir, table).share
        per_step = max(WEIGHT_BYTES * size.decoding / bandwidth,
                       generate_flops / tokens.decode_steps / (card.bf16_flops * u_score))
        generate_seconds = per_step * tokens.decode_steps
    elif generate_flops:
        generate_seconds = generate_flops / (card.bf16_flops * u_score)
    return Cost(train_flops, forward_flops, generate_flops, seconds + generate_seconds, generate_seconds)


def job_cost(job: Job, card: GPU, results_dir: Path = BENCH_RESULTS, table: dict | None = None) -> Cost | None:
    """:func:`work_cost` of a job (None for a model of unknown size: a from-scratch baseline)."""
    size = model_size(job.model)
    return None if size is None else work_cost(size, job_tokens(job), card, results_dir, table)


def job_flops(job: Job) -> float:
    """The matmul FLOPs of a job (:func:`work_cost`); NaN for a model of unknown size."""
    size = model_size(job.model)
    if size is None:
        return math.nan
    return work_cost(size, job_tokens(job), GPUS["h100"], table={}).flops


# --- the jobs and the plan of a chapter -------------------------------------------------------

def planned_chapters() -> list[str]:
    """The chapters with experiments (a module of ``rcstudy.experiments`` declaring ``jobs``), in book order."""
    return [c for c in toc_chapters() if hasattr(experiments_module(c), "jobs")]


def chapter_module(chapter: str):
    """``rcstudy.experiments.<chapter>``; a :class:`PlanError` naming the closest chapter if there is none."""
    chapters = planned_chapters()
    if chapter not in chapters:
        raise unknown(chapter, chapters, "chapter")
    return experiments_module(chapter)


def chapter_config(chapter: str, profile: str, overrides: dict | None = None):
    """A chapter's validated configuration, with the profile's data directory in ``RCSTUDY_DATA``."""
    module = chapter_module(chapter)
    data = config.read_profile(chapter, profile).get("data")
    if data:
        os.environ["RCSTUDY_DATA"] = str(config.resolve_data_dir(data))
    return module.Config.load(profile, overrides or {})


def chapter_jobs(chapter: str, profile: str, overrides: dict | None = None) -> list[Job]:
    return chapter_module(chapter).jobs(chapter_config(chapter, profile, overrides))


PLAN_COLUMNS = ["kind", "model", "input", "seed", "fold", "items", "epochs", "tokens", "PFLOPs", "GPU hours", "note"]


def _counting_note(job: Job, size: ModelSize | None) -> str:
    """How a job's tokens were counted, where the plan had to guess."""
    if size is None or job.tokens is not None:
        return ""
    if size.encoder_decoder:
        return "source and target tokens not told apart: all counted against the encoder"
    if job.kind == "generate":
        return "prompt and generated tokens not told apart: all counted as scored"
    return ""


def plan_table(jobs: Sequence[Job], gpu_name: str = "h100", results_dir: Path = BENCH_RESULTS) -> pd.DataFrame:
    """One row per job (indexed by its name) with its FLOPs (PFLOPs) and estimated hours on ``gpu_name``
    (:func:`job_cost`); ``attrs`` says the GPU and which utilisation each engine and size got."""
    import pandas as pd

    from .models.registry import split_revision

    card = gpu(gpu_name)
    table_u = utilisation_table(results_dir)
    rows, used = [], {}
    for j in jobs:
        size = model_size(j.model)
        cost = job_cost(j, card, results_dir, table_u)
        if size is not None:
            tokens = job_tokens(j)
            engines = [e for e, n in (("train", tokens.train + tokens.train_target),
                                      ("score", tokens.forward + tokens.forward_target), ("generate", tokens.decode_steps)) if n]
            for engine in engines:
                used[(engine, size_class(size.params))] = engine_utilisation(engine, size.params, results_dir, table_u)
        note = "; ".join(n for n in (j.note, _counting_note(j, size)) if n)
        rows.append({"job": j.name, "kind": j.kind, "model": split_revision(j.model)[0], "input": j.input, "seed": j.seed,
                     "fold": j.fold, "items": j.items, "epochs": j.epochs, "tokens": job_tokens(j).total,
                     "PFLOPs": cost.flops / 1e15 if cost else math.nan,
                     "GPU hours": cost.seconds / 3600 if cost else math.nan, "note": note})
    table = pd.DataFrame(rows, columns=["job", *PLAN_COLUMNS]).set_index("job").astype({"seed": "Int64", "fold": "Int64"})
    share, how = utilisation(results_dir)
    table.attrs.update(gpu=gpu_name.lower(), gpu_source=card.source, utilisation=share, utilisation_source=how,
                       utilisations={f"{e}, {c}": u.source for (e, c), u in sorted(used.items())})
    return table


def plan(chapter: str, profile: str = "full", gpu_name: str = "h100", overrides: dict | None = None,
         results_dir: Path = BENCH_RESULTS) -> pd.DataFrame:
    """The plan of one chapter in one profile: :func:`plan_table` of :func:`chapter_jobs`."""
    gpu(gpu_name)  # an unknown GPU fails before the data are read
    return plan_table(chapter_jobs(chapter, profile, overrides), gpu_name, results_dir)


def plan_totals(chapters: Sequence[str], profile: str = "full", gpu_name: str = "h100",
                results_dir: Path = BENCH_RESULTS) -> pd.DataFrame:
    """Per chapter: jobs, jobs the notebook still runs itself, jobs of unknown size, PFLOPs and GPU
    hours (those of known size), with a total row (the appendix's table)."""
    import pandas as pd

    rows, used = {}, {}
    for chapter in chapters:
        jobs = chapter_jobs(chapter, profile)
        table = plan_table(jobs, gpu_name, results_dir)
        used |= table.attrs["utilisations"]
        rows[chapter] = {"jobs": len(jobs), "in the notebook": sum(j.step is None for j in jobs),
                         "of unknown size": int(table["PFLOPs"].isna().sum()),
                         "PFLOPs": table["PFLOPs"].sum(min_count=1), "GPU hours": table["GPU hours"].sum(min_count=1)}
    totals = pd.DataFrame.from_dict(rows, orient="index")
    totals.loc["total"] = totals.sum(min_count=1)
    share, how = utilisation(results_dir)
    totals.attrs.update(gpu=gpu_name.lower(), gpu_source=gpu(gpu_name).source, utilisation=share,
                        utilisation_source=how, utilisations=used)
    return totals


def row_needs(chapter: str, selectors: Mapping[str, Mapping], profile: str = "full", gpu_name: str = "h100",
              results_dir: Path = BENCH_RESULTS) -> dict[str, str]:
    """What the ``profile`` would spend on each row of a chapter, as text for
    :attr:`rcstudy.learning.LossCheck.full_profile`: ``selectors`` maps a row's name to the jobs
    that compute it, ``{"step": <job step>, "arguments": {name: value, ...}}`` (a job matches when
    its step, or its notebook step, is that and its arguments hold those values; arguments left
    out match any, so a row whose counterpart is not one set of jobs names its step alone, and the
    text says so; a row that averages every job of its step, one per seed, says ``"every": True``).
    The jobs are enumerated on the data of this process's ``RCSTUDY_DATA``, as ``rcstudy plan`` does."""
    jobs = chapter_jobs(chapter, profile)
    table = plan_table(jobs, gpu_name, results_dir)
    card = gpu_name.upper() if len(gpu_name) <= 5 else gpu_name
    out = {}
    for row, sel in selectors.items():
        wanted = sel.get("arguments") or {}
        matched = [j for j in jobs if j.runs_as == sel["step"] and all(j.arguments.get(k) == v for k, v in wanted.items())]
        if not matched:
            continue
        hours = table.loc[[j.name for j in matched], "GPU hours"]
        names = [j.name for j in matched]
        listed = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        what = (f"{len(names)} job{'s' * (len(names) != 1)}: {listed}" if wanted or sel.get("every")
                else f"all its {sel['step']} jobs, having no one counterpart there: {listed}")
        if hours.isna().all():
            out[row] = (f"{len(names)} job{'s' * (len(names) != 1)} ({listed}) of a model trained from scratch, whose "
                        "GPU hours the plan does not estimate")
        else:
            unknown = "; those of unknown size not counted" if hours.isna().any() else ""
            out[row] = f"{hours.sum():.3g} GPU hours on one {card} ({what}{unknown})"
    return out


#: The GPU the book's appendix plans for.
APPENDIX_GPU = "h100"


def appendix_plan(results_dir: Path = BENCH_RESULTS) -> tuple[pd.DataFrame, str]:
    """The appendix's table: :func:`plan_totals` of every chapter in the full profile on
    :data:`APPENDIX_GPU`, rounded, and its caption."""
    totals = plan_totals(planned_chapters(), "full", APPENDIX_GPU, results_dir)
    shown = totals.astype({c: int for c in ("jobs", "in the notebook", "of unknown size")})
    return shown.round({"PFLOPs": 1, "GPU hours": 2}), f"The full profile's jobs per chapter. {describe_plan(totals)}"


def describe_plan(table: pd.DataFrame) -> str:
    """The line under a plan: which GPU, its peak, and which utilisation each engine and size got."""
    used = table.attrs.get("utilisations") or {}
    shares = "; ".join(f"{what}: {how}" for what, how in used.items()) or table.attrs["utilisation_source"]
    return (f"GPU: {table.attrs['gpu']} ({table.attrs['gpu_source']}); utilisation by engine and model size "
            f"({', '.join(f'{n} from {_params(low)}' for n, low in SIZE_CLASSES[1:])}): {shares}. "
            "FLOPs: 6·N·tokens to train, 2·N·tokens to score, a prompt once where its key/value cache serves "
            "its options, an encoder-decoder model's source and target tokens against its encoder's and "
            "decoder's parameters; generation: each decoding step reads every weight once (memory-bound); "
            "tokens estimated from the text.")


def _params(n: float) -> str:
    return f"{n / 1e9:g}B" if n >= 1e9 else f"{n / 1e6:g}M"
