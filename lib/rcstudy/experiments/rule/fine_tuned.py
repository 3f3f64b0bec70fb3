"""Models fine-tuned on ReClor with RULE's main questions held out (Table 2's fine-tuned part)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from IPython.display import Markdown

from ... import learning, sampling
from ...data.records import MCItem
from ...data.rule import RuleData
from ...errors import ModelUnavailable
from ...report import md_text
from ...runtime import Runtime
from .. import shared
from .alignment import alignment_frame, alignment_items
from .config import Config
from .units import Evaluation, System, alignment_sample, chance_of, runs_by_question


#: Table 2's rows of the fine-tuned part and of the prompted part (paper's rows, then ours).
PAPER_TRAINED_ROWS = ("Chance", "DeBERTa-v3 large, fine-tuned", "UnifiedQA-v2 base, fine-tuned",
                      "UnifiedQA-v2 large, fine-tuned", "UnifiedQA-v2 3B, fine-tuned", "Human")


@dataclass(frozen=True)
class EncoderSetup:
    """A model fine-tuned on ReClor: a multiple-choice encoder (``MCConfig``, all weights, as the
    paper's DeBERTa-v3) or a text-to-text model (``Seq2SeqConfig``, UnifiedQA's format).

    ``train_questions`` draws that many ReClor training questions (:func:`rcstudy.sampling.draw`,
    the ReClor chapter's draw; None: all), and the RULE main questions among them are then dropped.
    """

    cfg: object  # rcstudy.models.mc.MCConfig or rcstudy.models.seq2seq.Seq2SeqConfig
    train_questions: int | None = None
    subsample_seed: int = 0

    @property
    def seed(self) -> int:
        return self.cfg.seed


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


def encoder_system(name: str, setup: EncoderSetup, reclor_train: Sequence[MCItem], rule_all: RuleData,
                   sample: RuleData, rt: Runtime, alignment: RuleData | None = None) -> System:
    """Evaluate the ReClor-trained encoder on ``sample`` (and the alignment task on ``alignment``)."""
    logits = encoder_logits(setup, reclor_train, rule_all, encoder_eval_sets(sample, alignment), rt)
    main_pred = logits["main"].argmax(1)
    sub_pred = logits["sub"].argmax(1)
    ev = Evaluation(None, {m.id: int(p) for m, p in zip(sample.mains, main_pred)},
                    {s.id: int(p) for s, p in zip(sample.subs, sub_pred)})
    info = {"seed": setup.seed, "train questions": logits["train questions"], "losses": logits["losses"]}
    if alignment is not None:
        info["alignment"] = alignment_frame(alignment_items(alignment), logits["alignment"].argmax(1))
    return System(name, "ReClor-trained", [ev], sample, info)


@dataclass
class Trained:
    """The models fine-tuned on ReClor: one system per seed, by model name."""

    encoder_name: str
    setups: dict[str, list[EncoderSetup]]  # every configured model, run or not
    runs: dict[str, list[System]]  # the models that ran (the encoder first)
    unavailable: list[str]

    @property
    def encoder_runs(self) -> list[System]:
        return self.runs.get(self.encoder_name, [])

    @property
    def seq2seq_runs(self) -> dict[str, list[System]]:
        return {n: r for n, r in self.runs.items() if n != self.encoder_name}


def trained_setups(cfg: Config) -> tuple[str, dict[str, list[EncoderSetup]]]:
    """Every model to fine-tune on ReClor, one setup per seed: the encoder's name and all setups."""
    draw = {"train_questions": cfg.encoder.train_questions, "subsample_seed": cfg.sample_seed}
    encoder_name = f"{cfg.encoder.model}, fine-tuned on ReClor"
    setups = {encoder_name: [EncoderSetup(cfg.encoder.mc_config(seed), **draw) for seed in cfg.seeds]}
    for m in cfg.seq2seq.models:
        setups[f"{m}, fine-tuned on ReClor (text to text)"] = [
            EncoderSetup(cfg.seq2seq.seq2seq_config(m, seed), **draw) for seed in cfg.seeds]
    return encoder_name, setups


def train_models(cfg: Config, reclor_train: Sequence[MCItem] | None, data: RuleData, sample: RuleData,
                 alignment: RuleData | None, rt: Runtime) -> Trained:
    """Fine-tune every configured model on ReClor (per seed) and score it on ``sample``; the
    encoder also answers the alignment items of ``alignment``. Nothing runs without ReClor train."""
    encoder_name, setups = trained_setups(cfg)
    trained = Trained(encoder_name, setups, {}, [])
    if reclor_train is None:
        return trained
    trained.runs[encoder_name] = [encoder_system(encoder_name, s, reclor_train, data, sample, rt, alignment=alignment)
                                  for s in setups[encoder_name]]
    for name, model_setups in setups.items():
        if name == encoder_name:
            continue
        try:
            trained.runs[name] = [encoder_system(name, s, reclor_train, data, sample, rt) for s in model_setups]
        except ModelUnavailable as e:
            trained.unavailable.append(str(e))
    return trained


def loss_text(runs: Sequence[System]) -> str:
    first, last = learning.loss_ends([r.info["losses"] for r in runs])
    return f"{first:.3f} → {last:.3f} over {len(runs[0].info['losses'])} steps"


def loss_checks(trained: Trained, seed: int = 0) -> dict[str, learning.LossCheck]:
    """Did each fine-tuned model learn? It is judged on RULE's main questions, ReClor questions
    held out of its training (:func:`training_questions`): its accuracy there, seeds then main
    questions resampled, against chance. The multiple-choice encoder's training loss (a 4-way
    cross-entropy) is shown beside it against ln 4; the text-to-text models' is per token, with no
    ln k to compare with."""
    out = {}
    for name, runs in trained.runs.items():
        if not runs:
            continue
        main = runs_by_question(runs, "main")
        curves = [r.info["losses"] for r in runs] if name == trained.encoder_name else None
        out[name] = learning.check(name, curves, 4, correct=main.to_numpy(float),
                                   chance=chance_of(runs[0].data, main.columns, "main"),
                                   heldout="RULE's main questions (held out of training)", seed=seed)
    return out


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
    }
    checks = loss_checks(trained)
    facts["rule_enc_loss"] = f"its training loss went {loss_text(runs)}" if runs else "it was not trained"
    facts["rule_loss_warnings"] = Markdown(md_text(learning.warnings_text(list(checks.values()))))
    if s2s.models:
        done = "; ".join(f"{name.split(',')[0]}: loss {loss_text(r)}" for name, r in trained.seq2seq_runs.items())
        facts["rule_s2s_text"] = (
            f"The text-to-text models {', '.join(s2s.models)} are fine-tuned in UnifiedQA's input format (question, "
            f"lettered options, context; lower-cased; at most {s2s.max_length} tokens) to write the gold option, on "
            f"the same questions ({s2s.epochs} epoch(s), Adafactor, lr {s2s.lr}, batch {s2s.batch_size}); each option "
            f"is then scored by its log-likelihood and the likeliest one is the answer, so no answer is left "
            f"unparsed. " + (done + ". " if done else "")
            + (f"Not run: {'; '.join(trained.unavailable)}." if trained.unavailable else ""))
    else:
        facts["rule_s2s_text"] = ("No text-to-text model (UnifiedQA-v2 in the paper) is fine-tuned in this profile; "
                                  "the full profile fine-tunes UnifiedQA-v2 in its own input format.")
    return facts


def shares_reclor_model(setup: EncoderSetup) -> bool:
    """Whether a setup is the shared ReClor model (:mod:`rcstudy.experiments.shared`), which the
    ReClor chapter's jobs train: on all of ReClor train without RULE's main questions."""
    return setup.cfg == shared.RECLOR_ENCODER and setup.train_questions is None


def scored_sets(cfg: Config, encoder: bool, enc_sample: RuleData, lm_sample: RuleData) -> dict[str, list[MCItem]]:
    """Everything the chapter asks of one fine-tuned model, in one call: its rows (the encoder also
    the alignment items) and, under the context ablation, the same questions without the context."""
    sets = encoder_eval_sets(enc_sample, alignment_sample(cfg, lm_sample) if encoder else None)
    if cfg.analyses.context_ablation:
        sets |= {f"{k}, no context": v for k, v in encoder_eval_sets(enc_sample.without_context()).items()}
    return sets
