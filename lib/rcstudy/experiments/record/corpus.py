"""The data we have, corpus statistics (Table 1), the construction checks (§3.2) and the metric:
the page's sections that need no model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ... import papers
from ...claims import ClaimEvidence
from ...baselines import span_readers as sr
from ...cache import cached
from ...data import hub
from ...data.record import BULLET, HIGHLIGHT, PLACEHOLDER, RecordData
from ...data.records import ClozeQuery
from ...metrics.record import exact_match_score, f1_score, normalize_answer
from ...report import md_text, paper_vs_ours
from .config import PAPER, Config
from ..section import Section

PCT = "% of queries"
GOLD_AMONG = "a gold answer is among the candidate entities"
NO_TRIGRAM = "no 3-gram shared by query and passage"
METRIC_CASES = [("the Beatles", ["Beatles"]), ("U.S.", ["US"]), ("Forlan", ["Diego Forlan", "Forlan"]),
                ("Diego Forlan", ["Forlan"]), ("Beatles’", ["Beatles"]), ("New York City", ["New York"])]


# --------------------------------------------------------------------------- counting

def words(text: str) -> list[str]:
    """PTB-like words (the paper does not name its tokenizer): words with inner - or ', punctuation."""
    return sr.WORD.findall(text)


def passage_words(q: ClozeQuery) -> list[str]:
    """Tokens of the passage as published: paragraphs and highlights, without the markers."""
    return words(q.meta.get("raw_passage", q.passage).replace(HIGHLIGHT, "\n"))


def query_words(q: ClozeQuery) -> list[str]:
    """Tokens of the query, ``@placeholder`` counted as one token."""
    return words(q.query.replace(PLACEHOLDER, "X"))


def corpus_stats(queries: Sequence[ClozeQuery]) -> dict[str, float]:
    """The rows of the paper's Table 1 for one set of queries (per unique passage where it says so)."""
    passages = {}
    for q in queries:
        passages.setdefault(q.passage, q)
    p_tok = [passage_words(q) for q in passages.values()]
    q_tok = [query_words(q) for q in queries]
    return {
        "queries": len(queries),
        "unique passages": len(passages),
        "passage vocab.": len({w for t in p_tok for w in t}),
        "query vocab.": len({w for t in q_tok for w in t}),
        "tokens / passage": float(np.mean([len(t) for t in p_tok])),
        "entities / passage": float(np.mean([len(q.entities) for q in passages.values()])),
        "tokens / query": float(np.mean([len(t) for t in q_tok])),
        "distinct candidates / query": float(np.mean([len(q.candidates) for q in queries])),
        "gold answers / query": float(np.mean([len(q.answers) for q in queries])),
    }


def table1(data: RecordData) -> dict[str, dict[str, float]]:
    """Table 1's statistics for the train and evaluation sets and both together."""
    sets = {"Train": data.train, "Dev.": data.eval, "Overall": data.train + data.eval}
    return {name: corpus_stats(qs) for name, qs in sets.items() if qs}


def per_query_lengths(queries: Sequence[ClozeQuery]) -> dict[str, np.ndarray]:
    """Per-query distributions for the histograms."""
    return {
        "passage tokens": np.array([len(passage_words(q)) for q in queries]),
        "query tokens": np.array([len(query_words(q)) for q in queries]),
        "entity mentions": np.array([len(q.entities) for q in queries]),
        "distinct candidates": np.array([len(q.candidates) for q in queries]),
    }


def _ngrams(tokens: Sequence[str], n: int = 3) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def construction_checks(queries: Sequence[ClozeQuery]) -> dict[str, float]:
    """Share (%) of queries meeting each constraint of the paper's §3.2, and the loader's checks."""
    def pct(flags) -> float:
        flags = list(flags)
        return 100 * float(np.mean(flags)) if flags else float("nan")

    def lead_ok(q: ClozeQuery) -> bool:
        end = q.meta.get("lead_end", len(q.passage))
        n_ents = len({e.text for e in q.entities if e.start < end})
        return len(words(q.passage[:end])) >= 100 and n_ents >= 4

    def no_trigram_overlap(q: ClozeQuery, fill: bool) -> bool:
        filled = q.query.replace(PLACEHOLDER, q.answers[0] if fill and q.answers else "X")
        return not (_ngrams([w.lower() for w in words(filled)])
                    & _ngrams([w.lower() for w in passage_words(q)]))

    cands = [{normalize_answer(c) for c in q.candidates} for q in queries]
    return {
        "query has at least 10 tokens": pct(len(query_words(q)) >= 10 for q in queries),
        "query is not a question": pct(not q.query.rstrip().endswith("?") for q in queries),
        "no 3-gram shared by query and passage": pct(no_trigram_overlap(q, False) for q in queries),
        "… nor with the gold answer filled in": pct(no_trigram_overlap(q, True) for q in queries),
        "passage lead has ≥100 tokens and ≥4 distinct entities": pct(lead_ok(q) for q in queries),
        "exactly one @placeholder in the query": pct(q.query.count(PLACEHOLDER) == 1 for q in queries),
        "a gold answer is among the candidate entities": pct(
            any(normalize_answer(a) in c for a in q.answers) for q, c in zip(queries, cands)),
        "every answer span holds its answer text": pct(
            all(q.passage[s:e] in q.answers for s, e in q.meta.get("answer_spans", ())) for q in queries),
    }


def whole_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts shown without decimals (object columns, so pandas does not turn them back into floats)."""
    return pd.DataFrame({c: pd.Series([int(v) if isinstance(v, float) and v.is_integer() else v for v in frame[c]],
                                      index=frame.index, dtype=object) for c in frame.columns})


# --------------------------------------------------------------------------- the data we have

@dataclass(frozen=True, kw_only=True)
class Overview(Section):
    """The files read, the facts about the data and the paper's sizes, and one query as shown."""

    mode: str
    example: str  # one evaluation query as every method sees it (markdown)


def example_markdown(q: ClozeQuery) -> str:
    """One query as every method sees it: the passage, the query, the candidates and the gold answers.
    Their text is data, shown as text (:func:`rcstudy.report.md_text`): only the highlight bullets the
    loader makes (``- `` at a line start) stay Markdown."""
    def line(text: str) -> str:
        return BULLET + md_text(text[len(BULLET):]) if text.startswith(BULLET) else md_text(text)

    return (f"**Passage** ({len(q.entities)} entity mentions, {len(q.candidates)} distinct):\n\n> "
            + "\n>\n> ".join(line(part) for part in q.passage.split("\n"))
            + f"\n\n**Query:** {md_text(q.query)}\n\n**Candidates:** {md_text(', '.join(q.candidates))}"
            + f"\n\n**Gold answers:** {md_text(', '.join(q.answers))}")


def data_overview(data: RecordData, train_q: Sequence[ClozeQuery]) -> tuple[pd.DataFrame, dict]:
    """The files read, and the facts the prose quotes about the data and the paper's sizes."""
    sources = pd.DataFrame([{"file": name, "layout": f.source, "used as": f.role, "queries read": n}
                            for f, (name, n) in zip(data.files, data.read.items())]).set_index("file")
    dups = pd.Series([f"found again in {a}, kept from {b}" for a, b in data.duplicates]).value_counts()
    facts = {
        "record_mode": Markdown(md_text(data.mode)),
        "record_n_train": len(train_q),
        "record_n_eval": len(data.eval),
        "record_n_test": len(data.test),
        "record_n_dups": len(data.duplicates),
        "record_dups_detail": Markdown(md_text("; ".join(f"{n} {what}" for what, n in dups.items()) or "none")),
        "record_n_overlap": data.train_dropped_for_overlap,
        "record_n_single_gold": sum(q.meta.get("answers_complete") is False for q in data.eval),
    }
    for key, col in (("record_paper_total", "Overall"), ("record_paper_train_n", "Train"),
                     ("record_paper_dev_n", "Dev."), ("record_paper_test_n", "Test")):
        facts[key] = papers.value(PAPER, "Table 1", "queries", col)
    facts["record_human_test_f1"] = papers.value(PAPER, "Table 4", "Human", "F1 (test)")
    facts["record_best_test_f1"] = papers.value(PAPER, "Table 4", "DocQA w/ ELMo", "F1 (test)")
    return sources, facts


def overview_section(cfg: Config, data: RecordData, train_q: Sequence[ClozeQuery]) -> Overview:
    """The data we have: the files found, how many queries of each kind, and one of them."""
    sources, facts = data_overview(data, train_q)
    facts["record_data_source"] = Markdown(md_text(hub.describe("record", cfg.data_source)))
    return Overview(tables={"record_sources": sources}, facts=facts, mode=data.mode,
                    example=example_markdown(data.eval[0]))


# --------------------------------------------------------------------------- Table 1, §3.2 and the metric

@dataclass(frozen=True, kw_only=True)
class Statistics(Section):
    """Table 1, the construction checks and the metric's cases, with the figures' data."""

    lengths: pd.DataFrame  # per-query distributions, train and evaluation
    funnel: pd.Series  # the paper's Figure 2


def statistics(data: RecordData) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Our Table 1 (train, evaluation, overall) and the construction checks over every query (cached)."""
    ours = pd.DataFrame(cached("record_table1", {}, lambda: table1(data), data_files=data.paths))
    checks = pd.Series(cached("record_checks", {}, lambda: construction_checks([*data.train, *data.eval]),
                              data_files=data.paths), name=PCT).to_frame()
    return ours, checks


def metric_cases() -> pd.DataFrame:
    """A few predictions scored with the official normalisation (max over gold answers)."""
    return pd.DataFrame([{"prediction": p, "gold answers": " | ".join(g), "normalised prediction": normalize_answer(p),
                          "EM": max(exact_match_score(p, x) for x in g),
                          "F1": round(max(f1_score(p, x) for x in g), 3)}
                         for p, g in METRIC_CASES]).set_index("prediction")


def corpus_claims(ours: pd.DataFrame, checks: pd.Series) -> tuple[ClaimEvidence, ...]:
    """Answers are passage entities, queries meet the paper's constraints, passages have its shape."""
    met = {"≥10 tokens": checks["query has at least 10 tokens"], "not a question": checks["query is not a question"],
           "no shared 3-gram": checks[NO_TRIGRAM]}
    overall = ours["Overall"]
    tokens, entities = overall["tokens / passage"], overall["entities / passage"]
    ratio = {"tokens": tokens / papers.value(PAPER, "Table 1", "tokens / passage", "Overall"),
             "entities": entities / papers.value(PAPER, "Table 1", "entities / passage", "Overall")}
    return (ClaimEvidence("answers-are-entities", {"gold_among_candidates": checks[GOLD_AMONG]},
                          f"{checks[GOLD_AMONG]:.1f}% of queries"),
            ClaimEvidence("query-constraints", {"met": met}, ", ".join(f"{k}: {v:.1f}%" for k, v in met.items())),
            ClaimEvidence("passage-shape", {"ratio": ratio}, f"ours: {tokens:.1f} tokens, {entities:.1f} mentions"))


def statistics_section(data: RecordData, train_q: Sequence[ClozeQuery]) -> Statistics:
    """Corpus statistics (Table 1) beside the paper's, the construction checks, and the metric at work."""
    ours, checks = statistics(data)
    overall = ours["Overall"]
    facts = {"record_tok_passage": overall["tokens / passage"],
             "record_ents_passage": overall["entities / passage"],
             "record_cands_query": overall["distinct candidates / query"],
             "record_golds_query": overall["gold answers / query"],
             "record_pct_trigram": checks.loc[NO_TRIGRAM, PCT],
             "record_pct_gold_cand": checks.loc[GOLD_AMONG, PCT]}
    tables = {"record_table1": paper_vs_ours(whole_numbers(papers.table(PAPER, "Table 1")), whole_numbers(ours)),
              "record_checks": checks.round(1),
              "record_metric_cases": metric_cases()}
    lengths = pd.concat([pd.DataFrame(per_query_lengths(qs)).assign(set=name)
                         for name, qs in (("train", train_q), ("evaluation", data.eval)) if qs])
    return Statistics(tables=tables, facts=facts, claims=corpus_claims(ours, checks[PCT]), lengths=lengths,
                      funnel=papers.table(PAPER, "Figure 2")["count"])
