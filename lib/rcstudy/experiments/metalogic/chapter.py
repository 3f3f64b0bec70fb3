"""The MetaLogic chapter: :func:`run` executes the chapter's jobs (feature model, fine-tuned
generators, data-scale runs, few-shot LM), then builds every section of the page from the data
and their outputs, and judges the paper's claims on the sections' evidence."""

from __future__ import annotations

from dataclasses import dataclass

import rcstudy.experiments.metalogic.steps as steps  # the jobs and their steps (jobs.execute runs them)

from ...data.metalogic import Metagraph
from ...jobs import execute
from ...report import ChapterResults
from ...runtime import Runtime
from .config import PAPER, Config
from .data import Data, Example, data_section, example_section, job_splits
from .errors import ErrorCategories, error_section
from .generation import Table3, Training, generated, table3_section, training_section
from .predictors import Baselines, Metrics, baselines_section, metrics_section
from .runs import generator_samples
from .scale import DataScale, scale_section
from ..section import composed
from .step_types import StepTypes, step_types_section


@dataclass
class Results(ChapterResults):
    """Tables (by download name), facts (glue name → value), claims, the captions that name a
    system or a sample size, the data, and each section of the page (with its figures' data)."""

    captions: dict[str, str]
    splits: dict[str, list[Metagraph]]
    data: Data
    example: Example
    metrics: Metrics
    baselines: Baselines
    training: Training
    table3: Table3
    step_types: StepTypes
    scale: DataScale
    errors: ErrorCategories


def run(cfg: Config, rt: Runtime) -> Results:
    """Every table, figure's data, quoted number and claim of the chapter: the chapter's jobs run
    (each finds its result in the cache once it has been computed), then every section is built,
    in page order, from the data and the jobs' outputs."""
    splits = job_splits()
    outputs = execute(steps, cfg, rt)
    fits, g = outputs.of("feature_job"), generated(cfg, generator_samples(cfg, splits), outputs)
    metrics = metrics_section(cfg, splits)
    baselines = baselines_section(splits, metrics, fits.test)
    table3 = table3_section(cfg, splits, g, outputs.of("fewshot_job") if cfg.fewshot.model else None, baselines)
    sections = {"data": data_section(splits), "example": example_section(splits), "metrics": metrics,
                "baselines": baselines, "training": training_section(cfg, g, metrics.tokenizer), "table3": table3,
                "step_types": step_types_section(splits, g, table3, baselines),
                "scale": scale_section(cfg, splits, g, outputs, fits), "errors": error_section(cfg, splits, outputs, fits)}
    parts = list(sections.values())
    return Results(**composed(PAPER, parts),
                   captions={k: v for p in parts for k, v in p.captions.items()},
                   splits=splits, **sections)
