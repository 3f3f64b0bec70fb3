"""The chapter's jobs (:mod:`rcstudy.jobs`): every heavy computation of the page, and the step each
runs. A step returns its result, computed through the cached engine with the same key as
everywhere, so the page (:func:`~.chapter.run`) reads the outputs of these jobs and nothing else
trains or scores."""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ...data.records import MCItem
from ...errors import DataFileMissing
from ...jobs import Job, Tokens, causal_option_tokens, mc_tokens
from ...models.registry import split_revision
from ...prompts.logiqa import ABLATION_FIELDS, lm_context, lm_continuation
from ...runtime import Runtime
from .config import P, Config
from .data import LogiQAData, job_data
from .runs import (ablation_run, ablation_sets, encoder_eval_sets, encoder_run, encoder_train_items, lm_items, lm_run,
                   reader_run, reader_train_items, reclor_source, transfer_eval_sets, transfer_row_stages,
                   transfer_run)


def transfer_stages(cfg: Config, data: LogiQAData) -> list[list[Sequence[MCItem]]]:
    """:func:`~.runs.transfer_row_stages` of the chapter's source and LogiQA items; none without ReClor."""
    try:
        source = reclor_source(cfg.transfer, cfg.sizes.seed)
    except DataFileMissing:
        return []
    return transfer_row_stages(source, encoder_train_items(data, cfg.encoder, cfg.sizes), cfg.transfer.then_logiqa)


def reader_job(cfg: Config, rt: Runtime, name: str, seed: int):
    return reader_run(job_data(cfg.dataset), cfg.readers, name, seed, cfg.sizes.seed, str(rt.device))


def encoder_job(cfg: Config, rt: Runtime, model: str, seed: int) -> dict:
    return encoder_run(job_data(cfg.dataset), replace(cfg.encoder, model=model), cfg.sizes, seed, rt)


def ablation_job(cfg: Config, rt: Runtime, name: str, seed: int) -> dict:
    return ablation_run(job_data(cfg.dataset), cfg.encoder, cfg.sizes, name, seed, rt)


def transfer_job(cfg: Config, rt: Runtime, row: int, seed: int) -> dict:
    data = job_data(cfg.dataset)
    return transfer_run(data, cfg.encoder, cfg.transfer, cfg.sizes, transfer_stages(cfg, data)[row], seed, rt)


def lm_job(cfg: Config, rt: Runtime) -> dict:
    return lm_run(job_data(cfg.dataset), cfg.lm, cfg.sizes, rt)


#: The context length :func:`rcstudy.models.lm.load_lm` gives the LM (or the model's own limit, if shorter).
LM_MAX_LENGTH = 2048


def lm_tokens(items: Sequence[MCItem], batch_size: int) -> Tokens:
    """The tokens the zero-shot LM runs to score every option of ``items``
    (:func:`rcstudy.baselines.option_lm.option_scores`): each item's context once per
    ``batch_size`` of its options, whose key/value cache then serves each option
    (:func:`rcstudy.jobs.causal_option_tokens`)."""
    return causal_option_tokens([lm_context(it) for it in items],
                                [[lm_continuation(o) for o in it.options] for it in items], LM_MAX_LENGTH, batch_size)


def reader_jobs(cfg: Config, data: LogiQAData) -> list[Job]:
    n_reader = len(reader_train_items(data, cfg.readers, cfg.sizes.seed))
    return [Job(P, "train", f"reader {name} seed {seed}", name, "CQA", seed, items=n_reader,
                epochs=cfg.readers.epochs, step="reader_job", arguments={"name": name, "seed": seed})
            for name in cfg.readers.names for seed in cfg.readers.seeds]


def encoder_jobs(cfg: Config, data: LogiQAData) -> list[Job]:
    enc = cfg.encoder
    train = encoder_train_items(data, enc, cfg.sizes)
    scored = mc_tokens([it for items in encoder_eval_sets(data, cfg.sizes).values() for it in items], "CQA", enc.max_length)
    return [Job(P, "train", f"encoder {split_revision(model)[0]} seed {seed}", model, "CQA", seed, items=len(train),
                epochs=enc.epochs, train_tokens=round(mc_tokens(train, "CQA", enc.max_length) * enc.epochs),
                score_tokens=scored, step="encoder_job", arguments={"model": model, "seed": seed})
            for model in (enc.model, *enc.extra_models) for seed in enc.seeds]


def ablation_jobs(cfg: Config, data: LogiQAData) -> list[Job]:
    enc, out = cfg.encoder, []
    for name in cfg.ablations:
        fields = ABLATION_FIELDS[name]
        items, sub = ablation_sets(data, enc, cfg.sizes, name)
        out += [Job(P, "train", f"ablation {name} seed {seed}", enc.model, fields, seed, items=len(items),
                    epochs=enc.epochs, train_tokens=round(mc_tokens(items, fields, enc.max_length) * enc.epochs),
                    score_tokens=mc_tokens(sub, fields, enc.max_length), step="ablation_job",
                    arguments={"name": name, "seed": seed})
                for seed in enc.seeds]
    return out


def transfer_jobs(cfg: Config, data: LogiQAData) -> list[Job]:
    """Each transfer row per seed; source → LogiQA comes after the source alone, whose model it continues."""
    enc, out = cfg.encoder, []
    scored = mc_tokens([it for items in transfer_eval_sets(data, cfg.sizes).values() for it in items], "CQA", enc.max_length)
    for row, stages in enumerate(transfer_stages(cfg, data)):
        # the second row continues the first row's cached model: only its LogiQA stage is trained here
        trained = list(zip(stages, [cfg.transfer.source_epochs, enc.epochs]))[row:]
        tokens = sum(mc_tokens(items, "CQA", enc.max_length) * e for items, e in trained)
        for seed in enc.seeds:
            source_only = f"transfer ReClor seed {seed}"
            out.append(Job(P, "train", [source_only, f"transfer ReClor → LogiQA seed {seed}"][row], enc.model, "CQA",
                           seed, items=sum(len(items) for items, _ in trained), epochs=sum(e for _, e in trained),
                           train_tokens=round(tokens),
                           score_tokens=scored, step="transfer_job", arguments={"row": row, "seed": seed},
                           after=(source_only,) if row else ()))
    return out


def jobs(cfg: Config) -> list[Job]:
    """Every training and scoring run of the page, as jobs whose steps return what it reads: the
    readers, each encoder and ablation per seed, the transfer rows per seed, and the zero-shot LM."""
    data = job_data(cfg.dataset)
    _, items = lm_items(data, cfg.lm, cfg.sizes)
    lm = Job(P, "score", f"zero-shot {split_revision(cfg.lm.model)[0]}", cfg.lm.model, "CQ+A", items=len(items),
             tokens=lm_tokens(items, cfg.lm.batch_size), step="lm_job")
    return [*reader_jobs(cfg, data), *encoder_jobs(cfg, data), *ablation_jobs(cfg, data), *transfer_jobs(cfg, data), lm]
