"""The systems' sections of the page: the rule-based baselines' variants, the readers' training
curves, whether each trained row learned, and the main results (Table 3) with the claims they test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ... import learning, papers
from ...baselines import lexical
from ...baselines.readers import READERS
from ...claims import ClaimEvidence
from ...models.registry import split_revision
from ...report import md_text, paper_vs_ours
from ...stats import bootstrap_ci, hierarchical_difference
from .config import P, Config
from .data import LogiQAData
from .predictions import SPLIT_COLUMNS, Predictions, Score, detail_table, paired_gap, results_table, score
from ..section import Section
from .systems import Systems

ROW_NAMES = {"bert-base-uncased": "BERT", "roberta-base": "RoBERTa"}  # our systems that play a paper row

# --------------------------------------------------------------------------------------------
# Rule-based baselines and the readers trained from scratch


def word_matching_section(data: LogiQAData) -> Section:
    """Every word-matching variant on Test and Eval, and what tie-breaking alone does on Eval."""
    grid = pd.DataFrame(lexical.word_matching_grid(data.splits["en-test"])).set_index("variant")[["accuracy"]]
    grid["Eval accuracy"] = pd.DataFrame(lexical.word_matching_grid(data.splits["en-eval"])).set_index("variant")["accuracy"]
    grid = grid.rename(columns={"accuracy": "Test accuracy"}).sort_values("Test accuracy")
    ties = grid.reset_index()
    ties["base"] = ties["variant"].str.rsplit("/", n=1).str[0]
    tie_gap = ties.pivot_table(index="base", columns=ties["variant"].str.rsplit("/", n=1).str[1], values="Eval accuracy")
    facts = {
        "logiqa_wm_lo": grid["Test accuracy"].min(),
        "logiqa_wm_hi": grid["Test accuracy"].max(),
        "logiqa_tie_gap": float((tie_gap["random"] - tie_gap["first"]).abs().max()),
        "logiqa_tie_random_wins": f"{int((tie_gap['random'] > tie_gap['first']).sum())} of the {len(tie_gap)}",
    }
    return Section(tables={"logiqa_wm_grid": grid.round(2)}, facts=facts)


@dataclass(frozen=True, kw_only=True)
class ReaderCurves(Section):
    """Each from-scratch reader's Eval accuracy after every epoch."""

    curves: dict[str, list[list[float]]]  # reader → Eval accuracy per epoch, one list per seed


def reader_curves_section(s: Systems) -> ReaderCurves:
    return ReaderCurves(curves={r.name: r.extra["dev_curves"] for r in s.readers})


# --------------------------------------------------------------------------------------------
# Did each trained row learn?


@dataclass(frozen=True, kw_only=True)
class Learning(Section):
    """Whether each trained row learned (its Test accuracy against chance), and its training losses."""

    checks: dict[str, learning.LossCheck]  # trained row → its check: the claims resting on it read it
    losses: dict[str, list]  # trained row → one training-loss curve per seed


def full_profile_rows(cfg: Config, s: Systems) -> dict[str, dict]:
    """Each trained row's jobs in the full profile, as :func:`rcstudy.plan.row_needs` selects them:
    the readers and ablations by name, the main encoder as the full profile's main encoder, an
    extra encoder by model, the transfer rows by row; a row the full profile does not run as such
    (a reader, an ablation or an extra model it leaves out) by its step alone."""
    full = Config.load("full")

    def rows(step: str, key: str, value, among) -> dict:
        return {"step": step, "arguments": {key: value}} if value in among else {"step": step}

    out = {READERS[n][0]: rows("reader_job", "name", n, full.readers.names) for n in cfg.readers.names}
    out |= {x.name: rows("encoder_job", "model", x.name, full.encoder.extra_models) for x in s.extra}
    out[s.main.name] = {"step": "encoder_job", "arguments": {"model": full.encoder.model}}
    out |= {x.name: rows("ablation_job", "name", x.name, full.ablations) for x in s.ablations[1:]}
    out |= {x.name: {"step": "transfer_job", "arguments": {"row": row}} for row, x in enumerate(s.transfer[1:])}
    return out


def learning_section(cfg: Config, s: Systems, data: LogiQAData,
                     full_profile: Callable[[dict[str, dict]], dict[str, str]] | None) -> Learning:
    """The trained rows' loss checks (:meth:`~.systems.Systems.loss_checks`); ``full_profile``: given
    :func:`full_profile_rows` of the rows that did not learn, what the full profile would spend on
    each, said in their warnings and in the claims resting on them."""
    checks = s.loss_checks(data)
    stuck = {c.name for c in checks.values() if not c.learned}
    if full_profile and stuck:
        checks = learning.with_full_profile(checks, full_profile(
            {row: sel for row, sel in full_profile_rows(cfg, s).items() if row in stuck}))
    return Learning(tables={"logiqa_trained": learning.table(list(checks.values()))},
                    facts={"logiqa_loss_warnings": Markdown(md_text(learning.warnings_text(list(checks.values()))))},
                    checks=checks, losses={x.name: x.extra["losses"] for x in s.everything if x.extra.get("losses")})


# --------------------------------------------------------------------------------------------
# Main results (Table 3)


@dataclass(frozen=True, kw_only=True)
class MainResults(Section):
    """Table 3 beside the paper's, each Table 3 row's Test score, and the bars of the comparison."""

    acc: dict[str, Score]  # Table 3 row → its English Test score
    accuracy_bars: pd.DataFrame  # English Test, paper and ours, per Table 3 row


def whole(x: float) -> float | int:
    """A whole number as an int, so that ``1.0`` epochs read as ``1``."""
    return int(x) if float(x).is_integer() else x


def setting_facts(cfg: Config, s: Systems, profile: str | None) -> dict:
    """How the trained rows were trained and scored, in words (the "how our setting differs" notes)."""
    enc = cfg.encoder
    sizes = {"reader training questions": cfg.readers.n_train, "encoder training questions": enc.n_train,
             "Eval questions scored by the encoder": cfg.sizes.n_dev,
             "Test questions for the ablations and transfer": cfg.sizes.n_test_sub,
             "Test questions the zero-shot LM scores": cfg.lm.n_test,
             "ReClor questions for transfer": cfg.transfer.n_source}
    cut = [f"{n} {what}" for what, n in sizes.items() if n is not None]
    run = f"This {profile} run" if profile else "This run"
    return {
        "logiqa_reader_train": s.readers[0].trained_on,
        "logiqa_reader_vocab": s.readers[0].extra["vocab"],
        "logiqa_model": enc.model,
        "logiqa_lm": cfg.lm.model,
        "logiqa_plm_train": s.main.trained_on,
        "logiqa_plm_sched": f"{whole(enc.epochs)} epoch(s), lr {enc.lr}, batch {enc.batch_size}, "
                            f"at most {enc.max_length} tokens",
        "logiqa_source_sched": f"{whole(cfg.transfer.source_epochs)} epoch(s), lr {cfg.transfer.source_lr}, "
                               f"batch {cfg.transfer.source_batch_size}",
        "logiqa_seeds": len(enc.seeds),
        "logiqa_dev_n": int(s.main.evaluated("en-eval").sum()),
        "logiqa_sizes_text": (f"{run} subsamples the trained rows: " + ", ".join(cut) + " (the full profile uses all "
                              "of them)." if cut else f"{run} trains and scores every row on all of its data."),
    }


def table3(s: Systems, data: LogiQAData) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ours in Table 3's rows and columns (MeanSD cells), and the paper's Table 3."""
    rows = {x.name: ROW_NAMES.get(split_revision(x.name)[0]) for x in s.table3}  # a pinned Hub id plays its row too
    name_map = {x.name: rows[x.name] or x.name for x in s.table3}
    name_map.update({x.name: f"{x.name} (fine-tuned)" for x in [s.main, *s.extra] if not rows.get(x.name)})
    ours = results_table(s.table3, data, name_map=name_map)
    ours.loc["Random (theoretical)"] = pd.Series({SPLIT_COLUMNS[k]: 100 * lexical.uniform_expected_accuracy(v)
                                                  for k, v in data.splits.items()})
    return ours, papers.table(P, "Table 3")


def accuracy_bars(ours: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """English Test accuracy per Table 3 row that we score: the paper's (NaN: not its row) and ours."""
    rows = [r for r in ours.index if pd.notna(ours.loc[r, "LogiQA Test"])]
    return pd.DataFrame({"paper": [paper["LogiQA Test"].get(r, np.nan) for r in rows],
                         "ours": [getattr(v, "mean", v) for v in ours.loc[rows, "LogiQA Test"]]}, index=rows)


def best_reader(s: Systems, acc: dict[str, Score]) -> Predictions:
    return max(s.readers, key=lambda r: acc[r.name].seeds.mean)


def lm_facts(s: Systems, data: LogiQAData) -> dict:
    """The zero-shot LM under both of lm-evaluation-harness's accuracies, and why they differ:
    a summed log-likelihood favours options with fewer tokens, which ``acc_norm`` corrects."""
    keep = s.lm.evaluated("en-test")
    gold = data.gold("en-test")[keep]
    acc = s.lm.preds["en-test"][0][keep] == gold
    norm = s.lm.extra["acc_norm"][0][keep] == gold
    items = [it for it, k in zip(data.splits["en-test"], keep) if k]
    shortest = np.array([int(np.argmin([len(o) for o in it.options])) for it in items])
    ci_acc, ci_norm = bootstrap_ci(acc.astype(float), scale=100), bootstrap_ci(norm.astype(float), scale=100)
    return {
        "logiqa_lm_n": int(keep.sum()),
        "logiqa_lm_acc": f"{ci_acc.estimate:.1f}% [{ci_acc.low:.1f}, {ci_acc.high:.1f}]",
        "logiqa_lm_acc_norm": f"{ci_norm.estimate:.1f}% [{ci_norm.low:.1f}, {ci_norm.high:.1f}]",
        "logiqa_lm_picks_shortest": 100 * float(np.mean(s.lm.preds["en-test"][0][keep] == shortest)),
        "logiqa_lm_norm_picks_shortest": 100 * float(np.mean(s.lm.extra["acc_norm"][0][keep] == shortest)),
        "logiqa_gold_shortest": 100 * float(np.mean(gold == shortest)),
    }


def results_facts(s: Systems, acc: dict[str, Score]) -> dict:
    sw_ci, best = acc["Sliding Window"].ci, best_reader(s, acc)
    return {
        "logiqa_wm_test": acc["Word Matching"].seeds.mean,
        "logiqa_sw_test": acc["Sliding Window"].seeds.mean,
        "logiqa_main_test": acc[s.main.name].seeds.mean,
        "logiqa_main_ci": f"[{acc[s.main.name].ci.low:.1f}, {acc[s.main.name].ci.high:.1f}]",
        "logiqa_lm_test": acc[s.lm.name].seeds.mean,
        "logiqa_best_reader": best.name,
        "logiqa_best_reader_test": acc[best.name].seeds.mean,
        "logiqa_sw_paper": papers.value(P, "Table 3", "Sliding Window", "LogiQA Test"),
        "logiqa_sw_text": "MCTest's algorithm reproduces that here." if sw_ci.high < 25 else
        "MCTest's algorithm does not reproduce that here: its 95% interval "
        f"[{sw_ci.low:.1f}, {sw_ci.high:.1f}] {'includes' if sw_ci.low <= 25 else 'lies above'} chance.",
    }


def chinese_claim(cfg: Config, s: Systems, data: LogiQAData) -> ClaimEvidence:
    """Chinese − English accuracy of the word-matching and sliding-window rows, each language's
    questions resampled on its own."""
    if "zh" not in cfg.dataset.languages:
        return ClaimEvidence("zh-same-level", None, "Chinese LogiQA is not read in this run (dataset.languages)")
    gaps = {x.name: hierarchical_difference(x.correct("zh-test", data.gold("zh-test")),
                                            x.correct("en-test", data.gold("en-test"))) for x in s.rules[:2]}
    return ClaimEvidence("zh-same-level", {"gaps": gaps},
                         ", ".join(f"{n}: Chinese − English {g} points" for n, g in gaps.items()))


def table3_claims(cfg: Config, s: Systems, data: LogiQAData, acc: dict[str, Score]) -> tuple[ClaimEvidence, ...]:
    """The claims about Table 3: humans, the rule-based rows, the readers, the encoder, Chinese."""
    human = papers.value(P, "Table 3", "Human Performance", "LogiQA Test")
    best = max(s.trained, key=lambda x: acc[x.name].ci.high)
    rule_ci = {n: acc[n].ci for n in ("Word Matching", "Sliding Window")}
    readers = {r.name: acc[r.name].ci for r in s.readers}
    reader = best_reader(s, acc)
    diff, text = paired_gap(s.main, reader, data, cfg.encoder.model, reader.name)
    chance = papers.value(P, "Table 3", "Random (theoretical)", "LogiQA Test")
    return (
        ClaimEvidence("far-below-humans", {"best": acc[best.name].ci, "human": human, "chance": chance},
                      f"best upper bound {acc[best.name].ci.high:.1f}% ({best.name}) vs {human:.0f}%"),
        ClaimEvidence("rules-near-chance", {"rules": rule_ci}, "; ".join(f"{n} {ci}" for n, ci in rule_ci.items())),
        ClaimEvidence("sw-below-random", {"sw": rule_ci["Sliding Window"]}, f"{rule_ci['Sliding Window']}"),
        ClaimEvidence("deep-around-30", {"readers": readers}, ", ".join(f"{n} {a}%" for n, a in readers.items()),
                      rests_on=tuple(readers)),
        ClaimEvidence("pretrained-beat-readers", {"diff": diff}, text, rests_on=(s.main.name, reader.name)),
        chinese_claim(cfg, s, data))


def main_results_section(cfg: Config, s: Systems, data: LogiQAData, profile: str | None) -> MainResults:
    """Table 3 beside the paper's, every Table 3 row on English Test, the facts the text quotes
    (``profile`` names the run) and the claims they test."""
    acc = {x.name: score(x, data, "en-test") for x in s.table3}
    ours, paper = table3(s, data)
    return MainResults(tables={"logiqa_table3": paper_vs_ours(paper, ours),
                               "logiqa_table3_test": detail_table(s.table3, data)},
                       facts=setting_facts(cfg, s, profile) | results_facts(s, acc) | lm_facts(s, data),
                       claims=table3_claims(cfg, s, data, acc), acc=acc, accuracy_bars=accuracy_bars(ours, paper))
