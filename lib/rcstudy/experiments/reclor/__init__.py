"""The ReClor chapter: data statistics, option biases, option-only models and EASY/HARD (Eq. 1),
Table 7, accuracy by question type, and the leaderboard files.

One module per section of the page: :mod:`.dataset` (the splits, Tables 2 and 3), :mod:`.biases`
(Table 5, option length), :mod:`.easy_hard` (Eq. 1 on val and cross-fitted on train, Tables 6
and 27) and :mod:`.table7` (Table 7, the trained rows, Figure 4, the leaderboard files), each a
function of the configuration and its inputs to a small typed result (:mod:`.section`) with the
evidence for the claims it tests. :mod:`.runs` trains and scores the families, every run cached;
:mod:`.work` declares the chapter's jobs, whose steps :func:`run` executes (:mod:`.page`) before
it builds the sections and judges the paper's claims on their evidence; the figures are in
:mod:`.plots`.
"""

from .config import (BILSTM, LOCAL_MODELS, NGRAM, P, SCRATCH, BiLSTM, Config, CrossFit, Encoder, FastText, FineTune,
                     Head, Sizes, Tokens, paper_name, row_label)
from .dataset import load_splits
from .easy_hard import easy_hard
from .page import Results, run
from .runs import Runner
from .table7 import full_profile_rows, leaderboard_file_name, table7, table7_side_by_side
from .work import cross_fit_job, jobs, notebook_job, option_only_job, table7_job

__all__ = ["BILSTM", "LOCAL_MODELS", "NGRAM", "P", "SCRATCH", "BiLSTM", "Config", "CrossFit", "Encoder", "FastText",
           "FineTune", "Head", "Sizes", "Tokens", "paper_name", "row_label", "load_splits", "easy_hard", "Results",
           "run", "Runner", "full_profile_rows", "leaderboard_file_name", "table7",
           "table7_side_by_side", "cross_fit_job", "jobs", "notebook_job", "option_only_job", "table7_job"]
