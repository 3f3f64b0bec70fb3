"""The metrics, checked (the text forms under the generator's tokenizer, the metric's variants on
the trivial predictors), and the predictors without a pretrained model (Tables 13, 20–22 and a
feature model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ... import papers
from ...baselines import metalogic_rules as rules
from ...data import metalogic as ml
from ...data.metalogic import Metagraph, Prediction
from ...metrics import metalogic as mm
from ...prompts import metalogic as prompts
from .config import PAPER, Config
from .scores import COLUMN_NAMES, means, score_frame
from ..section import Section


def rule_window(train: Sequence[Metagraph], windows=(3, 5, 8, 12, None)) -> int | None:
    """The indicator window with the best certainty accuracy on the training passages."""
    def acc(w):
        return np.mean([ml.degree_of(rules.unary_operators(n.text, w)) == n.degree
                        for g in train for n in g.nodes.values()])
    return max(windows, key=acc)


def baseline_predictions(graphs: Sequence[Metagraph], rule_cfg: rules.RuleConfig) -> dict[str, dict[str, Prediction]]:
    return {"empty": {g.id: rules.empty_prediction(g) for g in graphs},
            "trivial": {g.id: rules.trivial_prediction(g) for g in graphs},
            "rules": {g.id: rules.rule_prediction(g, rule_cfg) for g in graphs}}


def roundtrip_scores(tokenizer, graphs: Sequence[Metagraph]) -> dict[str, float]:
    """Scores of gold → linearise → encode → decode → normalise → parse (must all be 100)."""
    targets = prompts.once_targets(graphs)
    decoded = tokenizer.batch_decode(tokenizer(targets)["input_ids"], skip_special_tokens=True)
    return mm.evaluate(graphs, {g.id: ml.parse_once(ml.normalise(t)) for g, t in zip(graphs, decoded)})


def length_table(tokenizer, splits: Mapping[str, Sequence[Metagraph]], limits=(128, 256, 512)) -> pd.DataFrame:
    """Share of each input/target format longer than each token limit (under ``tokenizer``)."""
    gs = [g for s in splits.values() for g in s]
    texts = {
        "Once input (ids + variables)": prompts.once_inputs(gs),
        "Once input (released inference)": prompts.once_inputs(gs, "released"),
        "Once target": prompts.once_targets(gs),
        "TREE input": [prompts.multitask_examples([g])[0].source for g in gs],
    }
    rows = {}
    for name, xs in texts.items():
        lengths = np.array([len(x) for x in tokenizer(xs)["input_ids"]])
        rows[name] = {"median tokens": int(np.median(lengths)), "max tokens": int(lengths.max()),
                      **{f"> {n}": 100 * float((lengths > n).mean()) for n in limits}}
    return pd.DataFrame.from_dict(rows, orient="index")


# ---------------------------------------------------------------------------------------------
# The metrics, checked


@dataclass(frozen=True, kw_only=True)
class Metrics(Section):
    """The text forms checked under the generator's tokenizer, and the trivial predictors' scores
    under each variant of the metric."""

    tokenizer: object  # the generator's tokenizer (the training note counts truncation with it)
    window: int | None  # the rules' indicator window, chosen on train (None: the whole sentence)
    predictions: dict[str, dict[str, Prediction]]  # empty, trivial, rules: test predictions


def metrics_section(cfg: Config, splits: Mapping[str, Sequence[Metagraph]]) -> Metrics:
    """The text forms under the generator's tokenizer (the target must survive it), and the metric
    variants on the trivial predictors."""
    from ...models.loading import load_tokenizer

    train, test = splits["train"], splits["test"]
    model = cfg.seq2seq.model
    tokenizer = load_tokenizer(model)
    roundtrip = roundtrip_scores(tokenizer, train)
    if min(roundtrip.values()) != 100.0:  # gold → text → tokens → text → parse must be lossless
        raise AssertionError(f"the target text does not survive the {model} tokenizer: {roundtrip}")
    window = rule_window(train)
    base = baseline_predictions(test, rules.RuleConfig(window=window))
    variants = pd.DataFrame({
        (name, variant): {COLUMN_NAMES[k]: v for k, v in mm.evaluate(test, base[name], variant).items()
                          if k in ("formula_all", "overall_all", "formula_f1")}
        for name in ("empty", "trivial") for variant in mm.VARIANTS}).T.round(2)
    return Metrics(tables={"metalogic_lengths": length_table(tokenizer, splits).round(1),
                           "metalogic_metric_variants": variants},
                   captions={"metalogic_lengths": f"Length of each text form in {model} tokens, and the share (%) "
                                                  "longer than each limit"},
                   facts=dict(metalogic_roundtrip_min=min(roundtrip.values()), metalogic_tokenizer=model),
                   tokenizer=tokenizer, window=window, predictions=base)


# ---------------------------------------------------------------------------------------------
# Predictors without a pretrained model


@dataclass(frozen=True, kw_only=True)
class Baselines(Section):
    """The predictors without a pretrained model on test: their predictions and mean scores."""

    predictions: dict[str, dict[str, Prediction]]  # empty, trivial, rules, features: test predictions
    means: pd.DataFrame  # their mean scores, Table 3's and Table 14's step columns


def baselines_section(splits: Mapping[str, Sequence[Metagraph]], metrics: Metrics,
                      features: Mapping[str, Prediction]) -> Baselines:
    """The trivial and rule-based predictors (:class:`Metrics`) and the feature model's test
    predictions (``features``, its job's), scored on test, and the facts."""
    test, window = splits["test"], metrics.window
    base = {**metrics.predictions, "features": dict(features)}
    scores = score_frame({k: [v] for k, v in base.items()}, test, [*mm.MAIN_COLUMNS, *mm.STEP_TYPE_COLUMNS])
    b = means(scores)
    facts = dict(
        metalogic_rule_window="the whole sentence" if window is None else f"the first {window} words",
        metalogic_trivial_node_f1=b.loc["trivial", "Node F1"], metalogic_trivial_step_f1=b.loc["trivial", "Step F1"],
        metalogic_trivial_cert_acc=b.loc["trivial", "Cert. Acc"], metalogic_rules_cert_acc=b.loc["rules", "Cert. Acc"],
        metalogic_empty_formula_f1=b.loc["empty", "Formula F1"],
        metalogic_features_formula_f1=b.loc["features", "Formula F1"],
        metalogic_features_macro=b.loc["features", "Cert. F1*"],
        metalogic_rules_vs_trivial="lower" if b.loc["rules", "Cert. Acc"] < b.loc["trivial", "Cert. Acc"] else "higher",
        **{f"metalogic_paper_once_{key}": papers.value(PAPER, "Table 3", "Once (large)", col)
           for key, col in (("node_f1", "Node F1"), ("step_f1", "Step F1"), ("cert_acc", "Cert. Acc"))})
    return Baselines(tables={"metalogic_baselines": scores},
                     captions={"metalogic_baselines": f"Predictors without a pretrained model, test split "
                                                      f"({len(test)} passages)"},
                     facts=facts, predictions=base, means=b)
