"""The baselines (Table 4): every method's row on our evaluation queries, beside the paper's, and
the numbers the note and the paragraphs after the table quote."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown


from ... import papers, stats
from ...claims import ClaimEvidence
from ...data.records import ClozeQuery
from ...jobs import Outputs
from ...prompts.record import span_examples
from ...report import md_text, paper_vs_ours
from ...stats import Interval
from .config import PAPER, Config
from .methods import (MethodResult, SeedRun, SpanRun, aligned, candidate_oracle, export_predictions, f1_difference,
                      first_entity, most_frequent_entity, pooled, pooled_spans, random_guess, results_frame)
from ..section import Section
from .work import lm_queries, span_queries

#: Rows of our Table 4 that are no machine reader of the paper's kind (left out of "the best method").
NOT_MACHINE = ("Candidate oracle", "Random (the other draw)")
RANKER_FIELDS = {"QA": "the filled-in query alone, without the passage (a CPU-budget choice; "
                       "the full profile reads the passage)",
                 "CQA": "the passage and the filled-in query"}
RANDOM_MODES = {"mention": "entity mentions", "unique": "distinct candidate strings"}


@dataclass(frozen=True)
class Readers:
    """What the chapter's jobs returned: the LM's result and each trained reader's runs, seed by seed."""

    lm: MethodResult
    ranker: list[SeedRun]
    asreader: list[SeedRun]
    docqa: list[SpanRun]  # DocQA-lite without the ELMo-style features
    elmo: list[SpanRun]  # ... and with them
    extractor: list[SpanRun]


def readers(cfg: Config, outputs: Outputs) -> Readers:
    """The readers' runs, asked of the chapter's job outputs as :func:`~.work.jobs` declares them."""
    def each(step: str, **arguments) -> list:
        return [outputs.of(step, **arguments, seed=seed) for seed in cfg.seeds]

    return Readers(outputs.of("lm_job"), each("ranker_job"), each("asreader_job"), each("docqa_job", elmo=False),
                   each("docqa_job", elmo=True), each("extractor_job"))


@dataclass(frozen=True, kw_only=True)
class Table4(Section):
    """Our Table 4 and the paper's (the figure's data), and every row's per-query scores."""

    results: dict[str, MethodResult]  # our rows, by their Table 4 name
    ours: pd.DataFrame  # EM/F1 intervals per row
    paper: pd.DataFrame


def table4_rows(cfg: Config, eval_q: Sequence[ClozeQuery], r: Readers) -> tuple[dict[str, MethodResult], MethodResult]:
    """Every row of our Table 4 (the LM and the span readers on samples), and DocQA-lite w/ ELMo
    decoded among the candidates."""
    other = "unique" if cfg.random_mode == "mention" else "mention"
    rows = {
        "Random Guess": random_guess(eval_q, cfg.random_mode),
        "Random (the other draw)": random_guess(eval_q, other),
        "First entity": first_entity(eval_q),
        "Most frequent entity": most_frequent_entity(eval_q),
        "Candidate oracle": candidate_oracle(eval_q),
        "LM": r.lm,
        "ASReader": pooled("ASReader", r.asreader)[0],
        "Encoder ranker (not in paper)": pooled("encoder ranker", r.ranker)[0],
        "DocQA w/o ELMo": pooled_spans("DocQA-lite", r.docqa)[0],
    }
    rows["DocQA w/ ELMo"], elmo_candidates, _ = pooled_spans("DocQA-lite", r.elmo)
    rows["Span extractor, free (not in paper)"], rows["Span extractor, candidates (not in paper)"], _ = \
        pooled_spans("encoder span extractor", r.extractor)
    return rows, elmo_candidates


def whole(x: float) -> float | int:
    """A whole number as an int, so that ``2.0`` epochs read as ``2`` in the prose."""
    return int(x) if float(x).is_integer() else x


def setting_facts(cfg: Config, n_lm: int, n_span: int, train_q: Sequence[ClozeQuery]) -> dict:
    """What the note beside Table 4 says about our setting."""
    layers = cfg.docqa.elmo_layers
    return {
        "record_lm_n": n_lm,
        "record_lm_model": Markdown(md_text(cfg.lm.model)),
        "record_ranker_model": Markdown(md_text(cfg.model)),
        "record_seeds": len(cfg.seeds),
        "record_ranker_fields": Markdown(md_text(RANKER_FIELDS[cfg.ranker.fields])),
        "record_ranker_epochs": whole(cfg.ranker.epochs),
        "record_asr_epochs": cfg.asreader.epochs,
        "record_random_mode": Markdown(md_text(RANDOM_MODES[cfg.random_mode])),
        "record_span_n": n_span,
        "record_span_train_n": sum(1 for e in span_examples(train_q, "X") if e.gold),
        "record_docqa_maxlen": cfg.docqa.max_answer_len,
        "record_docqa_hidden": cfg.docqa.hidden,
        "record_docqa_emb": cfg.docqa.emb,
        "record_docqa_chars": cfg.docqa.char_filters,
        "record_docqa_epochs": cfg.docqa.epochs,
        "record_elmo_model": Markdown(md_text(cfg.docqa.elmo_model)),
        "record_elmo_layers": Markdown(md_text("all its layers" if layers is None
                                               else "its layers " + ", ".join(map(str, layers)))),
        "record_ext_epochs": whole(cfg.extractor.epochs),
        "record_ext_maxlen": cfg.extractor.max_length,
    }


def best_machine(results: dict[str, MethodResult]) -> tuple[str, Interval]:
    """Our best method by F1 (not the candidate oracle nor the other random draw) and its interval."""
    machine = {k: r.interval("f1") for k, r in results.items() if k not in NOT_MACHINE}
    name = max(machine, key=lambda k: machine[k].estimate)
    return name, machine[name]


def summary_facts(cfg: Config, results: dict[str, MethodResult]) -> dict:
    """The numbers the paragraphs after Table 4 quote."""
    iv = {k: r.interval("f1") for k, r in results.items()}
    best_name, best = best_machine(results)
    human = papers.value(PAPER, "Table 4", "Human", "F1 (dev)")
    gap = human - best.high
    mention, unique = (("Random Guess", "Random (the other draw)") if cfg.random_mode == "mention"
                       else ("Random (the other draw)", "Random Guess"))
    most_frequent = iv["Most frequent entity"]
    return {
        "record_best_name": Markdown(md_text(best_name)),
        "record_best_f1": best.estimate,
        "record_best_hi": best.high,
        "record_random_f1": iv["Random Guess"].estimate,
        "record_random_paper": papers.value(PAPER, "Table 4", "Random Guess", "F1 (dev)"),
        "record_lm_f1": iv["LM"].estimate,
        "record_asr_f1": iv["ASReader"].estimate,
        "record_mf_f1": most_frequent.estimate,
        "record_other_random_f1": iv["Random (the other draw)"].estimate,
        "record_ci_width": most_frequent.high - most_frequent.low,
        "record_human_f1": human,
        "record_docqa_f1": iv["DocQA w/o ELMo"].estimate,
        "record_elmo_f1": iv["DocQA w/ ELMo"].estimate,
        "record_docqa_paper": papers.value(PAPER, "Table 4", "DocQA w/o ELMo", "F1 (dev)"),
        "record_elmo_paper": papers.value(PAPER, "Table 4", "DocQA w/ ELMo", "F1 (dev)"),
        "record_ext_free_f1": iv["Span extractor, free (not in paper)"].estimate,
        "record_ext_cand_f1": iv["Span extractor, candidates (not in paper)"].estimate,
        "record_gap_words": Markdown("far below" if gap > 20 else "below" if gap > 0 else "not below"),
        "record_mention_words": Markdown("more" if iv[mention].estimate > iv[unique].estimate else "no more"),
    }


def gap_claims(cfg: Config, rows: dict[str, MethodResult], r: Readers, n_lm: int,
               n_train: int) -> tuple[ClaimEvidence, ...]:
    """The gap to people, the LM and ASReader against random guess, and random guess itself."""
    best_name, best = best_machine(rows)
    human, random_paper = (papers.value(PAPER, "Table 4", row, "F1 (dev)") for row in ("Human", "Random Guess"))
    random = rows["Random Guess"]
    lm, lm_random = aligned(rows["LM"], random)
    lm_diff = f1_difference(rows["LM"], random)
    # seeds resampled above queries, the same queries for both rows (paired)
    asr = [run.result for run in r.asreader]
    ids = [i for i in asr[0].ids if i in set(random.ids)]
    asr_diff = stats.hierarchical_paired(np.vstack([x.subset(ids).f1 for x in asr]), random.subset(ids).f1)
    ours = random.interval("f1")
    return (
        ClaimEvidence("human-gap", {"best": best, "human": human, "random": random_paper},
                      f"best here: {best_name}, F1 {best}; human {human:.2f} (paper)"),
        ClaimEvidence("lm-near-random", {"diff": lm_diff},
                      f"{cfg.lm.model}: F1 {lm.interval('f1')} vs random {lm_random.interval('f1')}; difference "
                      f"{lm_diff}; on the {n_lm} queries the LM scored"),
        ClaimEvidence("asreader-above-random", {"diff": asr_diff},
                      f"difference {asr_diff} points; ASReader trained on {n_train} queries here",
                      rests_on=("ASReader",)),
        ClaimEvidence("random-level", {"ours": ours, "random": random_paper},
                      f"ours {ours}, drawing {cfg.random_mode}s"))


def extractive_claim(rows: dict[str, MethodResult], elmo_candidates: MethodResult, n_span: int) -> ClaimEvidence:
    """Decoding among the candidates helps an extractive reader."""
    free, cand = rows["Span extractor, free (not in paper)"], rows["Span extractor, candidates (not in paper)"]
    gain = f1_difference(cand, free)
    elmo_gain = f1_difference(elmo_candidates, rows["DocQA w/ ELMo"])
    return ClaimEvidence("candidates-help-extractive", {"diff": gain},
                         f"span extractor: free {free.interval('f1')}, candidates {cand.interval('f1')}, difference "
                         f"{gain} points; DocQA-lite w/ ELMo decoded the same way: difference {elmo_gain} points; "
                         f"on the {n_span} queries the span readers scored")


def table4_section(cfg: Config, train_q: Sequence[ClozeQuery], eval_q: Sequence[ClozeQuery], r: Readers) -> Table4:
    """Every method on the evaluation queries beside the paper's Table 4 (with the size of its dev
    set as ``n``); each row's predictions are exported in the official format."""
    results, elmo_candidates = table4_rows(cfg, eval_q, r)
    export_predictions(results)
    paper = papers.table(PAPER, "Table 4")
    paper["n"] = int(papers.value(PAPER, "Table 1", "queries", "Dev."))
    ours = results_frame(results)
    n_lm, n_span = len(lm_queries(cfg, eval_q)), len(span_queries(cfg, eval_q))
    claims = (*gap_claims(cfg, results, r, n_lm, len(train_q)), extractive_claim(results, elmo_candidates, n_span))
    return Table4(tables={"record_table4": paper_vs_ours(paper, ours, digits=2)},
                  facts=setting_facts(cfg, n_lm, n_span, train_q) | summary_facts(cfg, results), claims=claims,
                  results=results, ours=ours, paper=paper)
