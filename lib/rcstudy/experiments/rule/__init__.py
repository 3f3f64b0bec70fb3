"""The RULE chapter's pipeline: statistics, baselines, the ReClor-trained encoder, LM prompting,
rationale alignment, the "None" analysis and the EASY/HARD extension.

:func:`run` executes the chapter's jobs (:func:`jobs`: every fine-tuning and LM pass, each a step
that returns its result) and builds every section of the page from what they return; each section
is a function from the configuration and its inputs to a :class:`~rcstudy.experiments.section.Section`
(tables, facts, figures' data and the evidence it found for the claims it tests, each claim naming
the rows it rests on), one module per part of the page:
:mod:`.release` (the data), :mod:`.fine_tuned` and :mod:`.prompting` (Table 2),
:mod:`.follow_ups` (every system, positions, alignment), :mod:`.none_option` (§4.2),
:mod:`.rationales` (Table 5), :mod:`.ablation` (Appendix M), :mod:`.length_types` (Appendices I
and L), :mod:`.easy_hard` and :mod:`.gates` (did each model learn: the gates the claims rest on);
:mod:`.page` composes it all and judges the claims. :mod:`.units` holds the evaluation units and metrics,
:mod:`.steps` the jobs, :mod:`.tokens` their tokens for the plan. The page's figures are in
:mod:`.plots`, which only the page imports.
"""

from .alignment import alignment_gap, alignment_items
from .baselines import (content_words, length_baseline, overlap_baseline, overlap_choice, overlap_facts,
                        position_baseline)
from .config import Config, EncoderSetup, PromptSetting, trained_setups
from .easy_hard import easy_hard_table
from .fine_tuned import encoder_system
from .follow_ups import by_subquestion_count, consistency_excess, position_table
from .length_types import accuracy_by_length, by_type_table, question_frame, question_type, type_independence
from .none_option import none_table
from .page import run
from .prompting import best_by_subq, lm_alignment, prompting_system, selective_gap, setting_prompts
from .rationales import RATIONALE_VARIANTS, main_rationales, rationale_mains, rationale_systems, rationale_table
from .release import length_table, negation_table, prompt_table, split_table, whitespace_tokens
from .results import Results
from .steps import job_inputs, jobs, lm_job, trained_job
from .units import Evaluation, System, chance_row, pooled, sample_mains, samples, system_scores

__all__ = [
    "Config", "EncoderSetup", "Evaluation", "PromptSetting", "RATIONALE_VARIANTS", "Results", "System",
    "accuracy_by_length", "alignment_gap", "alignment_items", "best_by_subq", "by_subquestion_count", "by_type_table",
    "chance_row", "consistency_excess", "content_words", "easy_hard_table", "encoder_system", "job_inputs", "jobs",
    "length_baseline", "length_table", "lm_alignment", "lm_job", "main_rationales", "negation_table", "none_table",
    "overlap_baseline", "overlap_choice", "overlap_facts", "pooled", "position_baseline", "position_table",
    "prompt_table", "prompting_system", "question_frame", "question_type", "rationale_mains", "rationale_systems",
    "rationale_table", "run", "sample_mains", "samples", "selective_gap", "setting_prompts", "split_table",
    "system_scores", "trained_job", "trained_setups", "type_independence", "whitespace_tokens",
]
