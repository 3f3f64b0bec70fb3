"""Every dataset as a ``datasets.DatasetDict`` with declared features, from any of its sources
(the folder, its Hub copy or a local copy: :mod:`rcstudy.data.hub`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import metalogic
from .hub import FOLDER, resolve
from .registry import DATASETS

if TYPE_CHECKING:
    import datasets


#: The record kinds a DatasetDict holds: multiple-choice items, RULE's subquestions (items tied to
#: a main question's option), ReCoRD's cloze queries and MetaLogic's metagraphs.
KINDS = ("mc", "subquestion", "cloze", "metagraph")


def features(kind: str) -> "datasets.Features":
    """The declared columns of one kind of record (:data:`KINDS`). A hidden label (ReClor's test
    split) is ``-1``, as in the Hub's copies; spans are end-exclusive character offsets."""
    from datasets import ClassLabel, Features, List, Value

    mc = {"id": Value("string"), "context": Value("string"), "question": Value("string"),
          "options": List(Value("string")), "label": ClassLabel(names=list("ABCD"))}
    if kind == "mc":
        return Features(mc)
    if kind == "subquestion":
        return Features({**mc, "main_id": Value("string"), "main_option": Value("int8"), "selective": Value("bool")})
    if kind == "cloze":
        span = {"start": Value("int32"), "end": Value("int32"), "text": Value("string")}
        return Features({"id": Value("string"), "passage": Value("string"), "query": Value("string"),
                         "entities": List(span), "answers": List(Value("string")), "source": Value("string")})
    if kind == "metagraph":
        node = {"sid": Value("string"), "text": Value("string"), "text_with_vars": Value("string"),
                "global_operators": List(Value("string")), "formulae": Value("string"), "degree": Value("int8")}
        return Features({"id": Value("string"), "question": Value("string"), "nodes": List(node),
                         "proof": Value("string")})
    raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")


def _mc_row(item) -> dict:
    return {"id": item.id, "context": item.context, "question": item.question, "options": list(item.options),
            "label": -1 if item.label is None else item.label}


def _subquestion_row(item) -> dict:
    return {**_mc_row(item), "main_id": item.meta["main_id"], "main_option": item.meta["main_option"],
            "selective": item.meta["selective"]}


def _cloze_row(q) -> dict:
    return {"id": q.id, "passage": q.passage, "query": q.query, "answers": list(q.answers), "source": q.source,
            "entities": [{"start": e.start, "end": e.end, "text": e.text} for e in q.entities]}


def _metagraph_row(g) -> dict:
    return {"id": g.id, "question": g.question, "proof": g.proof, "nodes": [
        {"sid": sid, "text": n.text, "text_with_vars": n.text_with_vars, "global_operators": list(n.global_ops),
         "formulae": metalogic.linearize_triples(n.triples).strip(), "degree": n.degree} for sid, n in g.nodes.items()]}


ROWS = {"mc": _mc_row, "subquestion": _subquestion_row, "cloze": _cloze_row, "metagraph": _metagraph_row}


def _records(dataset: str, source: str) -> dict[str, tuple[str, list]]:
    """``{split: (kind, records)}`` of every split the source has (the dataset's loader says how)."""
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}")
    resolve(dataset, source)  # a dataset without a Hub copy is read from the folder only
    return DATASETS[dataset].splits(source)


def as_dataset_dict(dataset: str, source: str = FOLDER) -> "datasets.DatasetDict":
    """The records of ``dataset`` from ``source`` as a ``DatasetDict`` with declared :func:`features`
    (for ``.map``, ``.to_pandas()``, ``push_to_hub``), one split per split the source has (RULE:
    ``main`` and ``sub``)."""
    import datasets

    return datasets.DatasetDict({
        split: datasets.Dataset.from_list([ROWS[kind](r) for r in records], features=features(kind))
        for split, (kind, records) in _records(dataset, source).items()
    })
