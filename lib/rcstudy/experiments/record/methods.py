"""The methods of Table 4, each scored per query with the official EM/F1.

Every method is a *cloze* reader: it picks one of the passage's candidate entities (distinct
entity strings) for ``@placeholder``, and is scored against all gold answers. Methods: random
guess (exact expectation, no sampling noise), first / most frequent entity, the paper's
language-model baseline (:mod:`rcstudy.baselines.cloze_lm`), an attention-sum reader trained from
scratch (:mod:`rcstudy.baselines.asreader`), and a fine-tuned encoder that ranks the query with
each candidate filled in. The paper's extractive readers choose any passage span instead:
DocQA-lite without and with frozen contextual ("ELMo") features, trained from scratch, and a
fine-tuned encoder span extractor (not in the paper) decoded both freely and restricted to the
candidate mentions (:mod:`rcstudy.baselines.span_readers`). A trained reader runs one seed at a
time (:class:`SeedRun`, :class:`SpanRun`: one job each); its row averages them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ... import exports, stats
from ...baselines import span_readers as sr
from ...baselines.asreader import ASReaderConfig, asreader
from ...baselines.cloze_lm import lm_candidate_scores
from ...data.records import ClozeQuery
from ...metrics.record import Scores, candidate_scores, evaluate, gold_candidate_indices
from ...models import mc
from ...prompts.record import PLACEHOLDER_WORD, cloze_items, span_examples
from ...runtime import Runtime
from ...stats import Interval, bootstrap_ci
from .config import LMBaseline, RankerConfig


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


def results_frame(rows: dict[str, MethodResult], columns: tuple[str, str] = ("EM (dev)", "F1 (dev)")) -> pd.DataFrame:
    """Our Table 4: per row, EM and F1 as 95% bootstrap intervals (percent) and the number of queries."""
    return pd.DataFrame(
        {r: {columns[0]: res.interval("em"), columns[1]: res.interval("f1"), "n": len(res.ids)}
         for r, res in rows.items()}).T


# --------------------------------------------------------------------------- rule baselines

def mention_counts(q: ClozeQuery) -> np.ndarray:
    """How often the passage mentions each of the query's candidates."""
    index = {c: k for k, c in enumerate(q.candidates)}
    return np.bincount([index[e.text] for e in q.entities], minlength=len(index)).astype(float)


def guess_weights(mentions: np.ndarray, mode: str) -> np.ndarray:
    """The probability a random pick gives each candidate, from their ``mentions``: ``"mention"``
    draws one entity mention (often-mentioned entities are likelier), ``"unique"`` one distinct
    candidate string."""
    if mode == "mention":
        w = np.asarray(mentions, dtype=float)
    elif mode == "unique":
        w = np.ones(len(mentions))
    else:
        raise ValueError(f"random mode must be 'mention' or 'unique', got {mode!r}")
    return w / w.sum()


def random_guess(queries: Sequence[ClozeQuery], mode: str = "mention") -> MethodResult:
    """Expected EM/F1 of a random pick (:func:`guess_weights`), computed exactly (no seed noise)."""
    em, f1 = [], []
    for q in queries:
        cem, cf1 = candidate_scores(q)
        w = guess_weights(mention_counts(q), mode)
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

@dataclass(frozen=True)
class CandidateLogits:
    """A cloze reader's logits over each query's candidates, and each query's gold candidates: what
    its held-out loss is computed from (:func:`rcstudy.learning.heldout_losses`)."""

    ids: tuple[str, ...]
    logits: np.ndarray  # (queries, most candidates), NaN past a query's own candidates
    gold: tuple[tuple[int, ...], ...]  # each query's gold candidates (empty: none among them)
    mentions: tuple[np.ndarray, ...]  # each query's mentions of each of its candidates

    def subset(self, ids: Sequence[str]) -> tuple[np.ndarray, list[tuple[int, ...]]]:
        """The logits and gold candidates of ``ids``, in that order."""
        idx = self._positions(ids)
        return self.logits[idx], [self.gold[k] for k in idx]

    def guessing(self, ids: Sequence[str], mode: str) -> np.ndarray:
        """The loss of :func:`random_guess` (``mode``) on each of ``ids``: −ln of the probability its
        draw gives the gold candidates; NaN where none is gold."""
        return np.array([-np.log(guess_weights(self.mentions[k], mode)[list(self.gold[k])].sum()) if self.gold[k]
                         else np.nan for k in self._positions(ids)])

    def _positions(self, ids: Sequence[str]) -> list[int]:
        pos = {i: k for k, i in enumerate(self.ids)}
        return [pos[i] for i in ids]


def candidate_logits(queries: Sequence[ClozeQuery], logits: Sequence[np.ndarray]) -> CandidateLogits:
    """Each query's logits over its own candidates (a reader's rows may be padded past them), and
    which candidates exactly match a gold answer (:func:`~rcstudy.metrics.record.gold_candidate_indices`)."""
    out = np.full((len(queries), max((len(q.candidates) for q in queries), default=0)), np.nan)
    for row, q, scores in zip(out, queries, logits):
        row[:len(q.candidates)] = np.asarray(scores, dtype=float)[:len(q.candidates)]
    return CandidateLogits(tuple(q.id for q in queries), out, tuple(tuple(gold_candidate_indices(q)) for q in queries),
                           tuple(mention_counts(q) for q in queries))


@dataclass(frozen=True)
class SeedRun:
    """One seed of a trained cloze reader: its result on the queries it scored, its training
    losses, and its logits over those queries' candidates."""

    result: MethodResult
    losses: list
    candidates: CandidateLogits


def pooled(method: str, runs: Sequence[SeedRun]) -> tuple[MethodResult, list[MethodResult], list]:
    """A reader's row over its seeds (:func:`mean_over_seeds`), the per-seed results and losses."""
    per_seed = [r.result for r in runs]
    return mean_over_seeds(method, per_seed), per_seed, [r.losses for r in runs]


def ranker_run(cfg: RankerConfig, model: str, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
               seed: int, rt: Runtime) -> SeedRun:
    """Fine-tune ``model`` with one seed to rank the filled-in queries (cached by the engine)."""
    train_items = [it for it in cloze_items(train, fill=True, max_options=cfg.train_options, seed=seed)
                   if it.label is not None]
    eval_sets = {"eval": cloze_items(queries, fill=True)}
    out = mc.finetune_and_predict(cfg.mc_config(model, seed), train_items, eval_sets, rt)
    return SeedRun(from_candidate_logits(f"encoder ranker (seed {seed})", queries, out["eval"]), out["losses"],
                   candidate_logits(queries, out["eval"]))


def encoder_ranker(cfg: RankerConfig, model: str, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
                   seeds: Sequence[int], rt: Runtime) -> tuple[MethodResult, list[MethodResult], list[np.ndarray]]:
    """Fine-tune ``model`` to rank the filled-in queries; one run per seed (cached by the engine).

    Returns the result with per-query EM/F1 averaged over seeds (its predictions are the first
    seed's), the per-seed results and the per-seed training losses.
    """
    return pooled("encoder ranker", [ranker_run(cfg, model, train, queries, seed, rt) for seed in seeds])


def asreader_run(cfg: ASReaderConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery], seed: int) -> SeedRun:
    """ASReader trained with one seed (cached)."""
    ((logits, losses),) = asreader(cfg, train, queries, [seed])
    return SeedRun(from_candidate_logits(f"ASReader (seed {seed})", queries, list(logits)), losses,
                   candidate_logits(queries, logits))


def asreader_result(cfg: ASReaderConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
                    seeds: Sequence[int]) -> tuple[MethodResult, list[MethodResult], list[list[float]]]:
    """ASReader trained per seed: the seed-averaged result, the per-seed results and losses."""
    return pooled("ASReader", [asreader_run(cfg, train, queries, seed) for seed in seeds])


# --------------------------------------------------------------------------- extractive span readers

@dataclass(frozen=True)
class SpanRun:
    """One seed of a span reader: its free-span and candidate-restricted results, and its training losses."""

    free: MethodResult
    candidates: MethodResult
    losses: list


def span_run(method: str, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery], seed: int, placeholder: str,
             run: Callable[[list, list, int], sr.SpanPredictions]) -> SpanRun:
    """Run a span reader with one seed: ``run(train_examples, eval_examples, seed)`` returns
    :class:`~rcstudy.baselines.span_readers.SpanPredictions`. It trains only on queries with a
    gold span in the passage."""
    train_ex = [e for e in span_examples(train, placeholder) if e.gold]
    out = run(train_ex, span_examples(queries, placeholder), seed)
    return SpanRun(from_predictions(f"{method} (seed {seed})", queries, out.free),
                   from_predictions(f"{method}, candidates (seed {seed})", queries,
                                    {i: out.free[i] if c is None else c for i, c in out.candidate.items()}),
                   out.losses)


def pooled_spans(method: str, runs: Sequence[SpanRun]) -> tuple[MethodResult, MethodResult, list[list[float]]]:
    """A span reader's free-span and candidate-restricted rows over its seeds, and its losses."""
    return (mean_over_seeds(method, [r.free for r in runs]),
            mean_over_seeds(f"{method}, candidates", [r.candidates for r in runs]), [r.losses for r in runs])


def docqa_run(cfg: sr.DocQAConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery], seed: int,
              rt: Runtime) -> SpanRun:
    """DocQA-lite (with ELMo-style features when ``cfg.features`` names an encoder), trained from scratch."""
    return span_run("DocQA-lite", train, queries, seed, PLACEHOLDER_WORD,
                    lambda tr, ev, s: sr.docqa(cfg, tr, ev, s, rt))


def extractor_run(cfg: sr.ExtractorConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery], seed: int,
                  rt: Runtime) -> SpanRun:
    """The fine-tuned encoder span extractor (not in the paper): free and candidate-restricted decoding."""
    return span_run("encoder span extractor", train, queries, seed, cfg.question_placeholder,
                    lambda tr, ev, s: sr.encoder_extractor(cfg, tr, ev, s, rt))


def span_extractor(cfg: sr.ExtractorConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
                   seeds: Sequence[int], rt: Runtime) -> tuple[MethodResult, MethodResult, list[list[float]]]:
    """The span extractor per seed: the free-span and candidate-restricted rows, and the losses."""
    return pooled_spans("encoder span extractor", [extractor_run(cfg, train, queries, s, rt) for s in seeds])
