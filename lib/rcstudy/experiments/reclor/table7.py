"""Table 7: every family trained on (C, Q, A), the headline encoder also on (A) and (Q, A), on val,
val-EASY and val-HARD; whether each trained row learned (:mod:`rcstudy.learning`); accuracy by
question type (Figure 4); and the leaderboard files of the test predictions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ... import bias, exports, learning, papers, report
from ...baselines import ngram
from ...claims import ClaimEvidence
from ...data import reclor
from ...data.records import MCItem
from ...models.registry import split_revision
from ...report import md_text
from ...stats import bootstrap_ci, hierarchical_ci, hierarchical_difference, hierarchical_paired
from .config import BILSTM, NGRAM, P, Config, paper_row, row_label
from .dataset import side_by_side
from .easy_hard import correctness, seed_accuracies, summary
from .runs import Runner
from ..section import Section
from .work import Runs

#: What the full profile would spend on each row (:func:`rcstudy.plan.row_needs`), given :func:`full_profile_rows`.
FullProfile = Callable[[dict[str, dict]], dict[str, str]]
#: How the fastText rows were computed, as the page says it.
FASTTEXT_IMPLEMENTATIONS = {
    "fasttext": "the fastText library itself (its Python binding, supervised mode, default settings as the "
                "authors ran it; one thread, seeded)",
    "numpy": "a NumPy re-implementation of fastText's supervised mode (the fastText binding is not installed "
             "here; n-grams are not hashed into buckets and unseen n-grams are ignored)",
}


def table7(results: Mapping[tuple[str, str], np.ndarray], items: Sequence[MCItem], eh: bias.EasyHard,
           stand_in: str) -> pd.DataFrame:
    """Our Table 7 on val, val-EASY and val-HARD: mean ± sd over seeds (chance first)."""
    n_opt = np.mean([len(it.options) for it in items])
    rows = {"Chance (C, Q, A)": {"Val": 100 / n_opt, "Val-E": 100 / n_opt, "Val-H": 100 / n_opt}}
    for (family, fields), r in results.items():
        c = correctness(r, items)
        rows[row_label(family, fields, stand_in)] = {"Val": summary(seed_accuracies(c)),
                                                     "Val-E": summary(seed_accuracies(c, eh.easy)),
                                                     "Val-H": summary(seed_accuracies(c, eh.hard))}
    return pd.DataFrame(rows).T


def table7_side_by_side(ours: pd.DataFrame, keys: Sequence[tuple[str, str]], stand_in: str) -> pd.DataFrame:
    """Paper beside ours. EASY/HARD are Test-E/Test-H (hidden test) for the paper, Val-E/Val-H for us."""
    published = papers.table("reclor", "Table 7")
    wanted = {"Chance (C, Q, A)": "Chance (C, Q, A)"}
    wanted.update({row_label(f, x, stand_in): paper_row(f, x, stand_in) for f, x in keys})
    paper = pd.DataFrame({label: published.loc[row] if row in published.index else pd.Series(dtype=float)
                          for label, row in wanted.items()}).T
    paper = paper.rename(columns={"Test": "Test (hidden)", "Test-E": "EASY", "Test-H": "HARD"})
    paper = paper[["Val", "Test (hidden)", "EASY", "HARD"]]
    return side_by_side(paper, ours.rename(columns={"Val-E": "EASY", "Val-H": "HARD"}))


def type_accuracy(results: Mapping[str, np.ndarray], items: Sequence[MCItem], eh: bias.EasyHard) -> pd.DataFrame:
    """Accuracy (%, mean over seeds) per question type on EASY and HARD, long format."""
    types = np.array([it.meta.get("question_type") or "unknown" for it in items])
    rows = []
    for name, r in results.items():
        per_item = correctness(r, items).mean(axis=0)
        for subset, mask in (("EASY", eh.easy), ("HARD", eh.hard)):
            for t in reclor.QUESTION_TYPES:
                sel = mask & (types == t)
                rows.append({"model": name, "subset": subset, "type": t, "n": int(sel.sum()),
                             "accuracy": 100 * per_item[sel].mean() if sel.any() else np.nan})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class MainResults:
    """Table 7's runs on val, and the seed accuracies (%) on val, val-EASY and val-HARD."""

    runs: dict[tuple[str, str], np.ndarray]  # (family, fields) → (seeds, items, options) on val
    test: dict[str, np.ndarray]  # family → (seeds, items, options) on test (the exported ones)
    acc: dict[tuple[str, str], np.ndarray]
    acc_e: dict[tuple[str, str], np.ndarray]
    acc_h: dict[tuple[str, str], np.ndarray]
    losses: dict[tuple[str, str], list[np.ndarray]]  # the runs that report them: one curve per seed
    checks: dict[tuple[str, str], learning.LossCheck]  # did each of those runs learn?


def full_profile_rows(cfg: Config, keys: Sequence[tuple[str, str]]) -> dict[str, dict]:
    """Each trained row's jobs in the full profile, as :func:`rcstudy.plan.row_needs` selects them:
    the headline encoder as the full profile's headline, another encoder as the full profile's
    model of that name, the Bi-LSTM as its notebook job, each on the same input (every seed of
    it); a row the full profile does not run as such (a model or an input it leaves out) by its
    step alone."""
    full = Config.load("full")
    by_name = {split_revision(m)[0]: m for m in full.main_models}

    def selector(family: str, fields: str) -> dict:
        if family == BILSTM:
            return {"step": "notebook_job", "arguments": {"family": BILSTM, "fields": fields}}
        counterpart = full.headline if family == cfg.headline else by_name.get(split_revision(family)[0])
        if (counterpart, fields) in full.table7_runs():
            return {"step": "table7_job", "arguments": {"family": counterpart, "fields": fields}}
        return {"step": "table7_job"}

    return {row_label(f, x, cfg.stand_in): selector(f, x) for f, x in keys}


def main_results(cfg: Config, runs: Runs, val: Sequence[MCItem], eh: bias.EasyHard,
                 full_profile: FullProfile | None = None) -> MainResults:
    """Every Table 7 run on val (and on test, those whose predictions are exported), and whether
    each run that reports its losses learned; a row that did not says what the full profile would
    spend on it where ``full_profile`` is given."""
    on_val = {key: r["val"] for key, r in runs.table7.items()}
    losses = {key: r["losses"] for key, r in runs.table7.items() if "losses" in r}
    test = {family: r["test"] for (family, _), r in runs.table7.items() if "test" in r}
    correct = {k: correctness(r, val) for k, r in on_val.items()}
    labels = [it.label for it in val]
    checks = {key: learning.check(row_label(*key, cfg.stand_in), curves, len(val[0].options), correct=correct[key],
                                  scores=on_val[key], labels=labels, heldout="ReClor val")
              for key, curves in losses.items()}
    stuck = [key for key, c in checks.items() if not c.learned]
    if full_profile and stuck:
        checks = learning.with_full_profile(checks, full_profile(full_profile_rows(cfg, stuck)))
    return MainResults(on_val, test, {k: seed_accuracies(c) for k, c in correct.items()},
                       {k: seed_accuracies(c, eh.easy) for k, c in correct.items()},
                       {k: seed_accuracies(c, eh.hard) for k, c in correct.items()}, losses, checks)


def trained_rows(m: MainResults, val: Sequence[MCItem], eh: bias.EasyHard) -> pd.DataFrame:
    """The Table 7 runs that report their training losses: val-EASY and val-HARD accuracy with 95%
    bootstrap intervals over questions (each question's accuracy averaged over seeds), the
    training loss (first and final tenth of the steps), the held-out (val) loss against ln k and
    the val accuracy against chance (seeds, then questions, resampled): the row learned only when
    the whole val interval is above chance (:mod:`rcstudy.learning`)."""
    rows = {}
    for key, check in m.checks.items():
        per_item = correctness(m.runs[key], val).mean(axis=0)
        accuracy = {"val-EASY": bootstrap_ci(per_item[eh.easy], scale=100),
                    "val-HARD": bootstrap_ci(per_item[eh.hard], scale=100)}
        # the losses keep their three decimals: 1.364 against ln 4 = 1.386 is the whole point
        rows[check.name] = {"seeds": len(m.losses[key]), **{k: report.cell(v) for k, v in accuracy.items()},
                            **check.columns()}
    return pd.DataFrame.from_dict(rows, orient="index")


# --------------------------------------------------------------------------------------------
# The claims on Table 7's models


def scratch_claims(m: MainResults, val: Sequence[MCItem], chance: float) -> tuple[ClaimEvidence, ...]:
    """fastText and the Bi-LSTM against chance (seeds, then questions, resampled)."""
    ft = hierarchical_ci(correctness(m.runs[(NGRAM, "CQA")], val))
    bl = hierarchical_ci(correctness(m.runs[(BILSTM, "CQA")], val))
    return (ClaimEvidence("fasttext", {"ft": ft, "chance": chance}, f"fastText {ft}"),
            ClaimEvidence("bilstm", {"bl": bl, "chance": chance}, f"Bi-LSTM {bl}"))


def input_claims(cfg: Config, m: MainResults, item: Mapping[str, np.ndarray]) -> tuple[ClaimEvidence, ...]:
    """What the question and the context add to the headline encoder: paired gains between its
    inputs, on the same questions."""
    model = cfg.headline
    if not {"A", "QA"} <= set(item):
        return tuple(ClaimEvidence(id, None, f"{model} is not trained on (A) and (Q, A) here (partial_inputs)")
                     for id in ("question-adds-little", "context-adds-a-lot"))
    main = {f: m.acc[(model, f)].mean() for f in item}
    question, context = hierarchical_paired(item["QA"], item["A"]), hierarchical_paired(item["CQA"], item["QA"])
    return (ClaimEvidence("question-adds-little", {"gain": {model: question}},
                          f"(A) {main['A']:.1f}%, (Q, A) {main['QA']:.1f}%: (Q, A) − (A) {question}",
                          rests_on=rows_of(cfg, m, "A", "QA")),
            ClaimEvidence("context-adds-a-lot", {"gain": {model: context}},
                          f"(Q, A) {main['QA']:.1f}%, (C, Q, A) {main['CQA']:.1f}%: (C, Q, A) − (Q, A) {context}",
                          rests_on=rows_of(cfg, m, "QA", "CQA")))


def rows_of(cfg: Config, m: MainResults, *inputs: str) -> tuple[str, ...]:
    """The trained rows of the headline encoder on ``inputs`` (those that report their losses)."""
    return tuple(m.checks[(cfg.headline, f)].name for f in inputs if (cfg.headline, f) in m.checks)


def headline_claims(cfg: Config, m: MainResults, val: Sequence[MCItem], eh: bias.EasyHard) -> tuple[ClaimEvidence, ...]:
    """The headline encoder on EASY against HARD, on HARD against chance, and by input. Its
    (seeds, questions) correctness: intervals resample seeds, then questions."""
    model = cfg.headline
    item = {f: correctness(m.runs[(model, f)], val) for f in ("A", "QA", "CQA") if (model, f) in m.runs}
    e, h = m.acc_e[(model, "CQA")].mean(), m.acc_h[(model, "CQA")].mean()
    gap = hierarchical_difference(item["CQA"][:, eh.easy], item["CQA"][:, eh.hard])
    hard = hierarchical_ci(item["CQA"][:, eh.hard]) if eh.hard.any() else None
    return (ClaimEvidence("easy-vs-hard", {"gap": gap}, f"EASY {e:.1f}%, HARD {h:.1f}%: EASY − HARD {gap}",
                          rests_on=rows_of(cfg, m, "CQA")),
            ClaimEvidence("hard-near-chance", {"hard": hard} if hard is not None else None,
                          f"HARD {hard}" if hard is not None else "no HARD question in val",
                          rests_on=rows_of(cfg, m, "CQA")),
            *input_claims(cfg, m, item))


def table7_arithmetic_gap() -> float:
    """Largest |Test − (EASY share · Test-E + HARD share · Test-H)| over the model rows of the
    published Table 7 (the people and the ceiling rows left out)."""
    t7 = papers.table(P, "Table 7").drop(["Graduate Students (C, Q, A)", "Ceiling Performance (C, Q, A)"])
    share = papers.value(P, "Table 6", "Union", "Number") / papers.value(P, "§3.2", "test", "items")
    return float((share * t7["Test-E"] + (1 - share) * t7["Test-H"] - t7["Test"]).abs().max())


# --------------------------------------------------------------------------------------------
# The section


@dataclass(frozen=True, kw_only=True)
class Table7(Section):
    """Table 7 beside the paper's, whether each trained row learned (by its name: the claims
    resting on it read it), and the figures' data."""

    checks: dict[str, learning.LossCheck]
    losses: dict[str, list[np.ndarray]]  # trained row → one loss curve per seed
    bars: pd.DataFrame  # long: Table 7 row, subset (EASY/HARD), accuracy (mean over seeds)
    by_type: pd.DataFrame  # long: (C, Q, A) model, subset, question type, n, accuracy (Figure 4)


def table7_facts(cfg: Config, runner: Runner, eh: bias.EasyHard, m: MainResults) -> dict:
    """What the prose around Table 7 quotes."""
    described = [f"**{md_text(row_label(f, x, cfg.stand_in))}**: "
                 f"{md_text(cfg.describe_run(f, x, len(runner.train_items(f, x))))}" for f, x in cfg.table7_runs()]
    model = cfg.headline
    return {
        "reclor_t7_trained": Markdown("; ".join(described)),
        "reclor_n_val_easy": int(eh.easy.sum()), "reclor_n_val_hard": int(eh.hard.sum()),
        "reclor_main_e": m.acc_e[(model, "CQA")].mean(), "reclor_main_h": m.acc_h[(model, "CQA")].mean(),
        "reclor_main_v": m.acc[(model, "CQA")].mean(),
        "reclor_ft_e": m.acc_e[(NGRAM, "CQA")].mean(), "reclor_ft_h": m.acc_h[(NGRAM, "CQA")].mean(),
        "reclor_t7_warnings": Markdown(md_text(learning.warnings_text(list(m.checks.values())))),
        "reclor_fasttext_impl": Markdown(md_text(FASTTEXT_IMPLEMENTATIONS[ngram.default_backend()])),
        "reclor_circular": Markdown(md_text(f"{model} is also one of the option-only models that define EASY, so "
                                            "its (A) row is low on HARD partly by construction."
                                            if model in cfg.bias_models else "")),
    }


def table7_section(cfg: Config, runner: Runner, m: MainResults, val: Sequence[MCItem], eh: bias.EasyHard) -> Table7:
    """Table 7 beside the paper's, the paper's whole table, the trained rows, the EASY/HARD bars,
    accuracy by question type and the claims on the models."""
    keys = cfg.table7_runs()
    tables = {"reclor_table7": table7_side_by_side(table7(m.runs, val, eh, cfg.stand_in), keys, cfg.stand_in),
              "reclor_table7_paper": papers.table(P, "Table 7"),
              "reclor_trained": trained_rows(m, val, eh)}
    bars = pd.DataFrame([{"model": row_label(f, x, cfg.stand_in), "subset": s, "accuracy": v.mean()}
                         for (f, x) in keys for s, v in (("EASY", m.acc_e[(f, x)]), ("HARD", m.acc_h[(f, x)]))])
    cqa = {row_label(f, x, cfg.stand_in): r for (f, x), r in m.runs.items() if x == "CQA"}
    gap = table7_arithmetic_gap()
    claims = (*scratch_claims(m, val, 100 / len(val[0].options)), *headline_claims(cfg, m, val, eh),
              ClaimEvidence("table7-arithmetic", {"gap": gap}, f"largest gap {gap:.2f} points"))
    return Table7(tables=tables, facts=table7_facts(cfg, runner, eh, m), claims=claims,
                  checks={c.name: c for c in m.checks.values()},
                  losses={m.checks[key].name: curves for key, curves in m.losses.items()},
                  bars=bars, by_type=type_accuracy(cqa, val, eh))


# --------------------------------------------------------------------------------------------
# The leaderboard files


def leaderboard_file_name(family: str, seed: int) -> str:
    """The leaderboard file of a family's (C, Q, A) run with one seed."""
    return f"reclor_test_preds_{exports.safe_name(f'{family}_CQA_seed{seed}')}.npy"


def leaderboard_section(cfg: Config, m: MainResults, test: Sequence[MCItem]) -> Section:
    """Write each exported family's first-seed test predictions; the table of files written."""
    rows = {}
    for family, scores in m.test.items():
        answers = reclor.leaderboard_array(test, scores[0].argmax(axis=1))
        path = exports.write_npy(leaderboard_file_name(family, cfg.seeds[0]), answers)
        rows[family] = {"file": path.name, "predictions": len(answers)}
    text = ("one such file from its first seed. The files are in the book's exports folder." if test else
            "one such file from its first seed, but this data source has no test split, so none is written here.")
    return Section(tables={"reclor_test_files": pd.DataFrame.from_dict(rows, orient="index",
                                                                        columns=["file", "predictions"])},
                   facts={"reclor_leaderboard_text": Markdown(text)})
