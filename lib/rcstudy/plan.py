"""A GPU-hour plan of a chapter's jobs (:mod:`rcstudy.jobs`): ``python -m rcstudy plan``.

FLOPs follow the benchmark's count (:func:`rcstudy.bench.encoder_flops`): matmuls only, 2 per
parameter and token forward, twice that backward, so training costs 6·N·tokens and scoring or
generation 2·N·tokens, with N the parameters of the model's matmuls (embeddings are look-ups; the
benchmark's attention term, 4·length·hidden per layer and token, is left out: a few per cent at
256 tokens). Tokens are estimated from the text (:func:`rcstudy.jobs.option_tokens`), truncated at
the configured length. Hours are FLOPs ÷ (the GPU's bf16 dense peak × a utilisation: the
benchmark's measured share on CUDA where one was recorded, else :data:`ASSUMED_UTILISATION`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from . import config
from .chapters import experiments_module, toc_chapters
from .errors import closest, did_you_mean
from .jobs import Job
from .settings import PROJECT_ROOT

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ModelSize:
    params: float  # parameters of the matmuls (the N of 6·N·tokens)
    source: str


def _transformer(layers: int, hidden: int, ffn: int, *, gated: bool = False, kv: int | None = None) -> float:
    """Matmul parameters of a transformer stack: attention projections (Q and output d×d, K and V
    d×kv) and the feed-forward block (two d×f matrices, three when gated)."""
    kv = kv or hidden
    return layers * (2 * hidden * hidden + 2 * hidden * kv + (3 if gated else 2) * hidden * ffn)


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
    "t5-large": ModelSize(770e6, "published total, encoder and decoder (Raffel et al. 2020, T5 paper)"),
    "allenai/unifiedqa-v2-t5-base-1363200": ModelSize(220e6, "published total of T5-Base (T5 paper)"),
    "allenai/unifiedqa-v2-t5-large-1363200": ModelSize(770e6, "published total of T5-Large (T5 paper)"),
    "allenai/unifiedqa-v2-t5-3b-1363200": ModelSize(2.8e9, "published total of T5-3B (T5 paper)"),
    "google/flan-t5-xxl": ModelSize(11.3e9, "published total of T5 v1.1 XXL (model card)"),
    "meta-llama/Llama-2-7b-hf": ModelSize(_LLAMA2_7B, "config.json: 32 layers, hidden 4096, gated ffn 11008"),
    "lmsys/vicuna-7b-v1.5": ModelSize(_LLAMA2_7B, "a Llama-2-7B fine-tune: the same config.json"),
    "meta-llama/Llama-2-13b-hf": ModelSize(_transformer(40, 5120, 13824, gated=True),
                                           "config.json: 40 layers, hidden 5120, gated ffn 13824"),
    "mistralai/Mistral-7B-v0.1": ModelSize(_transformer(32, 4096, 14336, gated=True, kv=1024),
                                           "config.json: 32 layers, hidden 4096, 8 KV heads of 128, gated ffn 14336"),
    "Qwen/Qwen2.5-7B": ModelSize(6.53e9, "published non-embedding parameters (model card)"),
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


#: bf16 dense peaks from the vendors' data sheets (SXM parts where there are several).
GPUS: dict[str, GPU] = {
    "h100": GPU(989e12, "NVIDIA H100 SXM data sheet: 989 TFLOP/s bf16 dense"),
    "h200": GPU(989e12, "NVIDIA H200 SXM data sheet: 989 TFLOP/s bf16 dense"),
    "a100": GPU(312e12, "NVIDIA A100 data sheet: 312 TFLOP/s bf16 dense"),
    "l40s": GPU(362e12, "NVIDIA L40S data sheet: 362 TFLOP/s bf16 dense"),
    "l4": GPU(121e12, "NVIDIA L4 data sheet: 121 TFLOP/s bf16 dense"),
    "a10": GPU(125e12, "NVIDIA A10 data sheet: 125 TFLOP/s bf16 dense"),
    "mi300x": GPU(1307e12, "AMD Instinct MI300X data sheet: 1307 TFLOP/s bf16 dense"),
}

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


#: A benchmark model smaller than this (matmul parameters) leaves a GPU waiting on the work around
#: each step, so its measured share says nothing of the full profile's models (base size and up).
REPRESENTATIVE_PARAMS = 50e6


def utilisation(results_dir: Path = BENCH_RESULTS) -> tuple[float, str]:
    """The share of peak FLOP/s the engines reach on a GPU, and where the number comes from: the
    benchmark's measured training FLOP share on CUDA (``<results_dir>/cuda.json``, against the
    matmul peak it measured there) where it exists and measured a model of at least
    :data:`REPRESENTATIVE_PARAMS`, else :data:`ASSUMED_UTILISATION`."""
    measured = {device: _measured_share(Path(results_dir) / f"{device}.json") for device in ("cuda", "cpu")}
    if measured["cuda"]:
        share, model = measured["cuda"]
        size = model_size(model) if model else None
        if size is not None and size.params >= REPRESENTATIVE_PARAMS:
            return share, f"measured by the benchmark on CUDA (cuda.json: {share:.0%} of peak with {model})"
        return ASSUMED_UTILISATION, (
            f"assumed {ASSUMED_UTILISATION:.0%} of peak (the GPU benchmark measured {share:.1%} with {model or 'its model'}, "
            f"a model too small to keep a GPU busy)")
    cpu = f"; the CPU benchmark measured {measured['cpu'][0]:.0%}" if measured["cpu"] else ""
    return ASSUMED_UTILISATION, f"assumed {ASSUMED_UTILISATION:.0%} of peak (no GPU benchmark recorded{cpu})"


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


def job_flops(job: Job) -> float:
    """6·N·training tokens + 2·N·scored tokens; NaN for a model of unknown size (a from-scratch
    baseline)."""
    size = model_size(job.model)
    if size is None:
        return math.nan
    return 6 * size.params * job.train_tokens + 2 * size.params * job.score_tokens


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


def plan_table(jobs: Sequence[Job], gpu_name: str = "h100", results_dir: Path = BENCH_RESULTS) -> pd.DataFrame:
    """One row per job (indexed by its name) with its FLOPs (PFLOPs) and estimated hours on ``gpu_name``
    (bf16 peak × :func:`utilisation`); ``attrs`` says the GPU and where the utilisation comes from."""
    import pandas as pd

    from .models.registry import split_revision

    card = gpu(gpu_name)
    share, how = utilisation(results_dir)
    rows = []
    for j in jobs:
        flops = job_flops(j)
        rows.append({"job": j.name, "kind": j.kind, "model": split_revision(j.model)[0], "input": j.input, "seed": j.seed,
                     "fold": j.fold, "items": j.items, "epochs": j.epochs, "tokens": j.train_tokens + j.score_tokens,
                     "PFLOPs": flops / 1e15, "GPU hours": flops / (card.bf16_flops * share) / 3600, "note": j.note})
    table = pd.DataFrame(rows, columns=["job", *PLAN_COLUMNS]).set_index("job").astype({"seed": "Int64", "fold": "Int64"})
    table.attrs.update(gpu=gpu_name.lower(), gpu_source=card.source, utilisation=share, utilisation_source=how)
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

    rows = {}
    for chapter in chapters:
        jobs = chapter_jobs(chapter, profile)
        table = plan_table(jobs, gpu_name, results_dir)
        rows[chapter] = {"jobs": len(jobs), "in the notebook": sum(j.step is None for j in jobs),
                         "of unknown size": int(table["PFLOPs"].isna().sum()),
                         "PFLOPs": table["PFLOPs"].sum(min_count=1), "GPU hours": table["GPU hours"].sum(min_count=1)}
    totals = pd.DataFrame.from_dict(rows, orient="index")
    totals.loc["total"] = totals.sum(min_count=1)
    share, how = utilisation(results_dir)
    totals.attrs.update(gpu=gpu_name.lower(), gpu_source=gpu(gpu_name).source, utilisation=share,
                        utilisation_source=how)
    return totals


#: The GPU the book's appendix plans for.
APPENDIX_GPU = "h100"


def appendix_plan(results_dir: Path = BENCH_RESULTS) -> tuple[pd.DataFrame, str]:
    """The appendix's table: :func:`plan_totals` of every chapter in the full profile on
    :data:`APPENDIX_GPU`, rounded, and its caption."""
    totals = plan_totals(planned_chapters(), "full", APPENDIX_GPU, results_dir)
    shown = totals.astype({c: int for c in ("jobs", "in the notebook", "of unknown size")})
    return shown.round({"PFLOPs": 1, "GPU hours": 2}), f"The full profile's jobs per chapter. {describe_plan(totals)}"


def describe_plan(table: pd.DataFrame) -> str:
    """The line under a plan: which GPU, its peak, and which utilisation."""
    return (f"GPU: {table.attrs['gpu']} ({table.attrs['gpu_source']}); utilisation: "
            f"{table.attrs['utilisation_source']}. FLOPs: 6·N·tokens to train, 2·N·tokens to score; "
            "tokens estimated from the text.")
