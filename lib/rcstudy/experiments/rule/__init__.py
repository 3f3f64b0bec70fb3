"""The RULE chapter's pipeline: statistics, baselines, the ReClor-trained encoder, LM prompting,
rationale alignment, the "None" analysis and the EASY/HARD extension.

One module per section of the page: :mod:`.release` (the data), :mod:`.baselines`,
:mod:`.fine_tuned` and :mod:`.prompting` (Table 2), :mod:`.follow_ups` (positions, "None",
alignment), :mod:`.rationales` (Table 5), :mod:`.ablation` (Appendix M), :mod:`.length_types`
(Appendices I and L) and :mod:`.easy_hard`; :mod:`.units` holds the evaluation units and metrics,
:mod:`.claims` the claims' evidence, :mod:`.steps` the jobs, :mod:`.tokens` their token counts and
:mod:`.page` the chapter's :func:`run`. The page's figures are in :mod:`.plots`, imported by the
page alone.
"""

from .alignment import alignment_items
from .baselines import (content_words, length_baseline, overlap_baseline, overlap_choice, overlap_facts,
                        position_baseline)
from .claims import alignment_gap, consistency_excess, selective_gap
from .config import Config, PromptSetting
from .easy_hard import easy_hard_table
from .fine_tuned import EncoderSetup, encoder_system, trained_setups
from .follow_ups import by_subquestion_count, none_table, position_table
from .length_types import accuracy_by_length, by_type_table, question_frame, question_type, type_independence
from .page import run
from .prompting import best_by_subq, lm_alignment, prompting_system, setting_prompts
from .rationales import RATIONALE_VARIANTS, main_rationales, rationale_mains, rationale_systems, rationale_table
from .release import length_table, negation_table, prompt_table, split_table, whitespace_tokens
from .results import Results
from .steps import job_inputs, jobs, lm_job, trained_job
from .units import Evaluation, System, chance_row, pooled, sample_mains, samples, system_scores
