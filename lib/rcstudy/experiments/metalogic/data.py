"""The MetaLogic files as the chapter reads them, and the page's first sections: the splits, their
labels and Table 4 ("The data"), and one metagraph with the text the models read and write."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from ... import papers, sampling
from ...data import metalogic as ml
from ...data.metalogic import Metagraph
from ...jobs import loaded_once
from ...prompts import metalogic as prompts
from ...report import paper_vs_ours
from .config import PAPER
from ..section import Section

TABLE4_NOTES = {
    "multi_step": "some node concludes one step and is the premise of another (any edge type)",
    "multi_premise": "some node has ≥ 2 incoming support steps (the released proofs have no '&')",
    "reb_step_premise": "graphs in all three of reb, multi-step and multi-premise (definitions above)",
    "avg_var": "distinct variables per formula-bearing node (the paper's unit is not recoverable)",
    "avg_global": "global unary operators per passage, after S5 reduction",
    "avg_local": "local unary operators per passage, after S5 reduction",
}
T4_KEYS = {"Passage": "passage", "Graph": "graph", "Node": "node", "Form": "form", "Reb": "reb",
           "Multi-step": "multi_step", "Multi-premise": "multi_premise", "n(reb ∩ step ∩ premise)": "reb_step_premise",
           "Avg. Node": "avg_node", "Avg. Form": "avg_form", "Avg. Var": "avg_var", "Avg. Binary": "avg_binary",
           "Avg. Global": "avg_global", "Avg. Local": "avg_local"}


def load_splits() -> dict[str, list[Metagraph]]:
    return {split: ml.load_split(split) for split in ml.SPLITS}


def job_splits() -> dict[str, list[Metagraph]]:
    """:func:`load_splits`, read once per process (:func:`rcstudy.jobs.loaded_once`): by the jobs
    and by the page that reads their outputs."""
    return loaded_once(load_splits)


def ratio_subsets(graphs: Sequence[Metagraph], ratios: Sequence[float], seed: int) -> dict[float, list[Metagraph]]:
    """Nested random passage subsets (at least 2 passages each) for the data-scale experiment."""
    return {r: sampling.nested(graphs, max(2, int(round(r * len(graphs)))), seed) for r in ratios}


def split_sizes(splits: Mapping[str, Sequence[Metagraph]]) -> pd.DataFrame:
    rows = {}
    for name, gs in splits.items():
        steps = [s for g in gs for s in g.steps]
        rows[name] = {"passages": len(gs), "nodes": sum(len(g.nodes) for g in gs), "steps": len(steps),
                      "support": sum(s.type == ml.SUPPORT for s in steps),
                      "rebut": sum(s.type == ml.REBUT for s in steps),
                      "graphs with rebut": sum(ml.has_rebut(g) for g in gs),
                      "nodes with formula": sum(bool(n.triples) for g in gs for n in g.nodes.values())}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.loc["total"] = df.sum()
    return df


def label_counts(splits: Mapping[str, Sequence[Metagraph]]) -> pd.DataFrame:
    """Per split: relations, local and global unary operators, and degree labels."""
    rows = {}
    for name, gs in splits.items():
        c = Counter()
        for g in gs:
            for n in g.nodes.values():
                c[f"degree {n.degree}"] += 1
                c.update(f"global {ml.SYMBOL[o]}" for o in n.global_ops)
                for t in n.triples:
                    c[f"relation {ml.SYMBOL[t.rel]}"] += 1
                    c.update(f"local {ml.SYMBOL[o]}" for o in t.pre_ops + t.con_ops)
        rows[name] = c
    df = pd.DataFrame.from_dict(rows, orient="index").fillna(0).astype(int)
    return df[sorted(df.columns, key=lambda k: (k.split()[0] != "relation", k.split()[0] != "local",
                                                k.split()[0] != "global", k))]


def quirks(splits: Mapping[str, Sequence[Metagraph]]) -> dict[str, int]:
    """The format's quirks, counted (the loader keeps all of them as they are)."""
    gs = [g for s in splits.values() for g in s]
    nodes = [n for g in gs for n in g.nodes.values()]
    return {
        "passages with non-contiguous sentence ids":
            sum([int(k[4:]) for k in g.sids] != list(range(1, len(g.sids) + 1)) for g in gs),
        "sentences containing [AND] (merged nodes)": sum("[AND]" in n.text for n in nodes),
        "nodes with an empty variable string": sum(not n.text_with_vars for n in nodes),
        "nodes with a duplicated triple": sum(len(set(n.triples)) < len(n.triples) for n in nodes),
        "nodes whose degree is not f(global operators)": sum(ml.degree_of(n.global_ops) != n.degree for n in nodes),
        "nodes whose operators are not in S5 normal form": sum(
            ml.s5_reduce(n.global_ops) != n.global_ops or any(t.reduced() != t for t in n.triples) for n in nodes),
        "sentences outside every step": sum(len(g.nodes) - len(g.graph_nodes) for g in gs),
    }


def steps_per_graph(graphs: Sequence[Metagraph]) -> Counter:
    return Counter(len(g.steps) for g in graphs)


def counts_frame(frame: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """Numbers as text: whole numbers without decimals, others with ``digits`` (missing stays missing)."""
    def text(v):
        if isinstance(v, str) or pd.isna(v):
            return v
        return str(int(v)) if float(v).is_integer() else f"{v:.{digits}f}"
    return frame.map(text).astype(object)


def every_passage(splits: Mapping[str, Sequence[Metagraph]]) -> list[Metagraph]:
    return splits["train"] + splits["dev"] + splits["test"]


# ---------------------------------------------------------------------------------------------
# The data


@dataclass(frozen=True, kw_only=True)
class Data(Section):
    """The splits as released: their sizes and quirks, Table 4, and the labels' counts (the figure)."""

    label_counts: pd.DataFrame
    steps_per_graph: pd.Series  # passages by their number of steps


def table4(everything: Sequence[Metagraph]) -> tuple[pd.DataFrame, dict]:
    """Table 4 recomputed from the files beside the paper's, with the definitions used, and its facts."""
    t4 = ml.table4(everything)
    paper_t4 = papers.table(PAPER, "Table 4").T
    paper_t4.columns = ["value"]
    ours_t4 = pd.DataFrame({"value": {k: float(t4[v]) for k, v in T4_KEYS.items()}})
    table = paper_vs_ours(counts_frame(paper_t4), counts_frame(ours_t4), digits=2)
    table[("definition used here", "")] = [TABLE4_NOTES.get(T4_KEYS[k], "as in the paper") for k in table.index]
    matching = [k for k in T4_KEYS if abs(paper_t4.loc[k, "value"] - ours_t4.loc[k, "value"]) < 0.006]  # 2 decimals
    return table, dict(metalogic_t4_matching=", ".join(matching) or "none", metalogic_multi_premise=t4["multi_premise"],
                       metalogic_paper_multi_premise=papers.value(PAPER, "Table 4", "MetaLogic", "Multi-premise"),
                       metalogic_avg_global=t4["avg_global"],
                       metalogic_paper_avg_global=papers.value(PAPER, "Table 4", "MetaLogic", "Avg. Global"))


def data_section(splits: Mapping[str, Sequence[Metagraph]]) -> Data:
    """The splits' sizes beside the paper's split, the format's quirks, Table 4, the labels per
    split and Table 2 (the paper's agreement, not recomputable)."""
    train, dev, test = splits["train"], splits["dev"], splits["test"]
    quirk, labels = quirks(splits), label_counts(splits)
    t4, t4_facts = table4(every_passage(splits))
    degree_cols = [f"degree {d}" for d in range(5)]
    facts = dict(metalogic_n_passages=len(train + dev + test), metalogic_n_train=len(train),
                 metalogic_n_dev=len(dev), metalogic_n_test=len(test),
                 **{f"metalogic_paper_split_{part}": papers.value(PAPER, "§5", "split", f"{part} (%)")
                    for part in ("train", "dev", "test")},
                 metalogic_degree_rule_breaks=quirk["nodes whose degree is not f(global operators)"],
                 metalogic_outside=quirk["sentences outside every step"], **t4_facts,
                 metalogic_contingent_share=100 * labels["degree 2"].sum() / labels[degree_cols].sum().sum())
    tables = {"metalogic_splits": counts_frame(split_sizes(splits)), "metalogic_quirks": pd.DataFrame({"count": quirk}),
              "metalogic_table4": t4, "metalogic_label_counts": labels,
              "metalogic_table2": paper_vs_ours(papers.table(PAPER, "Table 2"), pd.DataFrame(), digits=2)}
    return Data(tables=tables, facts=facts, label_counts=labels,
                steps_per_graph=pd.Series(steps_per_graph(every_passage(splits))).sort_index())


# ---------------------------------------------------------------------------------------------
# One metagraph, and the text the models read and write


@dataclass(frozen=True, kw_only=True)
class Example(Section):
    """The gold metagraphs the page draws, and the official strings of the last of them."""

    shown: list[Metagraph]


def gold_examples(everything: Sequence[Metagraph], test: Sequence[Metagraph]) -> list[Metagraph]:
    """The paper's Figure 1 and Table 10 passages, where present (else the first test passage)."""
    by_id = {g.id: g for g in everything}
    return [by_id[i] for i in ("train_1300", "train_4341") if i in by_id] or [test[0]]


def example_section(splits: Mapping[str, Sequence[Metagraph]]) -> Example:
    shown = gold_examples(every_passage(splits), splits["test"])
    return Example(tables={"metalogic_linearisations": pd.DataFrame({"text": prompts.official_strings(shown[-1])})},
                   captions={"metalogic_linearisations": f"The exact strings of the official code for {shown[-1].id}"},
                   shown=shown)
