"""Generating the metagraph: how the generators were trained (the training note, their losses),
the few-shot row, Table 3 beside the paper's, the system the page discusses, and the claims about
what the models find."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ... import papers
from ...baselines import metagraph as gen
from ...claims import ClaimEvidence
from ...data import metalogic as ml
from ...data.metalogic import Metagraph, Prediction
from ...jobs import Outputs
from ...models.registry import split_revision
from ...prompts import metalogic as prompts
from ...report import paper_vs_ours
from .config import METHOD_NAMES, PAPER, Config, engine_config
from .intervals import PassageScores, macro_interval
from .predictors import Baselines
from .runs import Samples, fewshot_inputs
from .scores import OURS_NAMES, T3, confusion, means, score_frame
from ..section import Section

PAPER_BACKBONES = ("t5-large", "t5-11b")  # the paper's rows compare directly only with these
FewShotRows = dict[str, tuple[list[Metagraph], dict[str, Prediction]]]  # name → (its test passages, predictions)


@dataclass(frozen=True)
class Generated(Samples):
    """The fine-tuned generators of Table 3 from their jobs' outputs: each method's runs (one per
    seed), its parsed test predictions, and its row's name."""

    runs: dict[str, list[dict]]
    preds: dict[str, list[dict[str, Prediction]]]
    names: dict[str, str]


def generated(cfg: Config, samples: Samples, outputs: Outputs) -> Generated:
    t = cfg.seq2seq
    runs = {m: [outputs.of("generator_job", method=m, seed=s) for s in t.seeds] for m in t.methods}
    return Generated(samples.train, samples.test, samples.dev, runs,
                     {m: [gen.parse_outputs(m, r["test"]) for r in rs] for m, rs in runs.items()},
                     {m: f"{METHOD_NAMES[m]} ({t.model})" for m in t.methods})


# ---------------------------------------------------------------------------------------------
# How the generators were trained


@dataclass(frozen=True, kw_only=True)
class Training(Section):
    """The training note's facts, and each generator's training loss."""

    losses: dict[str, list[float]]  # "All-at-Once, seed 0" → training loss per step


def training_section(cfg: Config, g: Generated, tokenizer) -> Training:
    """What the generators were trained on and how, beside the paper's settings; their losses."""
    from ...models import seq2seq

    t, d = cfg.seq2seq, cfg.decoding
    steps_done = t.max_steps if t.max_steps is not None else engine_config(cfg, 0).total_steps(len(g.train))
    decoder_only = seq2seq.decoder_only(t.model)
    kept = {f"{METHOD_NAMES[m]}, seed {s}": max(r["selection"], key=lambda x: x[1])[0]
            for m, rs in g.runs.items() for s, r in zip(t.seeds, rs) if r["selection"]}
    facts = dict(
        metalogic_model=t.model,
        metalogic_architecture="a decoder-only language model, with the loss on the target tokens only"
        if decoder_only else "an encoder-decoder model",
        metalogic_batch_size=t.batch_size * t.grad_accum,
        metalogic_epochs_seen=steps_done * t.batch_size * t.grad_accum / len(g.train),
        metalogic_gen_max_len=d.gen_max_len,
        metalogic_trained_weights="every weight" if t.train_layers is None or not decoder_only
        else f"the top {t.train_layers} transformer block{'s' * (t.train_layers != 1)} only (the rest frozen)",
        metalogic_selection=(
            f"At {t.evaluations} evenly spaced steps the model decodes {len(g.dev)} dev passages, and the weights "
            f"with the best official selection score on them are kept (here: "
            f"{'; '.join(f'step {v} for {k}' for k, v in kept.items())})." if kept else
            "The last step's weights are used: there is no dev-based checkpoint selection."),
        metalogic_steps=steps_done, metalogic_examples_seen=steps_done * t.batch_size * t.grad_accum,
        metalogic_n_train_s2s=len(g.train), metalogic_n_test_eval=len(g.test), metalogic_n_seeds=len(t.seeds),
        metalogic_lr=t.lr, metalogic_optimizer=t.optimizer, metalogic_input_format=d.input_format,
        metalogic_max_src_len=t.max_src_len,
        metalogic_methods=", ".join(METHOD_NAMES[m] for m in t.methods) or "none",
        metalogic_paper_epochs=papers.value(PAPER, "§6.1", "all", "epochs"),
        metalogic_paper_lr=papers.value(PAPER, "§6.1", "all", "learning rate"),
        metalogic_paper_bs=papers.value(PAPER, "§6.1", "T5-large", "batch size"),
        metalogic_paper_seeds=papers.value(PAPER, "§6.1", "all", "seeds (T5-large)"),
        metalogic_trunc_src=100 * seq2seq.truncation_rate(tokenizer, prompts.once_inputs(g.train), t.max_src_len),
        metalogic_trunc_tgt=100 * seq2seq.truncation_rate(tokenizer, prompts.once_targets(g.train), t.max_tgt_len))
    losses = {f"{METHOD_NAMES[m]}, seed {s}": r["losses"] for m, rs in g.runs.items() for s, r in zip(t.seeds, rs)}
    return Training(facts=facts, losses=losses)


# ---------------------------------------------------------------------------------------------
# The few-shot row


def fewshot_facts(texts: Mapping[str, str], preds: Mapping[str, Prediction], level: float = 0.95) -> dict:
    """How often the few-shot answers have the metagraph's form: the share that writes a ``$tree$``
    slot at all (``metalogic_fewshot_parsed``), with its exact binomial interval over the passages
    (a share of a handful of passages moves by whole eighths from one draw to the next), and the
    share from which the parser reads at least one step (``a -> b`` or ``a => b``) — a ``$tree$``
    slot followed by a list of sentence ids is not a proof."""
    from scipy.stats import binomtest

    n = len(texts)
    tree = sum("$tree$" in ml.normalise(t) for t in texts.values())
    steps = sum(bool(preds[gid].steps) for gid in texts)
    out = {"metalogic_fewshot_n": n, "metalogic_fewshot_tree_count": tree, "metalogic_fewshot_steps_count": steps,
           "metalogic_fewshot_example": _example_answer(texts)}
    if n:
        ci = binomtest(tree, n).proportion_ci(level, method="exact")
        out |= {"metalogic_fewshot_parsed": 100 * tree / n, "metalogic_fewshot_steps": 100 * steps / n,
                "metalogic_fewshot_parsed_ci": f"[{100 * ci.low:.0f}, {100 * ci.high:.0f}] %"}
    else:
        out |= {"metalogic_fewshot_parsed": float("nan"), "metalogic_fewshot_steps": float("nan"),
                "metalogic_fewshot_parsed_ci": "no interval (not run)"}
    return out


def _example_answer(texts: Mapping[str, str], chars: int = 60) -> str:
    """The start of the first answer, on one line (the page quotes it as plain text)."""
    if not texts:
        return "(none)"
    text = " ".join(next(iter(texts.values())).split())
    return text if len(text) <= chars else text[:chars].rstrip() + " …"


def fewshot_rows(cfg: Config, splits, texts: Mapping[str, str] | None) -> tuple[FewShotRows, dict]:
    """The few-shot row from its job's answers (``texts``; None when no model is prompted), and its facts."""
    f = cfg.fewshot
    if not f.model:
        return {}, fewshot_facts({}, {}) | {"metalogic_fewshot_model": "no model"}
    _, graphs = fewshot_inputs(cfg, splits)
    preds = gen.parse_outputs("fewshot", texts)
    name = f"Few-shot ({f.model}, {f.shots} shot{'s' if f.shots != 1 else ''})"
    return {name: (graphs, preds)}, fewshot_facts(texts, preds) | {"metalogic_fewshot_model": f.model}


# ---------------------------------------------------------------------------------------------
# Table 3, and the system the page discusses


@dataclass(frozen=True, kw_only=True)
class Table3(Section):
    """Table 3 beside the paper's, the few-shot row, the system the page discusses, and every
    system's per-passage scores on test (the claims' evidence)."""

    fewshot: FewShotRows
    means: pd.DataFrame  # our systems' mean scores, Table 3's columns
    main_label: str
    main_graphs: list[Metagraph]
    main_preds: dict[str, Prediction]
    confusions: dict[str, pd.DataFrame]  # system → gold × predicted certainty
    scores: dict[str, PassageScores]  # each fine-tuned method and the feature model on its test passages
    refs: dict[str, PassageScores]  # the trivial structure and the empty prediction on test


def table3(splits, g: Generated, fewshot: FewShotRows, base: Mapping[str, Mapping]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 3, paper beside ours, with the test passages each of our rows is scored on; and our
    rows' mean scores."""
    test = splits["test"]
    rows, n_rows = [], {}
    for m, name in g.names.items():
        rows.append(score_frame({name: g.preds[m]}, g.test))
        n_rows[name] = len(g.test)
    for name, (graphs, preds) in fewshot.items():
        rows.append(score_frame({name: [preds]}, graphs))
        n_rows[name] = len(graphs)
    rows.append(score_frame({OURS_NAMES[k]: [base[k]] for k in OURS_NAMES}, test))
    n_rows.update({v: len(test) for v in OURS_NAMES.values()})
    ours = pd.concat(rows)
    table = paper_vs_ours(papers.table(PAPER, "Table 3")[T3], ours)
    table[("test passages", "")] = [n_rows.get(r, "whole split") for r in table.index]
    return table, means(ours)


def main_facts(cfg: Config, g: Generated, label: str, n: int, ours: pd.DataFrame) -> dict:
    """The discussed system's scores (``ours``: the mean scores) and how many distinct outputs it wrote."""
    methods = cfg.seq2seq.methods
    if methods:  # Multitask outputs are mappings of parts: compare them as text
        outputs = g.runs[methods[0]][0]["test"].values()
        distinct = len({o if isinstance(o, str) else json.dumps(o, sort_keys=True) for o in outputs})
    else:
        distinct = n
    facts = dict(
        metalogic_main_label=label, metalogic_main_distinct=distinct, metalogic_main_n=n,
        metalogic_training_remark=(
            "Compare these scores with the paper's rows of the same backbone size."
            if split_revision(cfg.seq2seq.model)[0] in PAPER_BACKBONES else
            "This profile fine-tunes a small model on a fraction of one pass over the training passages, which "
            "mostly teaches the output format. Read its scores against the trivial and empty rows, which show what "
            "the format and a structural prior alone earn, not against T5."))
    for col, key in (("Node F1", "node_f1"), ("Step All", "step_all"), ("Step F1", "step_f1"),
                     ("Formula F1", "formula_f1"), ("Cert. All", "cert_all"), ("Cert. F1*", "cert_macro_f1"),
                     ("Overall All", "overall_all")):
        facts[f"metalogic_main_{key}"] = float(ours.loc[label, col])
    return facts


def table3_claims(scores: Mapping[str, PassageScores], refs: Mapping[str, PassageScores],
                  main: str) -> tuple[ClaimEvidence, ...]:
    """Certainty is hard, nodes are found but not every step, formulae score around 60 %; every
    score with its interval over the test passages, each compared with a trivial predictor on the
    same passages. MetGen is not trained here."""
    macro = {n: macro_interval(s) for n, s in scores.items()}
    cert_over = {n: s.paired(refs["trivial"], "Cert. Acc") for n, s in scores.items()}
    node, step_all = scores[main].interval("Node F1"), scores[main].interval("Step All")
    node_over = scores[main].paired(refs["trivial"], "Node F1")
    formula = {n: s.interval("Formula F1") for n, s in scores.items()}
    formula_over = {n: s.paired(refs["empty"], "Formula F1") for n, s in scores.items()}
    return (
        ClaimEvidence("certainty-hard", {"cert_macro": macro, "cert_over_trivial": cert_over},
                      "; ".join(f"{n}: Cert. F1* {macro[n]}, Cert. Acc − trivial {cert_over[n]}" for n in scores)),
        ClaimEvidence("nodes-high-steps-low", {"node": node, "step_all": step_all, "node_over_trivial": node_over},
                      f"{main}: Node F1 {node} ({node_over} over the trivial structure), Step All {step_all}"),
        ClaimEvidence("formula-around-60", {"formula": formula, "formula_over_empty": formula_over},
                      "; ".join(f"{n}: Formula F1 {formula[n]}, − empty {formula_over[n]}" for n in scores)),
        ClaimEvidence("metgen-best", None, "not run in this profile"))


def table3_section(cfg: Config, splits, g: Generated, fewshot_texts: Mapping[str, str] | None,
                   baselines: Baselines) -> Table3:
    """Table 3 (the fine-tuned methods, the few-shot row from its job's answers, the predictors
    without a pretrained model), the system the page discusses (the first method's first seed,
    else the feature model) with its certainty confusions, and the claims."""
    base, test = baselines.predictions, splits["test"]
    fewshot, facts = fewshot_rows(cfg, splits, fewshot_texts)
    table, ours = table3(splits, g, fewshot, base)
    methods = cfg.seq2seq.methods
    label, graphs, preds = ((g.names[methods[0]], g.test, g.preds[methods[0]][0]) if methods
                            else (OURS_NAMES["features"], test, base["features"]))
    scores = {g.names[m]: PassageScores(g.test, g.preds[m]) for m in methods}
    scores[OURS_NAMES["features"]] = PassageScores(test, [base["features"]])
    refs = {k: PassageScores(test, [base[k]]) for k in ("trivial", "empty")}
    return Table3(tables={"metalogic_table3": table}, facts=facts | main_facts(cfg, g, label, len(graphs), ours),
                  claims=table3_claims(scores, refs, label), fewshot=fewshot, means=ours, main_label=label,
                  main_graphs=graphs, main_preds=preds, scores=scores, refs=refs,
                  confusions={label: confusion(graphs, preds), OURS_NAMES["features"]: confusion(test, base["features"])})
