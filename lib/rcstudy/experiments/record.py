"""The ReCoRD chapter's pipeline: corpus statistics, construction checks and the cloze baselines.

Every method is a *cloze* reader: it picks one of the passage's candidate entities (distinct
entity strings) for ``@placeholder``, and is scored with the official EM/F1 against all gold
answers. Methods: random guess (exact expectation, no sampling noise), first / most frequent
entity, the paper's language-model baseline, an attention-sum reader (ASReader) trained from
scratch, and a fine-tuned encoder that ranks the query with each candidate filled in.

The paper's extractive readers choose any passage span instead: DocQA-lite without and with
frozen contextual ("ELMo") features, trained from scratch, and a fine-tuned encoder span
extractor (not in the paper) decoded both freely and restricted to the candidate mentions
(:mod:`rcstudy.baselines.span_readers`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from ..baselines import span_readers as sr
from ..cache import cached, fingerprint
from ..data.record import HIGHLIGHT, PLACEHOLDER, RecordData
from ..data.records import ClozeQuery, MCItem
from ..metrics.record import Scores, candidate_scores, evaluate, normalize_answer
from ..models import mc, scratch
from ..models.lm import load_lm
from ..runtime import Runtime, seed_everything
from ..stats import Interval, bootstrap_ci

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


def export_predictions(result: MethodResult, folder: Path) -> Path | None:
    """Write ``{query id: answer}`` (the official script's prediction format)."""
    if result.predictions is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"preds_{re.sub(r'[^a-z0-9]+', '_', result.method.lower()).strip('_')}.json"
    path.write_text(json.dumps(result.predictions, indent=0, ensure_ascii=False), encoding="utf-8")
    return path


def paired_difference(a: MethodResult, b: MethodResult, metric: str = "f1", seed: int = 0) -> Interval:
    """Bootstrap interval of mean(a − b) over the queries both were run on, in points."""
    in_b = set(b.ids)
    common = [i for i in a.ids if i in in_b]
    return bootstrap_ci(getattr(a.subset(common), metric) - getattr(b.subset(common), metric), scale=100, seed=seed)


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

def lm_prefix_and_continuations(q: ClozeQuery) -> tuple[str, list[str]]:
    """Passage + query with each candidate substituted, split where the sequences start to differ.

    log P(passage ⧺ query(c)) = log P(shared prefix) + log P(rest | prefix); the first term is the
    same for every candidate, so the argmax only needs the second (the paper's full-sequence score).
    """
    head, _, tail = q.query.partition(PLACEHOLDER)
    return f"{q.passage}\n{head}", [f"{c}{tail}" for c in q.candidates]


def lm_candidate_scores(model_name: str, queries: Sequence[ClozeQuery], rt: Runtime, *,
                        chunk: int = 16, batch_size: int = 16) -> list[dict]:
    """Per query, the summed log-likelihood and token count of each candidate's continuation.

    Cached in chunks of ``chunk`` queries, so an interrupted run resumes where it stopped.
    """
    lm = None
    out = []
    for start in range(0, len(queries), chunk):
        part = queries[start:start + chunk]
        key = {"model": model_name, "queries": fingerprint([(q.id, q.passage, q.query, q.candidates) for q in part])}

        def compute(part=part):
            nonlocal lm
            lm = lm or load_lm(model_name, rt)
            res = []
            for q in part:
                prefix, conts = lm_prefix_and_continuations(q)
                s, n = lm.loglik([prefix] * len(conts), conts, batch_size=batch_size, return_counts=True)
                res.append({"id": q.id, "loglik": s, "tokens": n})
            return res

        out += cached("record_lm_scores", key, compute)
    return out


def lm_result(method: str, queries: Sequence[ClozeQuery], scores: list[dict], scoring: str = "full") -> MethodResult:
    """``full``: the paper's sequence probability; ``mean``: per-token average (length-normalised)."""
    if scoring not in ("full", "mean"):
        raise ValueError(f"LM scoring must be 'full' or 'mean', got {scoring!r}")
    logits = [s["loglik"] / (s["tokens"] if scoring == "mean" else 1) for s in scores]
    return from_candidate_logits(method, queries, logits)


# --------------------------------------------------------------------------- candidate items

def gold_candidate_indices(q: ClozeQuery) -> list[int]:
    """Indices of the candidates that exactly match a gold answer after normalisation."""
    gold = {normalize_answer(a) for a in q.answers}
    return [k for k, c in enumerate(q.candidates) if normalize_answer(c) in gold]


def cloze_items(queries: Sequence[ClozeQuery], *, fill: bool, max_options: int | None = None,
                seed: int = 0) -> list[MCItem]:
    """Queries as multiple-choice items over their candidates (label: the first gold candidate).

    ``fill=True`` makes each option the query with the candidate filled in (question empty);
    ``False`` keeps the candidate strings as options and the query as the question.
    ``max_options`` keeps the gold candidate and a seeded random sample of the others (training
    only: it cuts the cost of long candidate lists). Queries without a gold candidate get label None.
    """
    rng = np.random.default_rng(seed)
    items = []
    for q in queries:
        cands = list(q.candidates)
        gold = gold_candidate_indices(q)
        label = gold[0] if gold else None
        if max_options and len(cands) > max_options and label is not None:
            others = [k for k in range(len(cands)) if k != label]
            keep = sorted([label, *rng.choice(others, size=max_options - 1, replace=False).tolist()])
            cands, label = [cands[k] for k in keep], keep.index(label)
        options = tuple(q.query.replace(PLACEHOLDER, c) for c in cands) if fill else tuple(cands)
        items.append(MCItem(q.id, q.passage, "" if fill else q.query, options, label, {"candidates": tuple(cands)}))
    return items


# --------------------------------------------------------------------------- fine-tuned encoder ranker

@dataclass(frozen=True)
class RankerConfig:
    model: str = "minilm-l6"
    fields: str = "QA"  # "QA": the filled-in query alone; "CQA": passage + filled-in query
    max_length: int = 64
    epochs: float = 1
    lr: float = 5e-5
    batch_size: int = 8
    grad_accum: int = 1
    train_options: int | None = 6  # candidates per training query (gold + random others); None = all


def encoder_ranker(cfg: RankerConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
                   seeds: Sequence[int], rt: Runtime) -> tuple[MethodResult, list[MethodResult], list[np.ndarray]]:
    """Fine-tune ``cfg.model`` to rank the filled-in queries; one run per seed (cached).

    Returns the result with per-query EM/F1 averaged over seeds (its predictions are the first
    seed's), the per-seed results and the per-seed training losses.
    """
    eval_items = cloze_items(queries, fill=True)
    per_seed, losses = [], []
    for seed in seeds:
        train_items = [it for it in cloze_items(train, fill=True, max_options=cfg.train_options, seed=seed)
                       if it.label is not None]
        mcfg = mc.MCConfig(model=cfg.model, fields=cfg.fields, max_length=cfg.max_length, epochs=cfg.epochs,
                           lr=cfg.lr, batch_size=cfg.batch_size, grad_accum=cfg.grad_accum, seed=seed)
        out = mc.finetune_and_predict(mcfg, train_items, {"eval": eval_items}, rt)
        per_seed.append(from_candidate_logits(f"encoder ranker (seed {seed})", queries, out["eval"]))
        losses.append(out["losses"])
    return mean_over_seeds("encoder ranker", per_seed), per_seed, losses


# --------------------------------------------------------------------------- ASReader (from scratch)

PLACEHOLDER_WORD = "xxplaceholder"


class AttentionSumReader(nn.Module):
    """Kadlec et al. (2016): P(c) = Σ over c's mentions of softmax_i(doc_i · query).

    Shared embeddings; bidirectional GRUs over document and query; the query vector joins the
    forward GRU's last state and the backward GRU's first. A mention is its first token.
    """

    def __init__(self, vocab_size: int, emb: int = 64, hidden: int = 64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=0)
        self.doc_rnn = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.query_rnn = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.hidden = hidden

    def forward(self, doc, doc_mask, query, query_mask, positions, option_mask):
        f, _ = self.doc_rnn(self.embed(doc))  # (B, Ld, 2H)
        q, _ = self.query_rnn(self.embed(query))  # (B, Lq, 2H)
        last = query_mask.sum(1) - 1
        g = torch.cat([q[torch.arange(len(q)), last, :self.hidden], q[:, 0, self.hidden:]], -1)
        att = torch.softmax((f @ g.unsqueeze(-1)).squeeze(-1).masked_fill(~doc_mask, -1e9), -1)  # (B, Ld)
        p = (positions * att.unsqueeze(1)).sum(-1)  # (B, n_options)
        return torch.log(p.clamp(min=1e-12)).masked_fill(~option_mask, float("-inf"))


@dataclass(frozen=True)
class ASReaderConfig:
    emb: int = 64
    hidden: int = 64
    vocab_size: int = 20000
    epochs: int = 5
    lr: float = 1e-3
    batch_size: int = 16


def _first_token_positions(q: ClozeQuery) -> list[list[int]]:
    """Document token index of each mention, grouped by candidate (tokenised like the document)."""
    index = {c: k for k, c in enumerate(q.candidates)}
    out: list[list[int]] = [[] for _ in index]
    for e in q.entities:
        out[index[e.text]].append(len(scratch.tokenize(q.passage[:e.start])))
    return out


def asreader_batcher(queries: Sequence[ClozeQuery], vocab: scratch.Vocab, n_options: int):
    """The batch function for :mod:`rcstudy.models.scratch`: ids, masks and mention positions."""
    enc = {q.id: (vocab.encode(q.passage), vocab.encode(q.query.replace(PLACEHOLDER, PLACEHOLDER_WORD)),
                  _first_token_positions(q)) for q in queries}

    def batches(items: list[MCItem]) -> dict:
        docs, qs, pos = zip(*(enc[it.id] for it in items))
        doc, doc_mask = scratch.pad(docs)
        query, query_mask = scratch.pad(qs)
        positions = torch.zeros((len(items), n_options, doc.shape[1]))
        option_mask = torch.zeros((len(items), n_options), dtype=torch.bool)
        for b, cand_pos in enumerate(pos):
            for k, ps in enumerate(cand_pos):
                positions[b, k, [p for p in ps if p < doc.shape[1]]] = 1.0
                option_mask[b, k] = True
        return {"doc": doc, "doc_mask": doc_mask, "query": query, "query_mask": query_mask,
                "positions": positions, "option_mask": option_mask}

    return batches


def asreader(cfg: ASReaderConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
             seeds: Sequence[int]) -> tuple[MethodResult, list[MethodResult], list[list[float]]]:
    """Train the attention-sum reader from scratch per seed (cached) and rank the candidates."""
    train_items = [it for it in cloze_items(train, fill=False) if it.label is not None]
    eval_items = cloze_items(queries, fill=False)
    n_options = max(len(q.candidates) for q in [*train, *queries])
    per_seed, losses = [], []
    for seed in seeds:
        def compute(seed=seed):
            texts = [t for q in train for t in (q.passage, q.query.replace(PLACEHOLDER, PLACEHOLDER_WORD))]
            vocab = scratch.Vocab.build(texts, max_size=cfg.vocab_size)
            batches = asreader_batcher([*train, *queries], vocab, n_options)
            seed_everything(seed)
            model = AttentionSumReader(len(vocab), cfg.emb, cfg.hidden)
            loss = scratch.train_mc_module(model, batches, train_items, epochs=cfg.epochs, lr=cfg.lr,
                                           batch_size=cfg.batch_size, seed=seed)
            return scratch.predict_mc_module(model, batches, eval_items, batch_size=64), loss

        key = {"cfg": asdict(cfg), "seed": seed,
               "train": mc.items_fingerprint(train_items), "eval": mc.items_fingerprint(eval_items)}
        logits, loss = cached("record_asreader", key, compute)
        per_seed.append(from_candidate_logits(f"ASReader (seed {seed})", queries, list(logits)))
        losses.append(loss)
    return mean_over_seeds("ASReader", per_seed), per_seed, losses


# --------------------------------------------------------------------------- extractive span readers

def gold_char_spans(q: ClozeQuery) -> tuple[tuple[int, int], ...]:
    """The answer spans the files give, else every mention whose text matches a gold answer."""
    spans = [tuple(s) for s in q.meta.get("answer_spans", ())]
    gold = {normalize_answer(a) for a in q.answers}
    spans += [(e.start, e.end) for e in q.entities if normalize_answer(e.text) in gold]
    return tuple(dict.fromkeys(spans))


def span_examples(queries: Sequence[ClozeQuery], placeholder: str) -> list[sr.SpanExample]:
    """Queries as span-extraction examples: ``@placeholder`` written as ``placeholder``, mentions as candidates."""
    return [sr.SpanExample(q.id, q.passage, q.query.replace(PLACEHOLDER, placeholder), gold_char_spans(q),
                           tuple((e.start, e.end) for e in q.entities)) for q in queries]


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


# --------------------------------------------------------------------------- sampling

def sample_queries(queries: Sequence[ClozeQuery], n: int | None, seed: int = 0) -> list[ClozeQuery]:
    """A seeded sample of ``n`` queries in their original order (all of them if ``n`` is None)."""
    if n is None or n >= len(queries):
        return list(queries)
    keep = set(np.random.default_rng(seed).choice(len(queries), size=n, replace=False).tolist())
    return [q for k, q in enumerate(queries) if k in keep]


def results_frame(rows: dict[str, MethodResult], columns: tuple[str, str] = ("EM (dev)", "F1 (dev)")) -> pd.DataFrame:
    """Our Table 4: per row, EM and F1 as 95% bootstrap intervals (percent) and the number of queries."""
    return pd.DataFrame(
        {r: {columns[0]: res.interval("em"), columns[1]: res.interval("f1"), "n": len(res.ids)}
         for r, res in rows.items()}).T
