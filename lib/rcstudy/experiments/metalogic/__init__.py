"""The MetaLogic chapter (``chapters/metalogic.md``): can a model write down the logic of an argument?

:func:`run` executes the chapter's jobs (:func:`jobs`; their steps are :mod:`.steps`' ``*_job``
functions: the feature model, the fine-tuned generators, the data-scale runs, the few-shot LM) and
builds each section of the page from their outputs, one module per section: the data
(:mod:`.data`), the metrics and the predictors without a pretrained model (:mod:`.predictors`),
generation and Table 3 (:mod:`.generation`), step types (:mod:`.step_types`), data scale
(:mod:`.scale`) and the error categories (:mod:`.errors`); the figures are in :mod:`.plots`.
"""

from .chapter import Results, run
from .config import (METHOD_NAMES, PAPER, Config, Decoding, ErrorAnalysis, FewShot, Scale, Seq2Seq, engine_config,
                     scaled_generators)
from .data import job_splits, label_counts, load_splits, quirks, ratio_subsets, split_sizes
from .generation import fewshot_facts
from .intervals import PassageScores, macro_interval
from .runs import FeatureFits, error_sample, fewshot_inputs, fewshot_shots, generator_samples, seq2seq_run
from .scores import COLUMN_NAMES, OURS_NAMES, SCALE_PANELS, score_frame
from .steps import feature_job, fewshot_job, generator_job, jobs, scale_job

__all__ = [
    "COLUMN_NAMES", "METHOD_NAMES", "OURS_NAMES", "PAPER", "SCALE_PANELS", "Config", "Decoding", "ErrorAnalysis",
    "FeatureFits", "FewShot", "PassageScores", "Results", "Scale", "Seq2Seq", "engine_config", "error_sample",
    "feature_job", "fewshot_facts", "fewshot_inputs", "fewshot_job", "fewshot_shots", "generator_job",
    "generator_samples", "job_splits", "jobs", "label_counts", "load_splits", "macro_interval",
    "quirks", "ratio_subsets", "run", "scale_job", "scaled_generators", "score_frame", "seq2seq_run",
    "split_sizes",
]
