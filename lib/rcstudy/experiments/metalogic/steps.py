"""The chapter's jobs (:mod:`rcstudy.jobs`): every heavy computation of the page, and the step each
runs. A step returns its result, computed through the cached engine with the same key as
everywhere, so the page (:func:`~.chapter.run`) reads the outputs of these jobs and nothing else
trains or generates."""

from __future__ import annotations

from typing import Sequence

from ...baselines import metagraph as gen
from ...data.metalogic import Metagraph
from ...jobs import Job, Tokens, generation_tokens, seq2seq_tokens, text_tokens
from ...models.registry import split_revision
from ...prompts import metalogic as prompts
from ...runtime import Runtime
from .config import METHOD_NAMES, Config, Decoding, engine_config, scaled_generators
from .data import job_splits, ratio_subsets
from .runs import (FeatureFits, Samples, feature_fits, fewshot_inputs, generator_samples, generator_sets, generators,
                   scale_step, seq2seq_run)


def generator_job(cfg: Config, rt: Runtime, method: str, seed: int) -> dict:
    splits = job_splits()
    g = generator_samples(cfg, splits)
    return seq2seq_run(cfg, method, seed, g.train, generator_sets(cfg, splits, g, method, seed), g.dev, rt)


def scale_job(cfg: Config, rt: Runtime, method: str, seed: int, ratio: float) -> dict:
    g = generator_samples(cfg, job_splits())
    return seq2seq_run(cfg, method, seed, ratio_subsets(g.train, [ratio], seed)[ratio], {"test": g.test}, g.dev, rt)


def fewshot_job(cfg: Config, rt: Runtime) -> dict[str, str]:
    shots, graphs = fewshot_inputs(cfg, job_splits())
    return gen.fewshot_outputs(cfg.fewshot.model, shots, graphs, rt, cfg.fewshot.max_new_tokens)


def feature_job(cfg: Config, rt: Runtime) -> FeatureFits:
    """The feature model's fits: on all of train (the baselines' row), on each data share, and for
    the error analysis when it categorises this model's predictions."""
    return feature_fits(cfg, job_splits())


def decoding_tokens(sources: Sequence[str], targets: Sequence[str], d: Decoding) -> Tokens:
    """The tokens of greedy decoding ``sources`` as :func:`rcstudy.models.seq2seq.generate` does:
    in batches of ``eval_batch_size``, shortest source first, each source cut at
    ``infer_max_src_len`` and run once (an encoder-decoder model: through its encoder); then as
    many decoding steps per batch as its longest output, taken as its longest target and the end
    token (at most ``gen_max_len``: a batch decodes until every sequence in it has ended)."""
    order = sorted(range(len(sources)), key=lambda i: text_tokens(sources[i]))
    total = Tokens()
    for k in range(0, len(order), d.eval_batch_size):
        batch = order[k:k + d.eval_batch_size]
        steps = min(max(text_tokens(targets[i]) + 1 for i in batch), d.gen_max_len)
        total += generation_tokens([sources[i] for i in batch], steps, len(batch), d.infer_max_src_len)
    return total


def generator_tokens(cfg: Config, method: str, seed: int, train: Sequence[Metagraph], g: Samples,
                     decoded: Sequence[Metagraph]) -> Tokens:
    """The tokens of one fine-tuned generator: the optimiser steps' examples, each source and
    target forward and backward (:func:`rcstudy.jobs.seq2seq_tokens`, cut at ``max_src_len`` and
    ``max_tgt_len``), then the dev decodings that select its checkpoint (one per evaluation) and
    the decoding of ``decoded`` (:func:`decoding_tokens`)."""
    c, d = engine_config(cfg, seed), cfg.decoding
    sources, targets = gen.METHOD_PAIRS[method](train)
    seen = c.total_steps(len(sources)) * c.batch_size * c.grad_accum
    once = seq2seq_tokens(sources, [[t] for t in targets], c.max_src_len, c.max_tgt_len, train=True)
    share = seen / max(1, len(sources))
    trained = Tokens(train=round(once.train * share), train_target=round(once.train_target * share))
    dev = decoding_tokens(*gen.METHOD_PAIRS[method](g.dev, d.input_format), d)
    return sum([dev] * (c.evaluations or 0), trained) + decoding_tokens(*gen.METHOD_PAIRS[method](decoded, d.input_format), d)


#: The context length :func:`rcstudy.models.lm.load_lm` gives the few-shot LM, and the prompts it
#: generates from at once (:meth:`rcstudy.models.lm.CausalLM.generate`'s default).
FEWSHOT_MAX_LENGTH, FEWSHOT_BATCH = 2048, 4


def generator_jobs(cfg: Config, splits, g: Samples) -> list[Job]:
    """Each generator per seed: trained, its checkpoints selected on dev, then decoding test and,
    for the error analysis, dev."""
    t, out = cfg.seq2seq, []
    for m, seeds in generators(cfg):
        for seed in seeds:
            decoded = [x for graphs in generator_sets(cfg, splits, g, m, seed).values() for x in graphs]
            out.append(Job(Config.chapter, "train", f"{METHOD_NAMES[m]} seed {seed}", t.model,
                           cfg.decoding.input_format, seed, items=len(g.train),
                           epochs=t.epochs if t.max_steps is None else 0.0,
                           tokens=generator_tokens(cfg, m, seed, g.train, g, decoded), step="generator_job",
                           arguments={"method": m, "seed": seed}))
    return out


def scale_jobs(cfg: Config, g: Samples) -> list[Job]:
    """Each data-scale run of a generator that is not one of :func:`generator_jobs` (:func:`~.runs.scale_step`)."""
    t, out = cfg.seq2seq, []
    for m in scaled_generators(cfg):
        for seed in cfg.scale.seeds:
            for ratio, subset in ratio_subsets(g.train, cfg.scale.ratios, seed).items():
                step, arguments = scale_step(cfg, g, m, seed, ratio, subset)
                if step != "scale_job":
                    continue
                out.append(Job(Config.chapter, "train", f"{METHOD_NAMES[m]} seed {seed}, {ratio:.0%} of train",
                               t.model, cfg.decoding.input_format, seed, items=len(subset),
                               epochs=t.epochs if t.max_steps is None else 0.0,
                               tokens=generator_tokens(cfg, m, seed, subset, g, g.test), step=step,
                               arguments=arguments))
    return out


def fewshot_jobs(cfg: Config, splits) -> list[Job]:
    if not cfg.fewshot.model:
        return []
    shots, graphs = fewshot_inputs(cfg, splits)
    # every prompt decodes all max_new_tokens: the answer is cut at its first line afterwards
    tokens = generation_tokens([prompts.fewshot_prompt(shots, x) for x in graphs], cfg.fewshot.max_new_tokens,
                               FEWSHOT_BATCH, FEWSHOT_MAX_LENGTH - cfg.fewshot.max_new_tokens)
    return [Job(Config.chapter, "generate", f"few-shot {split_revision(cfg.fewshot.model)[0]}", cfg.fewshot.model,
                f"{cfg.fewshot.shots} shot{'s' * (cfg.fewshot.shots != 1)}", items=len(graphs),
                tokens=tokens, step="fewshot_job")]


def jobs(cfg: Config) -> list[Job]:
    """Every fine-tuning and generation of the page, as jobs whose steps return what it reads: each
    generator per seed, each data-scale run, the few-shot LM, and the feature model's fits
    (logistic regression on the CPU, of unknown size)."""
    splits = job_splits()
    g = generator_samples(cfg, splits)
    return [*generator_jobs(cfg, splits, g), *scale_jobs(cfg, g), *fewshot_jobs(cfg, splits),
            Job(Config.chapter, "train", "feature model", "features", "passage", items=len(splits["train"]),
                step="feature_job", note="logistic regression on the CPU")]
