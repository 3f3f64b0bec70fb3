"""The chapter's heavy computations, each through its cached engine, and the passages each one
reads: the fine-tuned generators, the few-shot LM and the feature model's fits. Only the jobs'
steps (:mod:`.steps`) call them, so the page is built from the work its jobs declare."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ... import sampling
from ...baselines import metagraph as gen
from ...data import metalogic as ml
from ...data.metalogic import Metagraph, Prediction
from ...prompts import metalogic as prompts
from ...runtime import Runtime
from .config import Config, engine_config
from .data import ratio_subsets


@dataclass(frozen=True)
class Samples:
    """The passages the generators train on, decode for the tables and select checkpoints on."""

    train: list[Metagraph]
    test: list[Metagraph]
    dev: list[Metagraph]


def generator_samples(cfg: Config, splits: Mapping[str, Sequence[Metagraph]]) -> Samples:
    t = cfg.seq2seq
    return Samples(train=sampling.nested(splits["train"], t.n_train, 0),
                   test=sampling.nested(splits["test"], cfg.decoding.n_test, 0),
                   dev=sampling.nested(splits["dev"], t.n_dev, 0) if t.evaluations else [])


def error_sample(cfg: Config, splits: Mapping[str, Sequence[Metagraph]]) -> list[Metagraph]:
    """The dev passages whose errors are categorised."""
    return sampling.nested(splits["dev"], cfg.error_analysis.n, 0)


def generators(cfg: Config) -> list[tuple[str, tuple[int, ...]]]:
    """Each fine-tuned method the page reads and its training seeds: every ``seq2seq.methods``
    with every seed, and the error analysis's generator (its first seed) where it is none of them."""
    t, e = cfg.seq2seq, cfg.error_analysis.system
    extra = [(e, t.seeds[:1])] if e != "features" and e not in t.methods else []
    return [*((m, t.seeds) for m in t.methods), *extra]


def generator_sets(cfg: Config, splits, g: Samples, method: str, seed: int) -> dict[str, list[Metagraph]]:
    """Every set the chapter decodes with one fine-tuned generator: the test sample (a method of
    Table 3) and, for the error analysis's system and first seed, its dev sample."""
    sets = {"test": g.test} if method in cfg.seq2seq.methods else {}
    if cfg.error_analysis.system == method and seed == cfg.seq2seq.seeds[0]:
        sets["dev"] = error_sample(cfg, splits)
    return sets


def seq2seq_run(cfg: Config, method: str, seed: int, train, evals, dev, rt: Runtime) -> dict:
    """One fine-tuned generator of the configuration (see :func:`rcstudy.baselines.metagraph.seq2seq_outputs`)."""
    return gen.seq2seq_outputs(method, engine_config(cfg, seed), train, evals, rt,
                               input_format=cfg.decoding.input_format,
                               stop_after_minutes=cfg.seq2seq.stop_after_minutes, dev=dev)


def fewshot_shots(train: Sequence[Metagraph], k: int) -> list[Metagraph]:
    """The ``k`` shortest training passages that have both a rebut step and a formula (fixed, not sampled)."""
    ok = [g for g in train if ml.has_rebut(g) and any(n.triples for n in g.nodes.values())] or list(train)
    return sorted(ok, key=lambda g: (len(prompts.once_inputs([g])[0]), g.id))[:k]


def fewshot_inputs(cfg: Config, splits) -> tuple[list[Metagraph], list[Metagraph]]:
    """The few-shot LM's solved examples and the test passages it answers."""
    return fewshot_shots(splits["train"], cfg.fewshot.shots), sampling.nested(splits["test"], cfg.fewshot.n, 0)


@dataclass(frozen=True)
class FeatureFits:
    """The feature model's predictions: on test from all of train (the baselines' row), on test
    from each data share and subset draw (``(ratio, seed)``; none unless the data-scale curve
    retrains it), and on the error analysis's dev sample (None unless it categorises this model)."""

    test: dict[str, Prediction]
    scale: dict[tuple[float, int], dict[str, Prediction]]
    errors: dict[str, Prediction] | None


def feature_fits(cfg: Config, splits) -> FeatureFits:
    """Every fit of the feature model the page reads (logistic regression on the CPU, cached)."""
    train, test = splits["train"], splits["test"]
    on_test = gen.feature_predictions(train, test)
    scale = ({(ratio, seed): gen.feature_predictions(subset, test, seed)
              for seed in cfg.scale.seeds for ratio, subset in ratio_subsets(train, cfg.scale.ratios, seed).items()}
             if "features" in cfg.scale.methods else {})
    errors = (gen.feature_predictions(train, error_sample(cfg, splits))
              if cfg.error_analysis.system == "features" else None)
    return FeatureFits(on_test, scale, errors)


def scale_step(cfg: Config, g: Samples, method: str, seed: int, ratio: float,
               subset: Sequence[Metagraph]) -> tuple[str, dict]:
    """The step and arguments of the job whose output is one data-scale run of a generator: a
    share of train that is all of it, with a seed trained anyway, is that seed's generator."""
    if gen.ids_key(subset) == gen.ids_key(g.train) and seed in cfg.seq2seq.seeds:
        return "generator_job", {"method": method, "seed": seed}
    return "scale_job", {"method": method, "seed": seed, "ratio": ratio}
