"""Metagraph generators of the MetaLogic chapter, cached: the feature model's predictions, fine-tuned
seq2seq models (All-at-Once, Multitask) and a causal LM prompted with solved examples.

Each result is cached on disk under its parameters and the data files' checksums (and the source
of this module and what it imports), so a table or prose edit in the chapter re-runs nothing here.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Mapping, Sequence

from ..cache import cached, fingerprint
from ..data import metalogic as ml
from ..data.metalogic import Metagraph, Prediction
from ..metrics import metalogic as mm
from ..prompts import metalogic as prompts
from ..runtime import Runtime
from . import metalogic_rules as rules

METHOD_PAIRS = {"once": prompts.once_pairs, "multitask": prompts.multitask_pairs}


def data_files() -> list:
    return [ml.metalogic_file(split) for split in ml.SPLITS]


def ids_key(graphs: Sequence[Metagraph]) -> str:
    return fingerprint([g.id for g in graphs])


# --- the feature model -------------------------------------------------------------------------

def feature_model(train: Sequence[Metagraph], seed: int = 0) -> rules.FeatureModel:
    """The logistic-regression feature model, fitted once per training set."""
    return cached("metalogic_feature_model", {"train": ids_key(train), "seed": seed},
                  lambda: rules.FeatureModel(seed).fit(list(train)), data_files=data_files())


def feature_predictions(train: Sequence[Metagraph], graphs: Sequence[Metagraph], seed: int = 0
                        ) -> dict[str, Prediction]:
    def compute():
        model = feature_model(train, seed)
        return {g.id: model.predict(g) for g in graphs}
    return cached("metalogic_feature_predictions", {"train": ids_key(train), "eval": ids_key(graphs), "seed": seed},
                  compute, data_files=data_files())


# --- seq2seq (All-at-Once, Multitask) ----------------------------------------------------------

def seq2seq_outputs(method: str, cfg, train: Sequence[Metagraph], evals: Mapping[str, Sequence[Metagraph]],
                    rt: Runtime, *, input_format: str = "paper", stop_after_minutes: float | None = None,
                    dev: Sequence[Metagraph] = ()) -> dict[str, dict]:
    """Raw generated text for each evaluation set, plus the training losses under ``"losses"``
    and the dev selection scores ``[(step, score), ...]`` under ``"selection"``.

    Once: ``{graph id: text}``. Multitask: ``{graph id: {"tree": text, "formulae": {sid: text},
    "degree": {sid: text}}}``. With ``dev`` passages and ``cfg.evaluations``, the checkpoint with
    the best official selection score on them is kept (else the last). Training is shared by
    every evaluation set and cached with its checkpoint; outputs are cached per set.
    """
    from ..models import seq2seq

    sources, targets = METHOD_PAIRS[method](train)
    trained = None
    selecting = bool(dev) and bool(cfg.evaluations)
    select_key = ids_key(dev) + input_format if selecting else ""

    def dev_score(candidate) -> float:
        return mm.selection_score(mm.evaluate(dev, parse_outputs(method, _decode(method, candidate, dev, input_format,
                                                                                  rt))))

    def model():
        nonlocal trained
        if trained is None:
            trained = seq2seq.train(sources, targets, cfg, rt, stop_after_minutes=stop_after_minutes,
                                    select=dev_score if selecting else None, select_key=select_key)
        return trained

    base = {"method": method, "cfg": asdict(cfg), "train": seq2seq.examples_fingerprint(sources, targets),
            "select": select_key}
    out = {}
    for name, graphs in evals.items():
        params = {**base, "eval": ids_key(graphs), "input_format": input_format}
        out[name] = cached("metalogic_seq2seq_outputs", params,
                           lambda graphs=graphs: _decode(method, model(), graphs, input_format, rt),
                           data_files=data_files())
    out["losses"] = cached("metalogic_seq2seq_losses", base, lambda: model().losses)
    out["selection"] = cached("metalogic_seq2seq_selection", base, lambda: model().selection)
    return out


def _decode(method: str, trained, graphs: Sequence[Metagraph], input_format: str, rt: Runtime) -> dict:
    from ..models import seq2seq

    if method == "once":
        texts = seq2seq.generate(trained, prompts.once_inputs(graphs, input_format), rt)
        return {g.id: t for g, t in zip(graphs, texts)}
    exs = prompts.multitask_examples(graphs, input_format)
    texts = seq2seq.generate(trained, [x.source for x in exs], rt)
    out = {g.id: {"tree": "", "formulae": {}, "degree": {}} for g in graphs}
    for x, text in zip(exs, texts):
        if x.task == "tree":
            out[x.graph]["tree"] = text
        else:
            out[x.graph][x.task][x.node] = text
    return out


def parse_outputs(method: str, outputs: Mapping[str, object]) -> dict[str, Prediction]:
    """Predictions from raw outputs (normalised first: WordPiece decoding spaces out the symbols)."""
    if method in ("once", "fewshot"):
        return {gid: ml.parse_once(ml.normalise(text)) for gid, text in outputs.items()}
    return {gid: ml.prediction_from_parts(ml.normalise(o["tree"]),
                                          {s: ml.normalise(t) for s, t in o["formulae"].items()},
                                          {s: ml.normalise(t) for s, t in o["degree"].items()})
            for gid, o in outputs.items()}


# --- few-shot generation with a causal LM ------------------------------------------------------

def fewshot_outputs(model_name: str, shots: Sequence[Metagraph], graphs: Sequence[Metagraph], rt: Runtime,
                    max_new_tokens: int = 160) -> dict[str, str]:
    def compute():
        from ..models.lm import load_lm

        lm = load_lm(model_name, rt)
        texts = lm.generate([prompts.fewshot_prompt(shots, g) for g in graphs], max_new_tokens, stop=["\n"])
        return {g.id: t for g, t in zip(graphs, texts)}

    params = {"model": model_name, "shots": [g.id for g in shots], "eval": ids_key(graphs),
              "max_new_tokens": max_new_tokens, "prompt": fingerprint(prompts.FEWSHOT_INSTRUCTION)}
    return cached("metalogic_fewshot_outputs", params, compute, data_files=data_files())
