"""The chapter's heavy computations as jobs (:mod:`rcstudy.jobs`): every fine-tuning and LM pass.

:func:`jobs` lists them; each runs as its step (:func:`trained_job`, :func:`lm_job`), which
computes through the same cached functions, with the same keys, wherever it runs, and returns its
result; the page (:func:`~.page.run`) executes the list and is built from what the steps return.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Callable

from ...data.records import MCItem
from ...data.rule import RuleData, RulePrompts
from ...errors import DataFileMissing, ModelUnavailable
from ...jobs import Job, loaded_once
from ...models.rule_lm import LazyLM
from ...runtime import Runtime
from .ablation import ablation_runs
from .config import Config, PromptSetting, trained_setups
from .fine_tuned import encoder_logits, scored_sets, shares_reclor_model, training_questions
from .prompting import lm_alignment, prompted_setting
from .rationales import rationale_runs
from .tokens import fine_tuning_tokens, lm_pass_tokens
from .units import Unavailable, samples

#: The prompted LM's passes, each ``f(cfg, lazy, prompts, spec, sample)``: a setting of Table 2,
#: Table 5's rationale runs, Appendix M's context ablation and the alignment follow-up.
LM_PASSES: dict[str, Callable] = {
    "setting": prompted_setting,
    "rationales": rationale_runs,
    "context ablation": ablation_runs,
    "alignment": lambda cfg, lazy, prompts, spec, sample: lm_alignment(lazy, prompts, sample),
}


def job_inputs() -> tuple[RuleData, RulePrompts, list[MCItem] | None]:
    """The release, its prompts and ReClor train (None where it is missing), read once per process
    (:func:`rcstudy.jobs.loaded_once`)."""
    reclor_train = reclor_train_or_missing()
    return (*loaded_once(_read_release), None if isinstance(reclor_train, DataFileMissing) else reclor_train)


def reclor_train_or_missing() -> list[MCItem] | DataFileMissing:
    """ReClor train, or the error that says where it is missing here (read once per process)."""
    return loaded_once(_read_reclor_train)


def _read_release() -> tuple[RuleData, RulePrompts]:
    from ...data import rule as rule_data

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a subsampled copy (the tests' fixtures) differs from the release
        data = rule_data.load_rule()
    return data, rule_data.load_prompts()


def _read_reclor_train() -> list[MCItem] | DataFileMissing:
    from ...data import reclor

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a subsampled ReClor copy warns about its size
            return reclor.load_split("train")
    except DataFileMissing as e:
        return e


def trained_job(cfg: Config, rt: Runtime, name: str, seed: int) -> dict | Unavailable:
    """One model fine-tuned on ReClor with one seed: its logits on every set the chapter asks of it
    (:func:`~.fine_tuned.scored_sets`), its training losses and size. A text-to-text model that
    cannot be loaded here is :class:`~.units.Unavailable`; the encoder stops the chapter."""
    data, _, reclor_train = job_inputs()
    encoder_name, setups = trained_setups(cfg)
    setup = next(s for s in setups[name] if s.seed == seed)
    sets = scored_sets(cfg, name == encoder_name, *samples(cfg, data))
    try:
        return encoder_logits(setup, reclor_train, data, sets, rt)
    except ModelUnavailable as e:
        if name == encoder_name:
            raise
        return Unavailable(str(e))


@lru_cache(maxsize=1)
def prompted_lm(model: str, rt: Runtime, max_length: int) -> LazyLM:
    """The LM of consecutive passes, loaded at most once (the jobs list each model's passes
    together), and one model at a time kept: a pass loads it only when its answers are not cached."""
    return LazyLM(model, rt, max_length=max_length)


def lm_job(cfg: Config, rt: Runtime, model: str, analysis: str, spec: str | None = None) -> object:
    """One pass of a prompted LM (:data:`LM_PASSES`) on the LMs' sample, and what it returns;
    :class:`~.units.Unavailable` when the model cannot be loaded here."""
    data, prompts, _ = job_inputs()
    try:
        return LM_PASSES[analysis](cfg, prompted_lm(model, rt, cfg.lm.max_length), prompts, spec, samples(cfg, data)[1])
    except ModelUnavailable as e:
        return Unavailable(f"{model}: {e}")


def fine_tuning_jobs(cfg: Config, data: RuleData, reclor_train: list[MCItem], enc_sample: RuleData,
                     lm_sample: RuleData) -> list[Job]:
    """Each fine-tuned model per seed, trained once and scored on every set the chapter asks of it
    (the shared ReClor model is trained by the ReClor chapter's jobs: here it is only scored)."""
    from ...models.registry import split_revision

    encoder_name, setups = trained_setups(cfg)
    out = []
    for name, model_setups in setups.items():
        sets = scored_sets(cfg, name == encoder_name, enc_sample, lm_sample)
        scored = [it for items in sets.values() for it in items]
        for setup in model_setups:
            train, shared_model = training_questions(setup, reclor_train, data), shares_reclor_model(setup)
            kind = "" if name == encoder_name else " text to text"
            note = "the shared ReClor model, trained by the ReClor chapter's jobs" if shared_model else ""
            out.append(Job(Config.chapter, "score" if shared_model else "train",
                           f"{split_revision(setup.cfg.model)[0]}{kind} seed {setup.seed}", setup.cfg.model, "CQA",
                           setup.seed, items=len(train), epochs=0.0 if shared_model else setup.cfg.epochs,
                           tokens=fine_tuning_tokens(setup, train, scored, trained=not shared_model),
                           step="trained_job", arguments={"name": name, "seed": setup.seed}, note=note))
    return out


def lm_jobs(cfg: Config, prompts: RulePrompts, lm_sample: RuleData) -> list[Job]:
    """Each prompted LM, its passes together: every setting of Table 2, rationale setting of Table 5,
    context-ablation setting, and the alignment follow-up."""
    from ...models.registry import split_revision

    a = cfg.analyses
    passes = [("setting", spec) for spec in cfg.lm.settings]
    passes += [("rationales", spec) for spec in a.rationale_settings] if a.rationale_augmentation else []
    passes += [("context ablation", spec) for spec in a.ablation_settings] if a.context_ablation else []
    passes += [("alignment", None)] if a.alignment else []
    out = []
    for model in cfg.lm.models:
        short = split_revision(model)[0]
        for analysis, spec in passes:
            questions, tokens = lm_pass_tokens(cfg, model, analysis, prompts, spec, lm_sample)
            generated = spec is not None and PromptSetting.parse(spec).scoring == "generate"
            name = f"{short} {spec}" if analysis == "setting" else f"{short} {analysis} {spec or ''}".rstrip()
            # an ablation's run with the context is that setting's run, when it is one: read, not recomputed
            after = (f"{short} {spec}",) if analysis == "context ablation" and spec in cfg.lm.settings else ()
            out.append(Job(Config.chapter, "generate" if generated else "score", name, model, spec or "alignment",
                           items=questions, tokens=tokens, step="lm_job",
                           arguments={"model": model, "analysis": analysis, "spec": spec}, after=after))
    return out


def jobs(cfg: Config) -> list[Job]:
    """Every fine-tuning and LM pass of the chapter, as jobs whose steps return what the page is
    built from (and fill the cache entries they read). Nothing is fine-tuned without ReClor train."""
    data, prompts, reclor_train = job_inputs()
    enc_sample, lm_sample = samples(cfg, data)
    fine_tuned = [] if reclor_train is None else fine_tuning_jobs(cfg, data, reclor_train, enc_sample, lm_sample)
    return fine_tuned + lm_jobs(cfg, prompts, lm_sample)
