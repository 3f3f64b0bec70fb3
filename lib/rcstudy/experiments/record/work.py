"""The chapter's heavy work as jobs (:mod:`rcstudy.jobs`): the LM's scoring pass, and per seed the
encoder ranker, ASReader, DocQA-lite without and with the ELMo-style features, and the span
extractor. Each step returns its result; :func:`rcstudy.experiments.record.run` builds the page
from what :func:`rcstudy.jobs.execute` returns, and a worker's run of the same step fills the
cache entry the page then reads."""

from __future__ import annotations

from typing import Sequence

from ... import sampling
from ...baselines import span_readers as sr
from ...data.record import RecordData, load_record
from ...data.records import ClozeQuery
from ...jobs import Job, Tokens, causal_option_tokens, loaded_once, mc_tokens, option_tokens
from ...prompts.record import PLACEHOLDER_WORD, cloze_items, lm_prefix_and_continuations, span_examples
from ...runtime import Runtime
from .config import Config
from .methods import MethodResult, SeedRun, SpanRun, asreader_run, docqa_run, extractor_run, lm_baseline, ranker_run


def training_queries(cfg: Config, data: RecordData) -> list[ClozeQuery]:
    """The training queries every trained method learns from (a seeded sample, or all)."""
    return sampling.draw(data.train, cfg.sizes.train, cfg.sizes.seed)


def lm_queries(cfg: Config, eval_q: Sequence[ClozeQuery]) -> list[ClozeQuery]:
    """The evaluation queries the LM scores."""
    return sampling.draw(eval_q, cfg.sizes.lm_eval, cfg.sizes.seed)


def span_queries(cfg: Config, eval_q: Sequence[ClozeQuery]) -> list[ClozeQuery]:
    """The evaluation queries the span readers score."""
    return sampling.draw(eval_q, cfg.sizes.span_eval, cfg.sizes.seed)


def chapter_data(cfg: Config) -> RecordData:
    """The chapter's data, read once per process and data source (:func:`rcstudy.jobs.loaded_once`)."""
    return loaded_once(load_record, None, cfg.data_source)


def job_queries(cfg: Config) -> tuple[list[ClozeQuery], list[ClozeQuery]]:
    """The training and evaluation queries."""
    data = chapter_data(cfg)
    return training_queries(cfg, data), data.eval


# --------------------------------------------------------------------------- the steps

def lm_job(cfg: Config, rt: Runtime) -> MethodResult:
    return lm_baseline(cfg.lm, lm_queries(cfg, job_queries(cfg)[1]), rt)


def ranker_job(cfg: Config, rt: Runtime, seed: int) -> SeedRun:
    return ranker_run(cfg.ranker, cfg.model, *job_queries(cfg), seed, rt)


def asreader_job(cfg: Config, rt: Runtime, seed: int) -> SeedRun:
    return asreader_run(cfg.asreader, *job_queries(cfg), seed)


def docqa_job(cfg: Config, rt: Runtime, elmo: bool, seed: int) -> SpanRun:
    train_q, eval_q = job_queries(cfg)
    return docqa_run(cfg.docqa.engine(elmo=elmo), train_q, span_queries(cfg, eval_q), seed, rt)


def extractor_job(cfg: Config, rt: Runtime, seed: int) -> SpanRun:
    train_q, eval_q = job_queries(cfg)
    return extractor_run(cfg.extractor.engine(cfg.model), train_q, span_queries(cfg, eval_q), seed, rt)


# --------------------------------------------------------------------------- their sizes

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


def seed_jobs(cfg: Config, train_q: Sequence[ClozeQuery], span_q: Sequence[ClozeQuery],
              eval_items: list, seed: int) -> list[Job]:
    """One seed's trained readers: the encoder ranker, ASReader, DocQA-lite without and with the
    ELMo-style features (counting the frozen encoder's features, computed once per run over every
    training and scored passage and question) and the span extractor."""
    chapter, r, ext = Config.chapter, cfg.ranker, cfg.extractor
    train_items = [it for it in cloze_items(train_q, fill=True, max_options=r.train_options, seed=seed)
                   if it.label is not None]
    train_ex = [e for e in span_examples(train_q, PLACEHOLDER_WORD) if e.gold]
    feature_texts = list(dict.fromkeys(t for e in [*train_ex, *span_examples(span_q, PLACEHOLDER_WORD)]
                                       for t in (e.context, e.question)))
    ext_train = [e for e in span_examples(train_q, ext.engine(cfg.model).question_placeholder) if e.gold]
    ext_eval = span_examples(span_q, ext.engine(cfg.model).question_placeholder)
    return [
        Job(chapter, "train", f"encoder ranker seed {seed}", cfg.model, r.fields, seed, items=len(train_items),
            epochs=r.epochs, train_tokens=round(mc_tokens(train_items, r.fields, r.max_length) * r.epochs),
            score_tokens=mc_tokens(eval_items, r.fields, r.max_length), step="ranker_job", arguments={"seed": seed}),
        Job(chapter, "train", f"ASReader seed {seed}", "ASReader", "passage + query", seed, items=len(train_q),
            epochs=cfg.asreader.epochs, step="asreader_job", arguments={"seed": seed}, note="trained from scratch"),
        Job(chapter, "train", f"DocQA-lite w/o ELMo seed {seed}", "DocQA-lite", "passage + query", seed,
            items=len(train_ex), epochs=cfg.docqa.epochs, step="docqa_job", arguments={"elmo": False, "seed": seed},
            note="trained from scratch"),
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


def jobs(cfg: Config) -> list[Job]:
    """Every trained reader and scoring pass of the chapter: the LM over its evaluation queries,
    then each seed's readers (:func:`seed_jobs`). Readers trained from scratch are of unknown size."""
    from ...models.registry import split_revision

    train_q, eval_q = job_queries(cfg)
    lm_q, span_q = lm_queries(cfg, eval_q), span_queries(cfg, eval_q)
    lm = Job(Config.chapter, "score", f"LM {split_revision(cfg.lm.model)[0]}", cfg.lm.model,
             "passage + filled-in query", items=len(lm_q), tokens=lm_tokens(lm_q, cfg.lm.batch_size), step="lm_job")
    eval_items = cloze_items(eval_q, fill=True)
    return [lm, *(job for seed in cfg.seeds for job in seed_jobs(cfg, train_q, span_q, eval_items, seed))]
