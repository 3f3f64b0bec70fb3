"""The chapter's heavy computations as jobs (:mod:`rcstudy.jobs`): every fine-tuning and LM pass."""

from __future__ import annotations

import warnings
from typing import Callable

from ...data.records import MCItem
from ...data.rule import RuleData, RulePrompts
from ...errors import DataFileMissing
from ...jobs import Job, Tokens, loaded_once, mc_tokens
from ...models.rule_lm import LazyLM
from ...runtime import Runtime
from .ablation import ablation_runs
from .config import Config, PromptSetting
from .fine_tuned import encoder_logits, scored_sets, shares_reclor_model, trained_setups, training_questions
from .prompting import lm_alignment, prompted_setting
from .rationales import rationale_runs
from .tokens import lm_pass_tokens, unifiedqa_tokens
from .units import samples


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
    return loaded_once(_read_job_inputs)


def _read_job_inputs() -> tuple[RuleData, RulePrompts, list[MCItem] | None]:
    from ...data import reclor, rule as rule_data

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # as in release_section and reclor_join_section
        data = rule_data.load_rule()
        try:
            reclor_train = reclor.load_split("train")
        except DataFileMissing:
            reclor_train = None
    return data, rule_data.load_prompts(), reclor_train


def trained_job(cfg: Config, rt: Runtime, name: str, seed: int) -> None:
    data, _, reclor_train = job_inputs()
    encoder_name, setups = trained_setups(cfg)
    setup = next(s for s in setups[name] if s.seed == seed)
    encoder_logits(setup, reclor_train, data, scored_sets(cfg, name == encoder_name, *samples(cfg, data)), rt)


def lm_job(cfg: Config, rt: Runtime, model: str, analysis: str, spec: str | None = None) -> None:
    data, prompts, _ = job_inputs()
    LM_PASSES[analysis](cfg, LazyLM(model, rt, max_length=cfg.lm.max_length), prompts, spec, samples(cfg, data)[1])


def jobs(cfg: Config) -> list[Job]:
    """Every fine-tuning and LM pass of :func:`run`, as jobs that fill the cache entries it reads:
    each fine-tuned model per seed, trained once and scored on every set the chapter asks of it
    (the shared ReClor model is trained by the ReClor chapter's jobs: here it is only scored), and
    each prompted LM per setting of Table 2, rationale setting of Table 5, context-ablation
    setting and the alignment follow-up. Nothing is fine-tuned without ReClor train."""
    from ...models.mc import MCConfig
    from ...models.registry import split_revision

    data, prompts, reclor_train = job_inputs()
    enc_sample, lm_sample = samples(cfg, data)
    encoder_name, setups = trained_setups(cfg)
    fine_tuned = setups.items() if reclor_train is not None else ()  # nothing is fine-tuned without ReClor train
    out = []
    for name, model_setups in fine_tuned:
        sets = scored_sets(cfg, name == encoder_name, enc_sample, lm_sample)
        scored = [it for items in sets.values() for it in items]
        for setup in model_setups:
            train, c = training_questions(setup, reclor_train, data), setup.cfg
            shared_model = shares_reclor_model(setup)
            if isinstance(c, MCConfig):
                tokens = Tokens(train=0 if shared_model else round(mc_tokens(train, "CQA", c.max_length) * c.epochs),
                                forward=mc_tokens(scored, "CQA", c.max_length))
            else:
                labelled = [it for it in train if it.label is not None]
                tokens = unifiedqa_tokens(labelled, c, train=True) + unifiedqa_tokens(scored, c, train=False)
            kind = "" if name == encoder_name else " text to text"
            out.append(Job(Config.chapter, "score" if shared_model else "train",
                           f"{split_revision(c.model)[0]}{kind} seed {setup.seed}",
                           c.model, "CQA", setup.seed, items=len(train), epochs=0.0 if shared_model else c.epochs,
                           tokens=tokens, step="trained_job", arguments={"name": name, "seed": setup.seed},
                           note="the shared ReClor model, trained by the ReClor chapter's jobs" if shared_model else ""))
    a = cfg.analyses
    passes = [("setting", spec) for spec in cfg.lm.settings]
    passes += [("rationales", spec) for spec in a.rationale_settings] if a.rationale_augmentation else []
    passes += [("context ablation", spec) for spec in a.ablation_settings] if a.context_ablation else []
    passes += [("alignment", None)] if a.alignment else []
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
