"""The tokens each job runs, as its engine runs them, for the GPU-hour plan (:mod:`rcstudy.plan`)."""

from __future__ import annotations

from typing import Sequence

from ...data.records import MCItem
from ...data.rule import RuleData, RulePrompts
from ...jobs import Tokens, causal_option_tokens, generation_tokens, mc_tokens, seq2seq_tokens
from ...prompts import rule as prompt_formats
from .config import Config, EncoderSetup, PromptSetting
from .prompting import ANSWER_TOKENS, alignment_prompts, setting_prompts, with_and_without_context
from .rationales import rationale_variants

#: The batch sizes :func:`rcstudy.models.rule_lm.lm_predict` leaves at the engine's defaults:
#: scored continuations (or answer-letter prompts) per forward pass, and prompts generated at once.
LM_SCORE_BATCH, LM_GENERATE_BATCH = 8, 4


def encoder_decoder_lm(model: str) -> bool:
    """Whether :func:`rcstudy.models.lm.load_lm` gives ``model`` its encoder-decoder engine, told
    from the name (the T5 family: Flan-T5, UnifiedQA; BART) so that a plan needs no download."""
    from ...models.registry import split_revision

    name = split_revision(model)[0].lower()
    return "t5" in name or "bart" in name


def seq2seq_scoring_tokens(sources: Sequence[str], targets: Sequence[Sequence[str]], batch_size: int,
                           max_source: int | None = None) -> Tokens:
    """The tokens of :meth:`rcstudy.models.lm.Seq2SeqLM.loglik` scoring each source's targets: the
    (source, target) rows in passes of ``batch_size``, longest source first, each distinct source of
    a pass through the encoder once (a source whose targets fall in two passes runs in both)."""
    rows = [(s, t) for s, ts in zip(sources, targets) for t in ts]
    order = sorted(range(len(rows)), key=lambda i: -len(rows[i][0]))
    total = Tokens()
    for k in range(0, len(order), batch_size):
        by_source: dict[str, list[str]] = {}
        for i in order[k:k + batch_size]:
            by_source.setdefault(rows[i][0], []).append(rows[i][1])
        total += seq2seq_tokens(list(by_source), list(by_source.values()), max_source)
    return total


def lm_tokens(model: str, texts: Sequence[str], options: Sequence[Sequence[str]], scoring: str, max_length: int,
              max_new_tokens: int) -> Tokens:
    """The tokens ``model`` runs to answer ``texts`` as :func:`rcstudy.models.rule_lm.lm_predict`
    asks it (each distinct prompt once): for a letter's probability, the prompt and its answer cue
    once (a causal LM's forward pass; an encoder-decoder model's encoder, then one decoder
    position); for each option's likelihood, the prompt once per batch of its options and each
    option after it (:func:`rcstudy.jobs.causal_option_tokens`; an encoder-decoder model: the
    prompt through the encoder once per pass, each option through the decoder); for a generated
    answer, the prompt and ``max_new_tokens`` decoding steps per batch of prompts. A tokenizer
    whose digits share a first token scores each letter's whole cue as a continuation instead, a
    few tokens per option more than counted here."""
    unique = list(dict.fromkeys(zip(texts, map(tuple, options))))
    asked, opts = [t for t, _ in unique], [o for _, o in unique]
    seq2seq = encoder_decoder_lm(model)
    if scoring == "generate":
        # the causal engine cuts a prompt to leave room for the answer; the encoder-decoder one at max_length
        return generation_tokens(asked, max_new_tokens, LM_GENERATE_BATCH,
                                 max_length if seq2seq else max_length - max_new_tokens)
    if scoring == "letter":
        cued = [prompt_formats.letter_prompt(t) for t in asked]
        if seq2seq:
            return seq2seq_tokens(cued, [[""]] * len(cued), max_length)  # one decoder position
        return causal_option_tokens(cued, [[""]] * len(cued), max_length)  # the prompt's forward pass alone
    continuations = [[prompt_formats.option_continuation(o) for o in opt] for opt in opts]
    if seq2seq:
        return seq2seq_scoring_tokens(asked, continuations, LM_SCORE_BATCH, max_length)
    return causal_option_tokens(asked, continuations, max_length, LM_SCORE_BATCH)


def lm_pass_tokens(cfg: Config, model: str, analysis: str, prompts: RulePrompts, spec: str | None, sample: RuleData
                   ) -> tuple[int, Tokens]:
    """Questions asked and tokens of one pass of :data:`LM_PASSES` (:func:`lm_tokens`); an
    ablation's run with the context that is also a setting of Table 2 reads that setting's cache
    entry and costs nothing."""
    if analysis == "alignment":
        items, texts = alignment_prompts(prompts, sample)
        return len(items), lm_tokens(model, texts, [it.options for it in items], "letter", cfg.lm.max_length, 0)
    setting, new_tokens = PromptSetting.parse(spec), cfg.lm.cot_max_new_tokens
    variants = with_and_without_context(cfg, prompts, sample)
    if analysis == "setting":
        asks = [(prompts, sample, None)]
    elif analysis == "rationales":
        new_tokens = ANSWER_TOKENS  # rationale_systems reads short answers
        asks = []
        for p, s in variants.values():
            mains, by_variant = rationale_variants(s)
            asks += [(p, mains, rationales) for rationales in by_variant.values()]
    else:
        asks = [(p, s, None) for suffix, (p, s) in variants.items() if suffix or spec not in cfg.lm.settings]
    questions, tokens = 0, Tokens()
    for p, s, rationales in asks:
        asked = setting_prompts(p, setting, s, exclude_exemplar_items=cfg.lm.exclude_exemplar_items, rationales=rationales)
        questions += len(asked.items)
        tokens += lm_tokens(model, asked.texts, [it.options for it in asked.items], setting.scoring, cfg.lm.max_length,
                            new_tokens)
    return questions, tokens


def unifiedqa_source(item: MCItem) -> str:
    """A text-to-text model's UnifiedQA input for ``item``, as
    :func:`rcstudy.models.seq2seq.unifiedqa_source` writes it before cutting the context to fit."""
    head = f"{item.question} \\n " + " ".join(f"({chr(ord('a') + i)}) {o}" for i, o in enumerate(item.options))
    return f"{head} \\n {item.context}".lower() if item.context.strip() else head.lower()


def unifiedqa_tokens(items: Sequence[MCItem], cfg, *, train: bool) -> Tokens:
    """The tokens of a text-to-text model in UnifiedQA's format (``cfg``: its
    :class:`~rcstudy.models.seq2seq.Seq2SeqConfig`): trained to write each item's gold option,
    source and target forward and backward, every epoch; or scoring every option of each item
    (:func:`seq2seq_scoring_tokens`, in passes of its ``eval_batch_size``)."""
    sources = [unifiedqa_source(it) for it in items]
    if not train:
        return seq2seq_scoring_tokens(sources, [[o.lower() for o in it.options] for it in items], cfg.eval_batch_size,
                                      cfg.max_src_len)
    once = seq2seq_tokens(sources, [[it.options[it.label].lower()] for it in items], cfg.max_src_len, cfg.max_tgt_len,
                          train=True)
    return Tokens(train=round(once.train * cfg.epochs), train_target=round(once.train_target * cfg.epochs))


def fine_tuning_tokens(setup: EncoderSetup, train: Sequence[MCItem], scored: Sequence[MCItem], *,
                       trained: bool = True) -> Tokens:
    """The tokens of one fine-tuned model: trained on ``train`` (not where the ReClor chapter trains
    it: ``trained=False``) and scored on ``scored``; a text-to-text model in UnifiedQA's format."""
    from ...models.mc import MCConfig

    c = setup.cfg
    if isinstance(c, MCConfig):
        return Tokens(train=round(mc_tokens(train, "CQA", c.max_length) * c.epochs) if trained else 0,
                      forward=mc_tokens(scored, "CQA", c.max_length))
    labelled = [it for it in train if it.label is not None]
    return unifiedqa_tokens(labelled, c, train=True) + unifiedqa_tokens(scored, c, train=False)
