"""The ReCoRD chapter: corpus statistics, construction checks and the cloze baselines.

One module per section of the page: :mod:`.corpus` (the data, Table 1, §3.2 and the metric),
:mod:`.table4` (the baselines) and :mod:`.trained` (did the trained readers learn?), each a
function of the configuration and its inputs to a small typed result (:mod:`.section`) with the
evidence for the claims it tests. :mod:`.methods` scores every method; :mod:`.work` declares the
chapter's jobs, whose steps :func:`run` executes (:mod:`.page`) before it builds the sections and
judges the paper's claims on their evidence; the figures are in :mod:`.plots`. What each method
reads is in :mod:`rcstudy.prompts.record`.
"""

from .config import PAPER, Config, DocQASettings, ExtractorSettings, LMBaseline, RankerConfig, Sizes
from .corpus import construction_checks, corpus_stats, data_overview, example_markdown
from .methods import (MethodResult, aligned, asreader_result, candidate_oracle, encoder_ranker, export_predictions,
                      f1_difference, first_entity, lm_result, most_frequent_entity, random_guess, span_extractor)
from .page import Results, run
from .trained import full_profile_rows
from .work import (asreader_job, docqa_job, extractor_job, job_queries, jobs, lm_job, lm_queries, ranker_job,
                   span_queries)

__all__ = ["PAPER", "Config", "DocQASettings", "ExtractorSettings", "LMBaseline", "RankerConfig", "Sizes",
           "construction_checks", "corpus_stats", "data_overview", "example_markdown", "MethodResult", "aligned",
           "asreader_result", "candidate_oracle", "encoder_ranker", "export_predictions", "f1_difference",
           "first_entity", "lm_result", "most_frequent_entity", "random_guess", "span_extractor", "Results",
           "run", "full_profile_rows", "asreader_job", "docqa_job", "extractor_job", "job_queries",
           "jobs", "lm_job", "lm_queries", "ranker_job", "span_queries"]
