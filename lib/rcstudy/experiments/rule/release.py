"""The release (§3): its counts, splits, prompts, lengths and wording (Table 1's analog)."""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ... import papers
from ...data.records import MCItem
from ...data.rule import NONE_OPTION, RuleData, RulePrompts, exemplar_keys
from ...errors import DataFileMissing
from ...report import paper_vs_ours
from ..section import Section
from .units import chance_subq


NEGATION = re.compile(r"\b(not|no|never|neither|nor|cannot)\b|n't\b", re.IGNORECASE)


def whitespace_tokens(text: str) -> list[str]:
    return text.split()


def length_table(data: RuleData, tokenizers: Mapping[str, Callable[[str], list]]) -> pd.DataFrame:
    """Mean length (tokens) of questions and options, main vs subquestion (Table 1's rows)."""
    groups = {
        ("main question", "context"): [m.context for m in data.mains],
        ("main question", "question"): [m.question for m in data.mains],
        ("main question", "option"): [o for m in data.mains for o in m.options],
        ("subquestion", "question"): [s.question for s in data.subs],
        ("subquestion", "option (rationale)"): [o for s in data.subs for o in s.options if o.strip() != NONE_OPTION],
    }
    rows = {k: {name: float(np.mean([len(tok(t)) for t in texts])) for name, tok in tokenizers.items()}
            for k, texts in groups.items()}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["", "part"])
    return table


def split_table(data: RuleData) -> pd.DataFrame:
    """Per released split: subquestions, main questions, selective, None offered, None the answer."""
    f = data.frame()
    g = f.groupby("split")
    return pd.DataFrame({"subquestions": g.size(), "main questions": g["main_id"].nunique(),
                         "selective": g["selective"].sum(), "None offered": g["has_none"].sum(),
                         "None is the answer": g["none_correct"].sum()}).astype(int)


def stem_table(data: RuleData, words: int = 4, top: int = 5) -> pd.DataFrame:
    """The most frequent first ``words`` words of subquestion texts, by subquestion type."""
    rows = []
    for kind, selective in (("selective", True), ("eliminative", False)):
        stems = Counter(" ".join(s.question.split()[:words]) for s in data.subs if s.meta["selective"] == selective)
        rows += [{"type": kind, "question starts with": stem, "count": n} for stem, n in stems.most_common(top)]
    return pd.DataFrame(rows).set_index(["type", "question starts with"])


def negation_table(data: RuleData) -> pd.DataFrame:
    """How many subquestion texts contain a negation (not, n't, no, never, ...), by type."""
    rows = {}
    for kind, selective in (("selective", True), ("eliminative", False)):
        qs = [s.question for s in data.subs if s.meta["selective"] == selective]
        n_neg = sum(bool(NEGATION.search(q)) for q in qs)
        rows[kind] = {"subquestions": len(qs), "with a negation": n_neg, "share (%)": 100 * n_neg / max(len(qs), 1)}
    return pd.DataFrame.from_dict(rows, orient="index")


def leaked_mains(unit: RuleData, keys: set[tuple[str, tuple[str, ...]]]) -> set[str]:
    """Main questions of ``unit`` that appear, or one of whose subquestions appears, among exemplars
    (keys: :func:`~rcstudy.data.rule.exemplar_keys`)."""
    return ({m.id for m in unit.mains if (m.question, tuple(m.options)) in keys}
            | {s.meta["main_id"] for s in unit.subs if (s.question, tuple(s.options)) in keys})


def prompt_table(prompts: RulePrompts, data: RuleData) -> pd.DataFrame:
    """Every released few-shot batch: length, None-answer exemplar, and evaluation items it contains."""
    rows = []
    for (shots, family), batches in sorted(prompts.batches.items()):
        for b in batches:
            rows.append({"shots": shots, "family": family, "batch": b.batch, "characters": len(b.text),
                         "None-answer exemplar": b.has_none_correct_exemplar,
                         "main questions leaked": len(leaked_mains(data, exemplar_keys(b)))})
    return pd.DataFrame(rows).set_index(["shots", "family", "batch"])


def counts_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts shown as whole numbers, percentages with one decimal."""
    return frame.map(lambda v: v if pd.isna(v) else f"{v:,.0f}" if float(v).is_integer() else f"{v:.1f}")


@dataclass(frozen=True, kw_only=True)
class Release(Section):
    """The release (§3) counted, and the data of its figure."""

    by_split: pd.DataFrame  # subquestions per split and type
    per_main_counts: pd.Series  # main questions by number of subquestions


def release_section(data: RuleData, prompts: RulePrompts) -> Release:
    """The release, checked and counted (§3), its splits and prompts, and the facts the data section quotes."""
    from ...data import rule as rule_data

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a subsampled copy (the tests' fixtures) differs from the release
        release = rule_data.check_release(data)
    counts = rule_data.release_counts(data)
    ours = pd.DataFrame({"count": {**{k: float(v) for k, v in counts.items()},
                                   "subquestions whose answer is None (%)":
                                       100 * counts["subquestions whose answer is None"] / counts["subquestions"]}})
    f = data.frame()
    none_positions = sorted({s.meta["none_position"] for s in data.subs if s.meta["has_none"]})
    facts = {
        "rule_paper_main": f'{papers.value("rule", "§3", "main questions", "count"):,.0f}',
        "rule_paper_sub": f'{papers.value("rule", "§3", "subquestions", "count"):,.0f}',
        "rule_chance_sub": chance_subq(),
        "rule_n_main": counts["main questions"],
        "rule_n_sub": counts["subquestions"],
        "rule_n_sel": counts["selective subquestions"],
        "rule_n_elim": counts["eliminative subquestions"],
        "rule_n_none_offered": counts["subquestions with a None option"],
        "rule_n_none_answer": counts["subquestions whose answer is None"],
        "rule_n_straddle": counts["main questions with subquestions in more than one split"],
        "rule_release_matches": "matches" if release["matches"].all() else "does not match",
        "rule_none_positions": ", ".join(f"Option{p}" for p in none_positions) or "nowhere",
    }
    tables = {"rule_counts": paper_vs_ours(counts_frame(papers.table("rule", "§3")), counts_frame(ours)),
              "rule_splits": split_table(data), "rule_prompts": prompt_table(prompts, data)}
    return Release(tables=tables, facts=facts,
                   by_split=(f.groupby(["split", "selective"]).size().unstack(fill_value=0)
                             .rename(columns={True: "selective", False: "eliminative"})),
                   per_main_counts=f.groupby("main_id").size().value_counts().sort_index())


def reclor_join_section(data: RuleData, reclor_train: Sequence[MCItem] | DataFileMissing) -> Section:
    """ReClor train joined to the main questions, or where it is missing here."""
    from ...data import rule as rule_data

    if isinstance(reclor_train, DataFileMissing):
        return Section(facts={"rule_join_text": f"ReClor train is not available here ({reclor_train.path}), so the "
                                                "encoder rows below are skipped."})
    join = rule_data.compare_with_reclor(data, reclor_train)
    found, identical = int(join["found"].sum()), int(join.all(axis=1).sum())
    return Section(facts={"rule_join_found": found, "rule_join_identical": identical,
                          "rule_join_text": f"{found} of the {len(join)} main questions are in ReClor train, and "
                                            f"{identical} of them agree in context, question, options and label."})


def lengths_section(data: RuleData) -> Section:
    """Table 1's analog (words and WordPiece tokens), subquestion stems and negations."""
    from ...models.loading import load_tokenizer

    lengths = length_table(data, {"words": whitespace_tokens, "WordPiece tokens": load_tokenizer("minilm-l6").tokenize})
    words, negation = lengths["words"], negation_table(data)
    facts = {"rule_len_q": (f"{words[('subquestion', 'question')]:.1f} words against "
                            f"{words[('main question', 'question')]:.1f}"),
             "rule_len_o": (f"{words[('subquestion', 'option (rationale)')]:.1f} against "
                            f"{words[('main question', 'option')]:.1f}"),
             "rule_neg_elim": negation.loc["eliminative", "share (%)"],
             "rule_neg_sel": negation.loc["selective", "share (%)"]}
    return Section(tables={"rule_lengths": lengths.round(1), "rule_stems": stem_table(data),
                           "rule_negation": negation.round(1)}, facts=facts)
