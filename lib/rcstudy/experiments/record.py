"""The ReCoRD chapter's pipeline: corpus statistics, construction checks and the cloze baselines.

Every method is a *cloze* reader: it picks one of the passage's candidate entities (distinct
entity strings) for ``@placeholder``, and is scored with the official EM/F1 against all gold
answers. Methods: random guess (exact expectation, no sampling noise), first / most frequent
entity, the paper's language-model baseline (:mod:`rcstudy.baselines.cloze_lm`), an
attention-sum reader trained from scratch (:mod:`rcstudy.baselines.asreader`), and a fine-tuned
encoder that ranks the query with each candidate filled in.

The paper's extractive readers choose any passage span instead: DocQA-lite without and with
frozen contextual ("ELMo") features, trained from scratch, and a fine-tuned encoder span
extractor (not in the paper) decoded both freely and restricted to the candidate mentions
(:mod:`rcstudy.baselines.span_readers`).

:func:`run` computes everything the chapter shows from a :class:`Config`; what each method reads
is in :mod:`rcstudy.prompts.record`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from .. import exports, learning, papers, sampling, stats
from ..baselines import span_readers as sr
from ..baselines.asreader import ASReaderConfig, asreader
from ..baselines.cloze_lm import lm_candidate_scores
from ..cache import cached
from ..config import ChapterConfig, param, section
from ..data import hub
from ..data.record import BULLET, HIGHLIGHT, PLACEHOLDER, RecordData, load_record
from ..data.records import ClozeQuery
from ..jobs import Job, Tokens, causal_option_tokens, loaded_once, mc_tokens, option_tokens
from ..metrics.record import (Scores, candidate_scores, evaluate, exact_match_score, f1_score,
                              normalize_answer)
from ..models import mc
from ..models.registry import ModelName
from ..prompts.record import PLACEHOLDER_WORD, cloze_items, lm_prefix_and_continuations, span_examples
from ..report import ChapterResults, ClaimLog, md_text, paper_vs_ours
from ..runtime import Runtime
from ..stats import Interval, bootstrap_ci

# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Sizes:
    """How many queries each method trains on and is scored on (seeded samples)."""

    train: int | None = param(None, "cap on training queries (seeded sample; None: all)")
    lm_eval: int | None = param(None, "evaluation queries the LM scores (seeded sample; None: all)")
    span_eval: int | None = param(80, "evaluation queries the span readers score (seeded sample; None: all)")
    seed: int = param(0, "seed of these samples", ge=0)


@dataclass(frozen=True)
class LMBaseline:
    """The paper's language-model baseline."""

    model: ModelName = param("smollm2-135m", "causal LM that scores the filled-in sequences (full: a Hub name)")
    scoring: Literal["full", "mean"] = param("full", '"full": the paper\'s sequence log-probability; "mean": per token')
    batch_size: int = param(16, "continuations scored per forward pass")


@dataclass(frozen=True)
class RankerConfig:
    """The fine-tuned encoder ranker (not in the paper): a multiple-choice encoder over the filled-in queries."""

    fields: Literal["QA", "CQA"] = param("QA", '"QA": the filled-in query alone; "CQA": passage + filled-in query')
    max_length: int = param(64, "tokens per filled-in query")
    epochs: float = param(2, "training epochs")
    lr: float = param(4e-4, "peak learning rate")
    batch_size: int = param(8, "queries per optimiser step (before accumulation)")
    grad_accum: int = param(1, "batches accumulated per optimiser step")
    train_options: int | None = param(4, "candidates per training query (gold + random others; None: all)")

    def mc_config(self, model: str, seed: int) -> mc.MCConfig:
        """The multiple-choice engine's settings for ``model`` and one seed."""
        return mc.MCConfig(model=model, fields=self.fields, max_length=self.max_length, epochs=self.epochs,
                           lr=self.lr, batch_size=self.batch_size, grad_accum=self.grad_accum, seed=seed)


@dataclass(frozen=True)
class DocQASettings:
    """DocQA-lite, trained from scratch, without and with ELMo-style frozen features."""

    emb: int = param(50, "word embedding size")
    char_filters: int = param(32, "character-CNN filters")
    hidden: int = param(32, "GRU size (the original: 100)")
    epochs: int = param(2, "training epochs")
    max_answer_len: int = param(15, "longest answer span, in tokens")
    vocab_size: int = param(20000, "vocabulary: the most frequent training words")
    elmo_model: ModelName = param("minilm-l6", 'frozen encoder whose layers "DocQA w/ ELMo" mixes (full: a Hub name)')
    elmo_layers: tuple[int, ...] | None = param((2, 4, 6), "its hidden layers in the scalar mix (None: all)", ge=0)

    def engine(self, elmo: bool) -> sr.DocQAConfig:
        """The span reader's settings, with the ELMo-style features or without."""
        return sr.DocQAConfig(emb=self.emb, char_filters=self.char_filters, hidden=self.hidden, epochs=self.epochs,
                              vocab_size=self.vocab_size, max_answer_len=self.max_answer_len,
                              features=self.elmo_model if elmo else None,
                              feature_layers=self.elmo_layers if elmo else None)


@dataclass(frozen=True)
class ExtractorSettings:
    """The fine-tuned encoder span extractor (not in the paper), over sliding windows."""

    max_length: int = param(192, "window length in tokens")
    stride: int = param(64, "overlap of consecutive windows")
    epochs: float = param(1, "training epochs")
    lr: float = param(1e-4, "peak learning rate")
    batch_size: int = param(8, "windows per optimiser step")

    def engine(self, model: str) -> sr.ExtractorConfig:
        """The span extractor's settings for ``model``."""
        return sr.ExtractorConfig(model=model, max_length=self.max_length, stride=self.stride, epochs=self.epochs,
                                  lr=self.lr, batch_size=self.batch_size)


@dataclass(frozen=True)
class Config(ChapterConfig):
    """The ReCoRD chapter's parameters; the defaults are the quick profile (the book's)."""

    chapter = "record"
    datasets = ("record",)
    data_source: str = param(hub.FOLDER, "where ReCoRD comes from: folder (the files in $RCSTUDY_DATA/record), hub "
                                         "(SuperGLUE's copy on the Hub) or a directory in that copy's layout")
    model: ModelName = param("minilm-l6", "encoder that the ranker and the span extractor fine-tune (full: a Hub name)")
    seeds: tuple[int, ...] = param((0,), "training seeds of every trained method", ge=0)
    random_mode: Literal["mention", "unique"] = param(
        "mention", 'random guess draws a "mention" or a distinct "unique" candidate')
    sizes: Sizes = section(Sizes, "how many queries each method trains on and is scored on")
    lm: LMBaseline = section(LMBaseline, "the paper's language-model baseline")
    ranker: RankerConfig = section(RankerConfig, "the fine-tuned encoder ranker (not in the paper)")
    asreader: ASReaderConfig = section(ASReaderConfig, "the attention-sum reader, trained from scratch")
    docqa: DocQASettings = section(DocQASettings, "DocQA-lite without and with ELMo-style features")
    extractor: ExtractorSettings = section(ExtractorSettings, "the fine-tuned span extractor (not in the paper)")

    def __post_init__(self):
        hub.check_source("record", self.data_source)

    def data_sources(self) -> dict[str, str]:
        return {"record": self.data_source} if self.data_source != hub.FOLDER else {}


# --------------------------------------------------------------------------- statistics (Table 1)

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


# --------------------------------------------------------------------------- scoring helpers

@dataclass(frozen=True)
class MethodResult:
    """Per-query EM and F1 (0–1) of one method on a list of queries, plus its predictions."""

    method: str
    ids: tuple[str, ...]
    em: np.ndarray
    f1: np.ndarray
    predictions: dict[str, str] | None = None  # None for expectations (no single answer)

    def interval(self, metric: str = "f1", seed: int = 0) -> Interval:
        """95% bootstrap interval of the mean, in percent."""
        return bootstrap_ci(getattr(self, metric), scale=100, seed=seed)

    def subset(self, ids: Sequence[str]) -> "MethodResult":
        pos = {i: k for k, i in enumerate(self.ids)}
        idx = [pos[i] for i in ids]
        preds = None if self.predictions is None else {i: self.predictions[i] for i in ids}
        return MethodResult(self.method, tuple(ids), self.em[idx], self.f1[idx], preds)


def from_predictions(method: str, queries: Sequence[ClozeQuery], predictions: dict[str, str]) -> MethodResult:
    s: Scores = evaluate(queries, predictions)
    return MethodResult(method, s.ids, s.em, s.f1, dict(predictions))


def from_candidate_logits(method: str, queries: Sequence[ClozeQuery], logits: Sequence[np.ndarray]) -> MethodResult:
    """Pick each query's best-scoring candidate (ties: the first in passage order)."""
    preds = {q.id: q.candidates[int(np.argmax(np.asarray(l)[:len(q.candidates)]))] for q, l in zip(queries, logits)}
    return from_predictions(method, queries, preds)


def mean_over_seeds(method: str, per_seed: Sequence[MethodResult]) -> MethodResult:
    """Per-query EM/F1 averaged over seeds; the predictions are the first seed's."""
    return MethodResult(method, per_seed[0].ids, np.mean([r.em for r in per_seed], 0),
                        np.mean([r.f1 for r in per_seed], 0), per_seed[0].predictions)


def aligned(a: MethodResult, b: MethodResult) -> tuple[MethodResult, MethodResult]:
    """Both results on the queries both were run on, in ``a``'s order (for paired comparisons)."""
    in_b = set(b.ids)
    common = [i for i in a.ids if i in in_b]
    return a.subset(common), b.subset(common)


def f1_difference(a: MethodResult, b: MethodResult) -> Interval:
    """Paired bootstrap interval of F1(a) − F1(b), in points, over the queries both were run on."""
    x, y = aligned(a, b)
    return stats.paired_difference(x.f1, y.f1)


def export_predictions(results: dict[str, MethodResult]) -> list:
    """Write each row's ``{query id: answer}`` (the official script's prediction format) to
    ``record/preds_<row>.json`` among the exports; rows without single answers are skipped."""
    return [exports.write_json(f"record/preds_{exports.safe_name(row.lower()).strip('_')}.json", r.predictions)
            for row, r in results.items() if r.predictions is not None]


# --------------------------------------------------------------------------- rule baselines

def random_guess(queries: Sequence[ClozeQuery], mode: str = "mention") -> MethodResult:
    """Expected EM/F1 of a uniform random pick, computed exactly (no seed noise).

    ``mode="mention"`` draws one entity *mention* (so often-mentioned entities are likelier);
    ``"unique"`` draws one distinct candidate string.
    """
    em, f1 = [], []
    for q in queries:
        cem, cf1 = candidate_scores(q)
        if mode == "mention":
            index = {c: k for k, c in enumerate(q.candidates)}
            w = np.bincount([index[e.text] for e in q.entities], minlength=len(index)).astype(float)
        elif mode == "unique":
            w = np.ones(len(cem))
        else:
            raise ValueError(f"random mode must be 'mention' or 'unique', got {mode!r}")
        w /= w.sum()
        em.append(float(w @ cem))
        f1.append(float(w @ cf1))
    return MethodResult(f"random ({mode})", tuple(q.id for q in queries), np.array(em), np.array(f1))


def first_entity(queries: Sequence[ClozeQuery]) -> MethodResult:
    return from_predictions("first entity", queries, {q.id: q.candidates[0] for q in queries})


def most_frequent_entity(queries: Sequence[ClozeQuery]) -> MethodResult:
    """The candidate with most mentions (ties: first in the passage)."""
    preds = {}
    for q in queries:
        counts = Counter(e.text for e in q.entities)
        preds[q.id] = max(q.candidates, key=lambda c: counts[c])  # max keeps the first of equals
    return from_predictions("most frequent entity", queries, preds)


def candidate_oracle(queries: Sequence[ClozeQuery]) -> MethodResult:
    """The best any candidate ranker could do: the best candidate of every query."""
    em, f1 = zip(*[(s[0].max(), s[1].max()) for s in map(candidate_scores, queries)]) if queries else ((), ())
    return MethodResult("candidate oracle", tuple(q.id for q in queries), np.array(em), np.array(f1))


# --------------------------------------------------------------------------- language-model baseline

def lm_result(method: str, queries: Sequence[ClozeQuery], scores: list[dict], scoring: str = "full") -> MethodResult:
    """``full``: the paper's sequence probability; ``mean``: per-token average (length-normalised)."""
    if scoring not in ("full", "mean"):
        raise ValueError(f"LM scoring must be 'full' or 'mean', got {scoring!r}")
    logits = [s["loglik"] / (s["tokens"] if scoring == "mean" else 1) for s in scores]
    return from_candidate_logits(method, queries, logits)


def lm_baseline(cfg: LMBaseline, queries: Sequence[ClozeQuery], rt: Runtime) -> MethodResult:
    """The language-model baseline on ``queries`` (their scores are cached)."""
    scores = lm_candidate_scores(cfg.model, queries, rt, batch_size=cfg.batch_size)
    return lm_result("LM", queries, scores, cfg.scoring)


# --------------------------------------------------------------------------- trained cloze readers

def encoder_ranker(cfg: RankerConfig, model: str, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
                   seeds: Sequence[int], rt: Runtime) -> tuple[MethodResult, list[MethodResult], list[np.ndarray]]:
    """Fine-tune ``model`` to rank the filled-in queries; one run per seed (cached by the engine).

    Returns the result with per-query EM/F1 averaged over seeds (its predictions are the first
    seed's), the per-seed results and the per-seed training losses.
    """
    eval_items = cloze_items(queries, fill=True)
    per_seed, losses = [], []
    for seed in seeds:
        train_items = [it for it in cloze_items(train, fill=True, max_options=cfg.train_options, seed=seed)
                       if it.label is not None]
        out = mc.finetune_and_predict(cfg.mc_config(model, seed), train_items, {"eval": eval_items}, rt)
        per_seed.append(from_candidate_logits(f"encoder ranker (seed {seed})", queries, out["eval"]))
        losses.append(out["losses"])
    return mean_over_seeds("encoder ranker", per_seed), per_seed, losses


def asreader_result(cfg: ASReaderConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
                    seeds: Sequence[int]) -> tuple[MethodResult, list[MethodResult], list[list[float]]]:
    """ASReader trained per seed: the seed-averaged result, the per-seed results and losses."""
    runs = asreader(cfg, train, queries, seeds)
    per_seed = [from_candidate_logits(f"ASReader (seed {seed})", queries, list(logits))
                for seed, (logits, _) in zip(seeds, runs)]
    return mean_over_seeds("ASReader", per_seed), per_seed, [loss for _, loss in runs]


# --------------------------------------------------------------------------- extractive span readers

def _span_reader(method: str, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery], seeds: Sequence[int],
                 placeholder: str, run) -> tuple[MethodResult, MethodResult, list[list[float]]]:
    """Run a span reader per seed: free-span and candidate-restricted results (averaged over seeds), losses.

    ``run(train_examples, eval_examples, seed)`` returns
    :class:`~rcstudy.baselines.span_readers.SpanPredictions`. It trains only on queries with a
    gold span in the passage.
    """
    train_ex = [e for e in span_examples(train, placeholder) if e.gold]
    eval_ex = span_examples(queries, placeholder)
    free, cand, losses = [], [], []
    for seed in seeds:
        out = run(train_ex, eval_ex, seed)
        free.append(from_predictions(f"{method} (seed {seed})", queries, out.free))
        cand.append(from_predictions(f"{method}, candidates (seed {seed})", queries,
                                     {i: out.free[i] if c is None else c for i, c in out.candidate.items()}))
        losses.append(out.losses)
    return mean_over_seeds(method, free), mean_over_seeds(f"{method}, candidates", cand), losses


def docqa_lite(cfg: sr.DocQAConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
               seeds: Sequence[int], rt: Runtime) -> tuple[MethodResult, MethodResult, list[list[float]]]:
    """DocQA-lite (with ELMo-style features when ``cfg.features`` names an encoder), trained from scratch."""
    return _span_reader("DocQA-lite", train, queries, seeds, PLACEHOLDER_WORD,
                        lambda tr, ev, seed: sr.docqa(cfg, tr, ev, seed, rt))


def span_extractor(cfg: sr.ExtractorConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
                   seeds: Sequence[int], rt: Runtime) -> tuple[MethodResult, MethodResult, list[list[float]]]:
    """The fine-tuned encoder span extractor (not in the paper): free and candidate-restricted decoding."""
    return _span_reader("encoder span extractor", train, queries, seeds, cfg.question_placeholder,
                        lambda tr, ev, seed: sr.encoder_extractor(cfg, tr, ev, seed, rt))


def results_frame(rows: dict[str, MethodResult], columns: tuple[str, str] = ("EM (dev)", "F1 (dev)")) -> pd.DataFrame:
    """Our Table 4: per row, EM and F1 as 95% bootstrap intervals (percent) and the number of queries."""
    return pd.DataFrame(
        {r: {columns[0]: res.interval("em"), columns[1]: res.interval("f1"), "n": len(res.ids)}
         for r, res in rows.items()}).T


# --------------------------------------------------------------------------- the chapter

PAPER = "record"
PCT = "% of queries"
GOLD_AMONG = "a gold answer is among the candidate entities"
NO_TRIGRAM = "no 3-gram shared by query and passage"
#: Rows of our Table 4 that are no machine reader of the paper's kind (left out of "the best method").
NOT_MACHINE = ("Candidate oracle", "Random (the other draw)")
RANKER_FIELDS = {"QA": "the filled-in query alone, without the passage (a CPU-budget choice; "
                       "the full profile reads the passage)",
                 "CQA": "the passage and the filled-in query"}
RANDOM_MODES = {"mention": "entity mentions", "unique": "distinct candidate strings"}
METRIC_CASES = [("the Beatles", ["Beatles"]), ("U.S.", ["US"]), ("Forlan", ["Diego Forlan", "Forlan"]),
                ("Diego Forlan", ["Forlan"]), ("Beatles’", ["Beatles"]), ("New York City", ["New York"])]


@dataclass
class Methods:
    """Every method's result on the evaluation queries (keyed by its Table 4 row), with what the
    claims and the figures need besides."""

    results: dict[str, MethodResult]
    lm_queries: list[ClozeQuery]
    span_queries: list[ClozeQuery]
    elmo_candidates: MethodResult  # DocQA-lite w/ ELMo decoded among the candidates
    losses: dict[str, list]  # per trained method, one training curve per seed
    per_seed: dict[str, list[MethodResult]] = field(default_factory=dict)  # the trained rows' runs, seed by seed


@dataclass
class Results(ChapterResults):
    """The chapter's tables, facts and claims, and the data of its figures."""

    mode: str
    example: str  # one evaluation query as every method sees it (markdown)
    funnel: pd.Series  # the paper's Figure 2
    lengths: pd.DataFrame  # per-query distributions, train and evaluation
    table4: pd.DataFrame  # ours: EM/F1 intervals per row
    paper_table4: pd.DataFrame
    curves: dict[str, dict[str, list]]  # panel → line prefix → per-seed losses
    seeds: tuple[int, ...]


def whole(x: float) -> float | int:
    """A whole number as an int, so that ``2.0`` epochs read as ``2`` in the prose."""
    return int(x) if float(x).is_integer() else x


def whole_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts shown without decimals (object columns, so pandas does not turn them back into floats)."""
    return pd.DataFrame({c: pd.Series([int(v) if isinstance(v, float) and v.is_integer() else v for v in frame[c]],
                                      index=frame.index, dtype=object) for c in frame.columns})


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


def statistics(data: RecordData) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Our Table 1 (train, evaluation, overall) and the construction checks over every query (cached)."""
    ours = pd.DataFrame(cached("record_table1", {}, lambda: table1(data), data_files=data.paths))
    checks = pd.Series(cached("record_checks", {}, lambda: construction_checks([*data.train, *data.eval]),
                              data_files=data.paths), name=PCT).to_frame()
    return ours, checks


def statistics_facts(ours: pd.DataFrame, checks: pd.DataFrame) -> dict:
    overall = ours["Overall"]
    return {"record_tok_passage": overall["tokens / passage"],
            "record_ents_passage": overall["entities / passage"],
            "record_cands_query": overall["distinct candidates / query"],
            "record_golds_query": overall["gold answers / query"],
            "record_pct_trigram": checks.loc[NO_TRIGRAM, PCT],
            "record_pct_gold_cand": checks.loc[GOLD_AMONG, PCT]}


def metric_cases() -> pd.DataFrame:
    """A few predictions scored with the official normalisation (max over gold answers)."""
    return pd.DataFrame([{"prediction": p, "gold answers": " | ".join(g), "normalised prediction": normalize_answer(p),
                          "EM": max(exact_match_score(p, x) for x in g),
                          "F1": round(max(f1_score(p, x) for x in g), 3)}
                         for p, g in METRIC_CASES]).set_index("prediction")


def training_queries(cfg: Config, data: RecordData) -> list[ClozeQuery]:
    """The training queries every trained method learns from (a seeded sample, or all)."""
    return sampling.draw(data.train, cfg.sizes.train, cfg.sizes.seed)


def lm_queries(cfg: Config, eval_q: Sequence[ClozeQuery]) -> list[ClozeQuery]:
    """The evaluation queries the LM scores."""
    return sampling.draw(eval_q, cfg.sizes.lm_eval, cfg.sizes.seed)


def span_queries(cfg: Config, eval_q: Sequence[ClozeQuery]) -> list[ClozeQuery]:
    """The evaluation queries the span readers score."""
    return sampling.draw(eval_q, cfg.sizes.span_eval, cfg.sizes.seed)


def methods(cfg: Config, train_q: Sequence[ClozeQuery], eval_q: Sequence[ClozeQuery], rt: Runtime) -> Methods:
    """Run every method of our Table 4 on the evaluation queries (the LM and the span readers on samples)."""
    other = "unique" if cfg.random_mode == "mention" else "mention"
    results = {
        "Random Guess": random_guess(eval_q, cfg.random_mode),
        "Random (the other draw)": random_guess(eval_q, other),
        "First entity": first_entity(eval_q),
        "Most frequent entity": most_frequent_entity(eval_q),
        "Candidate oracle": candidate_oracle(eval_q),
    }
    lm_q = lm_queries(cfg, eval_q)
    results["LM"] = lm_baseline(cfg.lm, lm_q, rt)
    results["ASReader"], asr_seeds, asr_losses = asreader_result(cfg.asreader, train_q, eval_q, cfg.seeds)
    results["Encoder ranker (not in paper)"], rank_seeds, rank_losses = encoder_ranker(
        cfg.ranker, cfg.model, train_q, eval_q, cfg.seeds, rt)
    span_q = span_queries(cfg, eval_q)
    results["DocQA w/o ELMo"], _, docqa_losses = docqa_lite(cfg.docqa.engine(elmo=False), train_q, span_q,
                                                            cfg.seeds, rt)
    results["DocQA w/ ELMo"], elmo_cand, elmo_losses = docqa_lite(cfg.docqa.engine(elmo=True), train_q, span_q,
                                                                  cfg.seeds, rt)
    ext_free, ext_cand, ext_losses = span_extractor(cfg.extractor.engine(cfg.model), train_q, span_q, cfg.seeds, rt)
    results["Span extractor, free (not in paper)"] = ext_free
    results["Span extractor, candidates (not in paper)"] = ext_cand
    losses = {"ASReader": asr_losses, "ranker": rank_losses, "DocQA w/o ELMo": docqa_losses,
              "DocQA w/ ELMo": elmo_losses, "extractor": ext_losses}
    return Methods(results, lm_q, span_q, elmo_cand, losses,
                   {"ASReader": asr_seeds, "Encoder ranker (not in paper)": rank_seeds})


def table4(results: dict[str, MethodResult]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's Table 4 (with the size of its dev set as ``n``) and ours."""
    paper = papers.table(PAPER, "Table 4")
    paper["n"] = int(papers.value(PAPER, "Table 1", "queries", "Dev."))
    return paper, results_frame(results)


def setting_facts(cfg: Config, m: Methods, train_q: Sequence[ClozeQuery]) -> dict:
    """What the note beside Table 4 says about our setting."""
    layers = cfg.docqa.elmo_layers
    return {
        "record_lm_n": len(m.lm_queries),
        "record_lm_model": Markdown(md_text(cfg.lm.model)),
        "record_ranker_model": Markdown(md_text(cfg.model)),
        "record_seeds": len(cfg.seeds),
        "record_ranker_fields": Markdown(md_text(RANKER_FIELDS[cfg.ranker.fields])),
        "record_ranker_epochs": whole(cfg.ranker.epochs),
        "record_asr_epochs": cfg.asreader.epochs,
        "record_random_mode": Markdown(md_text(RANDOM_MODES[cfg.random_mode])),
        "record_span_n": len(m.span_queries),
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


def loss_checks(cfg: Config, m: Methods, train: Sequence[ClozeQuery]) -> dict[str, learning.LossCheck]:
    """Did the candidate classifiers learn? Each is judged on the evaluation queries: its exact
    match, seed by seed, against the exact match of a random guess among the same query's
    candidates (:func:`random_guess`, one chance per query), seeds then queries resampled; a row
    learned only when the whole interval of the difference is above 0. The training loss is shown
    beside it against ln k (ASReader chooses among each training query's candidates, the mean ln
    of their number, :func:`rcstudy.learning.guessing_k`; the encoder ranker among
    ``ranker.train_options`` of them) and decides nothing: ASReader can fit a few hundred training
    queries and still guess on dev. The span readers choose among spans, not candidates."""
    chance = m.results["Random Guess"]
    counts = [len(it.options) for it in cloze_items(train, fill=False) if it.label is not None]
    out = {}
    for key, row, name, k in (("ASReader", "ASReader", "ASReader", learning.guessing_k(counts) if counts else None),
                              ("ranker", "Encoder ranker (not in paper)", f"The encoder ranker ({cfg.model})",
                               cfg.ranker.train_options or (learning.guessing_k(counts) if counts else None))):
        runs = m.per_seed.get(row)
        if not runs or k is None:
            continue
        ids = [i for i in runs[0].ids if i in set(chance.ids)]
        em = np.vstack([r.subset(ids).em for r in runs])
        out[key] = learning.check(name, m.losses[key], k, correct=em, chance=chance.subset(ids).em,
                                  heldout="the evaluation queries (exact match)")
    return out


def training_curves(cfg: Config, losses: dict[str, list]) -> dict[str, dict[str, list]]:
    """The training-loss panels: title → line-label prefix → one curve per seed."""
    return {"ASReader (from scratch)": {"": losses["ASReader"]},
            f"Encoder ranker ({cfg.model})": {"": losses["ranker"]},
            "DocQA-lite (from scratch)": {"w/o ELMo, ": losses["DocQA w/o ELMo"], "w/ ELMo, ": losses["DocQA w/ ELMo"]},
            f"Span extractor ({cfg.model})": {"": losses["extractor"]}}


def judge_claims(cfg: Config, m: Methods, ours_t1: pd.DataFrame, checks: pd.DataFrame,
                 train_q: Sequence[ClozeQuery], learned: dict[str, learning.LossCheck]) -> ClaimLog:
    """The evidence for each of the paper's claims (``rcstudy.papers.record.CLAIMS``); ``learned``:
    the loss checks of the trained rows (:func:`loss_checks`)."""
    log = ClaimLog(PAPER)
    r = m.results
    best_name, best = best_machine(r)
    human = papers.value(PAPER, "Table 4", "Human", "F1 (dev)")
    log.judge("human-gap", {"best": best, "human": human,
                            "random": papers.value(PAPER, "Table 4", "Random Guess", "F1 (dev)")},
              f"best here: {best_name}, F1 {best}; human {human:.2f} (paper)")

    lm, random = aligned(r["LM"], r["Random Guess"])
    diff = f1_difference(r["LM"], r["Random Guess"])
    log.judge("lm-near-random", {"diff": diff},
              f"{cfg.lm.model}: F1 {lm.interval('f1')} vs random {random.interval('f1')}; difference {diff}; "
              f"on the {len(m.lm_queries)} queries the LM scored")

    # seeds resampled above queries, the same queries for both rows (paired)
    asr = m.per_seed.get("ASReader") or [r["ASReader"]]
    ids = [i for i in asr[0].ids if i in set(r["Random Guess"].ids)]
    diff = stats.hierarchical_paired(np.vstack([x.subset(ids).f1 for x in asr]), r["Random Guess"].subset(ids).f1)
    log.judge("asreader-above-random", {"diff": diff},
              f"difference {diff} points; ASReader trained on {len(train_q)} queries here",
              rests_on=[c for n, c in learned.items() if n == "ASReader"])

    ours = r["Random Guess"].interval("f1")
    log.judge("random-level", {"ours": ours, "random": papers.value(PAPER, "Table 4", "Random Guess", "F1 (dev)")},
              f"ours {ours}, drawing {cfg.random_mode}s")

    c = checks[PCT]
    log.judge("answers-are-entities", {"gold_among_candidates": c[GOLD_AMONG]}, f"{c[GOLD_AMONG]:.1f}% of queries")
    met = {"≥10 tokens": c["query has at least 10 tokens"], "not a question": c["query is not a question"],
           "no shared 3-gram": c[NO_TRIGRAM]}
    log.judge("query-constraints", {"met": met}, ", ".join(f"{k}: {v:.1f}%" for k, v in met.items()))

    overall = ours_t1["Overall"]
    tokens, entities = overall["tokens / passage"], overall["entities / passage"]
    ratio = {"tokens": tokens / papers.value(PAPER, "Table 1", "tokens / passage", "Overall"),
             "entities": entities / papers.value(PAPER, "Table 1", "entities / passage", "Overall")}
    log.judge("passage-shape", {"ratio": ratio}, f"ours: {tokens:.1f} tokens, {entities:.1f} mentions")

    free, cand = r["Span extractor, free (not in paper)"], r["Span extractor, candidates (not in paper)"]
    gain = f1_difference(cand, free)
    elmo_gain = f1_difference(m.elmo_candidates, r["DocQA w/ ELMo"])
    log.judge("candidates-help-extractive", {"diff": gain},
              f"span extractor: free {free.interval('f1')}, candidates {cand.interval('f1')}, difference "
              f"{gain} points; DocQA-lite w/ ELMo decoded the same way: difference {elmo_gain} points; "
              f"on the {len(m.span_queries)} queries the span readers scored")
    return log


def run(cfg: Config, rt: Runtime) -> Results:
    """Everything the chapter shows, computed from ``cfg`` (the data come from ``cfg.data_source``)."""
    data = load_record(source=cfg.data_source)
    train_q = training_queries(cfg, data)
    sources, facts = data_overview(data, train_q)
    facts["record_data_source"] = Markdown(md_text(hub.describe("record", cfg.data_source)))
    ours_t1, checks = statistics(data)
    facts |= statistics_facts(ours_t1, checks)
    m = methods(cfg, train_q, data.eval, rt)
    export_predictions(m.results)
    paper_t4, ours_t4 = table4(m.results)
    facts |= setting_facts(cfg, m, train_q) | summary_facts(cfg, m.results)
    learned = loss_checks(cfg, m, train_q)
    facts["record_loss_warnings"] = Markdown(md_text(learning.warnings_text(list(learned.values()))))
    tables = {
        "record_sources": sources,
        "record_table1": paper_vs_ours(whole_numbers(papers.table(PAPER, "Table 1")), whole_numbers(ours_t1)),
        "record_checks": checks.round(1),
        "record_metric_cases": metric_cases(),
        "record_table4": paper_vs_ours(paper_t4, ours_t4, digits=2),
        "record_trained": learning.table(list(learned.values())),
    }
    lengths = pd.concat([pd.DataFrame(per_query_lengths(qs)).assign(set=name)
                         for name, qs in (("train", train_q), ("evaluation", data.eval)) if qs])
    return Results(tables, facts, judge_claims(cfg, m, ours_t1, checks, train_q, learned), mode=data.mode,
                   example=example_markdown(data.eval[0]), funnel=papers.table(PAPER, "Figure 2")["count"],
                   lengths=lengths, table4=ours_t4, paper_table4=paper_t4,
                   curves=training_curves(cfg, m.losses), seeds=cfg.seeds)


# --------------------------------------------------------------------------- jobs (rcstudy.jobs)

def job_queries(cfg: Config) -> tuple[list[ClozeQuery], list[ClozeQuery]]:
    """The training and evaluation queries, the data read once per process and data source
    (:func:`rcstudy.jobs.loaded_once`)."""
    data = loaded_once(load_record, None, cfg.data_source)
    return training_queries(cfg, data), data.eval


def lm_job(cfg: Config, rt: Runtime) -> None:
    lm_baseline(cfg.lm, lm_queries(cfg, job_queries(cfg)[1]), rt)


def ranker_job(cfg: Config, rt: Runtime, seed: int) -> None:
    encoder_ranker(cfg.ranker, cfg.model, *job_queries(cfg), [seed], rt)


def asreader_job(cfg: Config, rt: Runtime, seed: int) -> None:
    asreader_result(cfg.asreader, *job_queries(cfg), [seed])


def docqa_job(cfg: Config, rt: Runtime, elmo: bool, seed: int) -> None:
    train_q, eval_q = job_queries(cfg)
    docqa_lite(cfg.docqa.engine(elmo=elmo), train_q, span_queries(cfg, eval_q), [seed], rt)


def extractor_job(cfg: Config, rt: Runtime, seed: int) -> None:
    train_q, eval_q = job_queries(cfg)
    span_extractor(cfg.extractor.engine(cfg.model), train_q, span_queries(cfg, eval_q), [seed], rt)


def window_tokens(examples: Sequence[sr.SpanExample], max_length: int, stride: int) -> int:
    """Estimated tokens of the span extractor's question + passage windows (each ``max_length``
    long where a passage overflows one, the next starting ``stride`` tokens before its end)."""
    total = 0
    for e in examples:
        question, passage = option_tokens([e.question]), option_tokens([e.context]) - 3
        room = max(stride + 1, max_length - question)
        windows = 1 + -(-max(0, passage - room) // (room - stride))
        total += min(question + passage, max_length) if windows == 1 else windows * max_length
    return total


#: The context length :func:`rcstudy.models.lm.load_lm` gives the LM (or the model's own limit, if shorter).
LM_MAX_LENGTH = 2048


def lm_tokens(queries: Sequence[ClozeQuery], batch_size: int) -> Tokens:
    """The tokens the LM baseline runs over ``queries``
    (:func:`rcstudy.baselines.cloze_lm.lm_candidate_scores`): per query, the prefix its candidates
    share once per ``batch_size`` of them, whose key/value cache then serves each candidate's
    continuation (:func:`rcstudy.jobs.causal_option_tokens`)."""
    split = [lm_prefix_and_continuations(q) for q in queries]
    return causal_option_tokens([prefix for prefix, _ in split], [continuations for _, continuations in split],
                                LM_MAX_LENGTH, batch_size)


def jobs(cfg: Config) -> list[Job]:
    """Every trained reader and scoring pass of :func:`run`, as jobs that fill the cache entries it
    reads: the LM over its evaluation queries, and per seed the encoder ranker, the ASReader,
    DocQA-lite without and with the frozen ELMo-style features, and the span extractor. Readers
    trained from scratch are of unknown size; DocQA-lite with ELMo counts the frozen encoder's
    features, computed once per run over every training and scored passage and question."""
    from ..models.registry import split_revision

    train_q, eval_q = job_queries(cfg)
    lm_q, span_q = lm_queries(cfg, eval_q), span_queries(cfg, eval_q)
    chapter, r = Config.chapter, cfg.ranker
    out = [Job(chapter, "score", f"LM {split_revision(cfg.lm.model)[0]}", cfg.lm.model, "passage + filled-in query",
               items=len(lm_q), tokens=lm_tokens(lm_q, cfg.lm.batch_size), step="lm_job")]
    eval_items = cloze_items(eval_q, fill=True)
    train_ex = [e for e in span_examples(train_q, PLACEHOLDER_WORD) if e.gold]
    span_ex = span_examples(span_q, PLACEHOLDER_WORD)
    ext = cfg.extractor
    ext_train = [e for e in span_examples(train_q, ext.engine(cfg.model).question_placeholder) if e.gold]
    ext_eval = span_examples(span_q, ext.engine(cfg.model).question_placeholder)
    feature_texts = list(dict.fromkeys(t for e in [*train_ex, *span_ex] for t in (e.context, e.question)))
    for seed in cfg.seeds:
        train_items = [it for it in cloze_items(train_q, fill=True, max_options=r.train_options, seed=seed)
                       if it.label is not None]
        out += [
            Job(chapter, "train", f"encoder ranker seed {seed}", cfg.model, r.fields, seed, items=len(train_items),
                epochs=r.epochs, train_tokens=round(mc_tokens(train_items, r.fields, r.max_length) * r.epochs),
                score_tokens=mc_tokens(eval_items, r.fields, r.max_length), step="ranker_job",
                arguments={"seed": seed}),
            Job(chapter, "train", f"ASReader seed {seed}", "ASReader", "passage + query", seed, items=len(train_q),
                epochs=cfg.asreader.epochs, step="asreader_job", arguments={"seed": seed},
                note="trained from scratch"),
            Job(chapter, "train", f"DocQA-lite w/o ELMo seed {seed}", "DocQA-lite", "passage + query", seed,
                items=len(train_ex), epochs=cfg.docqa.epochs, step="docqa_job",
                arguments={"elmo": False, "seed": seed}, note="trained from scratch"),
            Job(chapter, "score", f"DocQA-lite w/ ELMo seed {seed}", cfg.docqa.elmo_model, "passage + query", seed,
                items=len(train_ex), epochs=cfg.docqa.epochs, score_tokens=option_tokens(feature_texts, 512),
                step="docqa_job", arguments={"elmo": True, "seed": seed},
                note="the frozen encoder's features; the reader on top is trained from scratch, not counted"),
            Job(chapter, "train", f"span extractor seed {seed}", cfg.model, "query + passage windows", seed,
                items=len(ext_train), epochs=ext.epochs,
                train_tokens=round(window_tokens(ext_train, ext.max_length, ext.stride) * ext.epochs),
                score_tokens=window_tokens(ext_eval, ext.max_length, ext.stride), step="extractor_job",
                arguments={"seed": seed}),
        ]
    return out
