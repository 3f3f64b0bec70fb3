"""The LogiQA chapter (``chapters/logiqa.md``): data diagnostics, statistics, reasoning-type
labels, the rule-based, from-scratch and pretrained systems, and the paper's analyses (ablation,
transfer, length, lexical overlap, reasoning types).

:func:`run` executes the chapter's jobs (:func:`jobs`; their steps are these modules' ``*_job``
functions) and builds each section of the page from their outputs, one module per section: the
data (:mod:`.data`), reasoning types (:mod:`.reasoning`), the systems' results (:mod:`.results`),
ablation, transfer, lengths, overlap and the paper's consistency; the figures are in :mod:`.plots`.
"""

from .ablation import ablation_section
from .chapter import EXPORT_FILE, Results, export_predictions, run
from .config import LM, Config, Dataset, Encoder, Readers, Sizes, Transfer
from .data import (LENGTH_BINS, LENGTH_LABELS, LogiQAData, answer_shares, fix_glued_periods, item_length, job_data,
                   length_bucket, load_data, paragraph_leak, split_diagnostics, token_statistics)
from .lengths import length_points, length_table
from .overlap import best_match, overlap_table, per_item_overlap
from .predictions import Predictions, full_length, results_table, score
from .reasoning import TypeLabels, gold_agreement, heuristic_types, type_labels, type_table
from .runs import (ablation_run, encoder_run, encoder_train_items, lm_items, lm_run, reader_run, reclor_source,
                   transfer_row_stages, transfer_run)
from .steps import ablation_job, encoder_job, jobs, lm_job, reader_job, transfer_job
from .systems import Systems, ablation_systems, lexical_systems, lm_system, majority_system, plm_system, \
    transfer_systems

__all__ = [
    "EXPORT_FILE", "LENGTH_BINS", "LENGTH_LABELS", "LM", "Config", "Dataset", "Encoder", "LogiQAData", "Predictions",
    "Readers", "Results", "Sizes", "Systems", "Transfer", "TypeLabels", "ablation_job", "ablation_run",
    "ablation_section", "ablation_systems", "answer_shares", "best_match", "encoder_job", "encoder_run",
    "encoder_train_items", "export_predictions", "fix_glued_periods", "full_length", "gold_agreement",
    "heuristic_types", "item_length", "job_data", "jobs", "length_bucket", "length_points",
    "length_table", "lexical_systems", "lm_items", "lm_job", "lm_run", "lm_system", "load_data", "majority_system",
    "overlap_table", "paragraph_leak", "per_item_overlap", "plm_system", "reader_job", "reader_run", "reclor_source",
    "results_table", "run", "score", "split_diagnostics", "token_statistics", "transfer_job", "transfer_row_stages",
    "transfer_run", "transfer_systems", "type_labels", "type_table",
]
