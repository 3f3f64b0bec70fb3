"""Models fine-tuned on ReClor with RULE's main questions held out (Table 2's fine-tuned part)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ... import papers, sampling
from ...claims import ClaimEvidence
from ...data.records import MCItem
from ...data.rule import RuleData
from ...jobs import Outputs
from ...metrics.rule import METRICS
from ...report import cell, paper_vs_ours
from ...runtime import Runtime
from ...stats import Interval, hierarchical_ci
from .. import shared
from ..section import Section
from .alignment import alignment_frame, alignment_items
from .baselines import baseline_systems
from .config import Config, EncoderSetup, trained_setups
from .none_option import none_table
from .units import (NO_CONTEXT, Evaluation, System, Trained, Unavailable, alignment_sample, chance_row, chance_subq,
                    mains_of, results_table, runs_by_question, seed_average, system_scores)

#: Table 2's rows of the fine-tuned part (paper's rows, then ours).
PAPER_TRAINED_ROWS = ("Chance", "DeBERTa-v3 large, fine-tuned", "UnifiedQA-v2 base, fine-tuned",
                      "UnifiedQA-v2 large, fine-tuned", "UnifiedQA-v2 3B, fine-tuned", "Human")


def training_questions(setup: EncoderSetup, reclor_train: Sequence[MCItem], rule_all: RuleData) -> list[MCItem]:
    """The ReClor questions a model learns from: the setup's draw, without RULE's main questions."""
    pool = sampling.draw(list(reclor_train), setup.train_questions, setup.subsample_seed)
    return shared.reclor_training_questions(pool, {m.id for m in rule_all.mains})


def encoder_eval_sets(sample: RuleData, alignment: RuleData | None = None) -> dict[str, list[MCItem]]:
    """What a fine-tuned model answers: the main questions and subquestions of ``sample`` and the
    alignment items of ``alignment``."""
    sets = {"main": list(sample.mains), "sub": list(sample.subs)}
    if alignment is not None:
        sets["alignment"] = alignment_items(alignment)
    return sets


def scored_sets(cfg: Config, encoder: bool, enc_sample: RuleData, lm_sample: RuleData) -> dict[str, list[MCItem]]:
    """Everything the chapter asks of one fine-tuned model, in one call: its rows (the encoder also
    the alignment items) and, under the context ablation, the same questions without the context."""
    sets = encoder_eval_sets(enc_sample, alignment_sample(cfg, lm_sample) if encoder else None)
    if cfg.analyses.context_ablation:
        sets |= {f"{k}{NO_CONTEXT}": v for k, v in encoder_eval_sets(enc_sample.without_context()).items()}
    return sets


def encoder_logits(setup: EncoderSetup, reclor_train: Sequence[MCItem], rule_all: RuleData,
                   eval_sets: Mapping[str, Sequence[MCItem]], rt: Runtime) -> dict:
    """Option logits of the ReClor-trained model on each evaluation set (cached), its training
    losses and its training size."""
    from ...models import mc, seq2seq

    train = training_questions(setup, reclor_train, rule_all)
    if isinstance(setup.cfg, mc.MCConfig):
        out = mc.finetune_and_predict(setup.cfg, train, dict(eval_sets), rt)
    elif isinstance(setup.cfg, seq2seq.Seq2SeqConfig):
        out = seq2seq.finetune_mc_and_predict(setup.cfg, train, dict(eval_sets), rt)
    else:
        raise TypeError(f"an encoder setup needs an MCConfig or a Seq2SeqConfig, got {type(setup.cfg).__name__}")
    return {**out, "train questions": len(train)}


def logits_system(name: str, seed: int, logits: Mapping, sample: RuleData, alignment: RuleData | None = None,
                  suffix: str = "") -> System:
    """A fine-tuned model's answers on ``sample`` from its logits (:func:`encoder_logits`) on the sets
    ``main`` and ``sub`` (``suffix``: those sets without the context), and on the alignment items
    of ``alignment``."""
    ev = Evaluation(None, {m.id: int(p) for m, p in zip(sample.mains, logits[f"main{suffix}"].argmax(1))},
                    {s.id: int(p) for s, p in zip(sample.subs, logits[f"sub{suffix}"].argmax(1))})
    info = {"seed": seed, "train questions": logits["train questions"], "losses": logits["losses"],
            "main logits": dict(zip(ev.main_pred, logits[f"main{suffix}"]))}  # by main question, for its loss
    if alignment is not None:
        info["alignment"] = alignment_frame(alignment_items(alignment), logits["alignment"].argmax(1))
    return System(name, "ReClor-trained", [ev], sample, info)


def encoder_system(name: str, setup: EncoderSetup, reclor_train: Sequence[MCItem], rule_all: RuleData,
                   sample: RuleData, rt: Runtime, alignment: RuleData | None = None) -> System:
    """Fine-tune (or read) one model and evaluate it on ``sample`` (and the alignment task on ``alignment``)."""
    logits = encoder_logits(setup, reclor_train, rule_all, encoder_eval_sets(sample, alignment), rt)
    return logits_system(name, setup.seed, logits, sample, alignment)


def trained_systems(cfg: Config, outputs: Outputs, sample: RuleData, alignment: RuleData | None = None,
                    suffix: str = "") -> Trained:
    """Every fine-tuned model whose jobs (``trained_job``) ran, one system per seed on ``sample``
    (``suffix``: without the context), the encoder also on the alignment items of ``alignment``; and
    the models that could not be loaded. No job runs without ReClor train."""
    encoder_name, setups = trained_setups(cfg)
    by_name: dict[str, list[tuple[int, dict | Unavailable]]] = {}
    for job, out in outputs.each("trained_job"):
        by_name.setdefault(job.arguments["name"], []).append((job.arguments["seed"], out))
    failed = {name: next(o.reason for _, o in outs if isinstance(o, Unavailable)) for name, outs in by_name.items()
              if any(isinstance(o, Unavailable) for _, o in outs)}
    runs = {name + suffix: [logits_system(name + suffix, seed, out, sample,
                                          alignment if name == encoder_name else None, suffix) for seed, out in outs]
            for name, outs in by_name.items() if name not in failed}
    return Trained(encoder_name, setups, runs, list(failed.values()))


def subq_intervals(trained: Trained, seed: int) -> dict[str, Interval]:
    """Per fine-tuned model: SubQ accuracy with a bootstrap interval that resamples seeds, then main
    questions (a main question's subquestions are drawn together: they share its passage)."""
    out = {}
    for name, runs in trained.runs.items():
        sub = runs_by_question(runs, "sub")
        out[name] = hierarchical_ci(sub.to_numpy(float), clusters=mains_of(runs[0].data, sub.columns), seed=seed)
    return out


@dataclass(frozen=True, kw_only=True)
class FineTuned(Section):
    """Table 2's fine-tuned part: chance, the baselines and the models fine-tuned on ReClor."""

    trained: Trained
    baselines: list[System]
    rows: dict[str, dict]  # chance, each baseline and each model (mean over seeds): its metrics

    @property
    def losses(self) -> dict[str, list]:
        """The encoder's training-loss curve of each seed (the figure's data)."""
        runs = self.trained.encoder_runs
        return {self.trained.encoder_name: [r.info["losses"] for r in runs]} if runs else {}


def fine_tuned_section(cfg: Config, outputs: Outputs, data: RuleData, enc_sample: RuleData,
                       lm_sample: RuleData) -> FineTuned:
    """Chance, the baselines (on all of RULE) and the fine-tuned models (on ``enc_sample``), and
    the claim on the models' SubQ accuracy (its bootstrap seeded by ``cfg.sample_seed``)."""
    trained = trained_systems(cfg, outputs, enc_sample, alignment_sample(cfg, lm_sample))
    baselines = baseline_systems(data)
    rows = {"Chance": chance_row(data), **{b.name: system_scores(b) for b in baselines},
            **{name: seed_average(runs) for name, runs in trained.runs.items()}}
    subq_cis = subq_intervals(trained, cfg.sample_seed)
    paper = papers.table("rule", "Table 2")[list(METRICS)].loc[list(PAPER_TRAINED_ROWS)]
    facts = training_facts(cfg, trained, enc_sample) | baseline_facts(rows, trained, subq_cis, baselines)
    return FineTuned(tables={"rule_table2_trained": paper_vs_ours(paper, results_table(rows))}, facts=facts,
                     claims=(near_chance_claim(subq_cis),), trained=trained, baselines=baselines, rows=rows)


def near_chance_claim(subq_cis: Mapping[str, Interval]) -> ClaimEvidence:
    """Each fine-tuned model's SubQ accuracy against chance; it rests on the model having learned."""
    return ClaimEvidence(
        "finetuned-subq-near-chance",
        {"subq": dict(subq_cis), "chance": papers.value("rule", "Table 2", "Chance", "SubQ")} if subq_cis else None,
        "; ".join(f"{name}: SubQ {ci} (seeds, then main questions, resampled)" for name, ci in subq_cis.items())
        or "no model trained", rests_on=tuple(subq_cis))


def loss_text(runs: Sequence[System]) -> str:
    from ... import learning

    first, last = learning.loss_ends([r.info["losses"] for r in runs])
    return f"{first:.3f} → {last:.3f} over {len(runs[0].info['losses'])} steps"


def training_facts(cfg: Config, trained: Trained, sample: RuleData) -> dict:
    """What the note on the fine-tuned models says about their training."""
    enc, s2s, runs = cfg.encoder, cfg.seq2seq, trained.encoder_runs
    facts = {
        "rule_enc_model": enc.model,
        "rule_enc_train_n": runs[0].info["train questions"] if runs else 0,
        "rule_enc_schedule": f"{enc.epochs} epoch(s), AdamW, lr {enc.lr}, {enc.batch_size} questions per step",
        "rule_enc_seeds": (f"the mean ± sd over {len(cfg.seeds)} seeds" if len(cfg.seeds) > 1
                           else f"from one seed ({cfg.seeds[0]})"),
        "rule_enc_pool": ("all of ReClor train" if enc.train_questions is None
                          else f"out of a random draw of {enc.train_questions}"),
        "rule_enc_maxlen": enc.max_length,
        "rule_enc_mains": len(sample.mains),
        "rule_enc_subs": len(sample.subs),
        "rule_enc_loss": f"its training loss went {loss_text(runs)}" if runs else "it was not trained",
    }
    if s2s.models:
        done = "; ".join(f"{name.split(',')[0]}: loss {loss_text(r)}" for name, r in trained.seq2seq_runs.items())
        facts["rule_s2s_text"] = (
            f"The text-to-text models {', '.join(s2s.models)} are fine-tuned in UnifiedQA's input format (question, "
            f"lettered options, context; lower-cased; at most {s2s.max_src_len} tokens) to write the gold option, on "
            f"the same questions ({s2s.epochs} epoch(s), {shared.OPTIMIZER_NAMES[s2s.optimizer]}, lr {s2s.lr}, "
            f"batch {s2s.batch_size}); each option "
            f"is then scored by its log-likelihood and the likeliest one is the answer, so no answer is left "
            f"unparsed. " + (done + ". " if done else "")
            + (f"Not run: {'; '.join(trained.unavailable)}." if trained.unavailable else ""))
    else:
        facts["rule_s2s_text"] = ("No text-to-text model (UnifiedQA-v2 in the paper) is fine-tuned in this profile; "
                                  "the full profile fine-tunes UnifiedQA-v2 in its own input format.")
    return facts


def baseline_facts(rows: Mapping[str, Mapping], trained: Trained, subq_cis: Mapping[str, Interval],
                   baselines: Sequence[System]) -> dict:
    """The paragraph after the fine-tuned models' note: the encoder, the last and longest options."""
    facts = {}
    if trained.encoder_runs:
        enc = rows[trained.encoder_name]
        facts["rule_enc_text"] = (
            f"The encoder answers {cell(enc['MainQ'])} % of the main questions but {cell(enc['SubQ'])} % of the "
            f"subquestions (95% bootstrap interval over subquestions {subq_cis[trained.encoder_name]}; chance "
            f"{chance_subq():.1f} %)." + "".join(f" {name.split(',')[0]}: MainQ {cell(rows[name]['MainQ'])} %, SubQ "
                                                 f"{cell(rows[name]['SubQ'])} % (interval {subq_cis[name]})."
                                                 for name in trained.seq2seq_runs))
    else:
        facts["rule_enc_text"] = "No encoder was trained: the ReClor training data is missing."
    facts["rule_last_none"] = none_table(baselines[3]).loc["all", "None is the answer"]
    facts["rule_last_subq"] = rows["always Option3"]["SubQ"]
    longest = rows["longest option"]
    facts["rule_longest_text"] = (
        f"The longest-option baseline answers {longest['Selective']:.1f} % of the selective subquestions and "
        f"{longest['Eliminative']:.1f} % of the eliminative ones."
        + (" The rationale written for the right option is often the longest of the four, so a gap between "
           "selective and eliminative accuracy can come from length alone, without any understanding. Keep this "
           "baseline in mind when reading the gaps below." if longest["Selective"] > longest["Eliminative"] + 10 else ""))
    return facts


def shares_reclor_model(setup: EncoderSetup) -> bool:
    """Whether a setup is the shared ReClor model (:mod:`rcstudy.experiments.shared`), which the
    ReClor chapter's jobs train: on all of ReClor train without RULE's main questions."""
    return setup.cfg == shared.RECLOR_ENCODER and setup.train_questions is None
