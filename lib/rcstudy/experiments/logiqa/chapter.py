"""The LogiQA chapter: :func:`run` executes the chapter's jobs, then builds every section of the
page from the data and their outputs, and judges the paper's claims on the sections' evidence."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import rcstudy.experiments.logiqa.steps as steps  # the jobs and their steps (jobs.execute runs them)

from ... import exports
from ...cache import file_checksum
from ...jobs import execute
from ...report import ChapterResults
from ...runtime import Runtime
from .ablation import Ablations, ablation_section
from .config import P, Config
from .consistency import consistency_section
from .data import (LogiQAData, Splits, Statistics, TrainingData, job_data, splits_section, statistics_section,
                   training_data_section)
from .lengths import Lengths, lengths_section
from .overlap import Overlap, overlap_section
from .predictions import Predictions
from .reasoning import ReasoningTypes, TypeAccuracy, reasoning_types_section, type_accuracy_section
from .results import (Learning, MainResults, ReaderCurves, learning_section, main_results_section,
                      reader_curves_section, word_matching_section)
from ..section import Section, composed
from .systems import Systems, systems
from .transfer import transfer_section

EXPORT_FILE = "logiqa_predictions.json"


@dataclass
class Results(ChapterResults):
    """The chapter's tables, facts and claims, its systems, and each section of the page (with its figures' data)."""

    systems: Systems
    splits: Splits
    training: TrainingData
    statistics: Statistics
    types: ReasoningTypes
    word_matching: Section
    readers: ReaderCurves
    learning: Learning
    main: MainResults
    ablation: Ablations
    transfer: Section
    lengths: Lengths
    overlap: Overlap
    type_accuracy: TypeAccuracy
    consistency: Section


def export_predictions(systems: Sequence[Predictions], data: LogiQAData) -> Path:
    """Write every system's predictions ``{system: {split: {item id: [option per seed]}}}`` to the
    exports folder, with the data files' checksums."""
    payload = {"data": {p.name: file_checksum(p) for p in data.files}, "systems": {}}
    for s in systems:
        payload["systems"][s.name] = {
            k: {it.id: [int(x) for x in p[:, i]] for i, it in enumerate(data.splits[k]) if (p[:, i] >= 0).all()}
            for k, p in s.preds.items()}
    return exports.write_json(EXPORT_FILE, payload)


def run(cfg: Config, rt: Runtime, *, profile: str | None = None,
        full_profile: Callable[[dict[str, dict]], dict[str, str]] | None = None) -> Results:
    """Everything the chapter shows, computed from ``cfg`` (the data come from ``$RCSTUDY_DATA``):
    the chapter's jobs run (each finds its result in the cache once it has been computed), then
    every section is built from the data and the jobs' outputs. ``profile`` names the run in the
    prose; ``full_profile``: what the full profile would spend on each trained row that did not
    learn (the page passes :func:`rcstudy.plan.row_needs`; :func:`~.results.learning_section`)."""
    data = job_data(cfg.dataset)
    s = systems(cfg, data, execute(steps, cfg, rt))
    main, types = main_results_section(cfg, s, data, profile), reasoning_types_section(cfg, data)
    sections = {"splits": splits_section(cfg, data), "training": training_data_section(cfg, data),
                "statistics": statistics_section(data), "types": types, "word_matching": word_matching_section(data),
                "readers": reader_curves_section(s), "learning": learning_section(cfg, s, data, full_profile),
                "main": main, "ablation": ablation_section(cfg, s, data), "transfer": transfer_section(s, data),
                "lengths": lengths_section(cfg, s, data, main.acc), "overlap": overlap_section(cfg, s, data, main.acc),
                "type_accuracy": type_accuracy_section(cfg, s, data, types),
                "consistency": consistency_section(data)}
    parts = list(sections.values())
    export_predictions(s.everything, data)
    return Results(**composed(P, parts, sections["learning"].checks),
                   systems=s, **sections)
