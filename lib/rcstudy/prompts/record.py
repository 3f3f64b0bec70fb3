"""What each ReCoRD method reads: the LM's cloze sequences, the encoder ranker's filled-in queries,
ASReader's and the span readers' queries. Pure functions of a query; the templates are rendered
in the docstrings for a query ``Fans cheered @placeholder again.`` over a passage ``P``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..data.record import PLACEHOLDER
from ..data.records import ClozeQuery, MCItem, SpanExample
from ..metrics.record import gold_candidate_indices, gold_char_spans

#: The word that stands for ``@placeholder`` in the from-scratch readers' vocabulary.
PLACEHOLDER_WORD = "xxplaceholder"


def lm_prefix_and_continuations(q: ClozeQuery) -> tuple[str, list[str]]:
    """Passage + query with each candidate substituted, split where the sequences start to differ::

        prefix:        "P\\nFans cheered "
        continuations: ["Forlan again.", "Madrid again.", ...]

    log P(passage ⧺ query(c)) = log P(shared prefix) + log P(rest | prefix); the first term is the
    same for every candidate, so the argmax only needs the second (the paper's full-sequence score).
    """
    head, _, tail = q.query.partition(PLACEHOLDER)
    return f"{q.passage}\n{head}", [f"{c}{tail}" for c in q.candidates]


def filled_query(q: ClozeQuery, candidate: str) -> str:
    """The query with ``candidate`` in the blank: ``"Fans cheered Forlan again."``."""
    return q.query.replace(PLACEHOLDER, candidate)


def placeholder_query(q: ClozeQuery, placeholder: str = PLACEHOLDER_WORD) -> str:
    """The query with the blank written as one word: ``"Fans cheered xxplaceholder again."``."""
    return q.query.replace(PLACEHOLDER, placeholder)


def cloze_items(queries: Sequence[ClozeQuery], *, fill: bool, max_options: int | None = None,
                seed: int = 0) -> list[MCItem]:
    """Queries as multiple-choice items over their candidates (label: the first gold candidate)::

        fill=True:  context P, question "", options ("Fans cheered Forlan again.", "Fans cheered Madrid again.", ...)
        fill=False: context P, question "Fans cheered @placeholder again.", options ("Forlan", "Madrid", ...)

    ``max_options`` keeps the gold candidate and a seeded random sample of the others (training
    only: it cuts the cost of long candidate lists). Queries without a gold candidate get label None.
    """
    rng = np.random.default_rng(seed)
    items = []
    for q in queries:
        cands = list(q.candidates)
        gold = gold_candidate_indices(q)
        label = gold[0] if gold else None
        if max_options and len(cands) > max_options and label is not None:
            others = [k for k in range(len(cands)) if k != label]
            keep = sorted([label, *rng.choice(others, size=max_options - 1, replace=False).tolist()])
            cands, label = [cands[k] for k in keep], keep.index(label)
        options = tuple(filled_query(q, c) for c in cands) if fill else tuple(cands)
        items.append(MCItem(q.id, q.passage, "" if fill else q.query, options, label, {"candidates": tuple(cands)}))
    return items


def span_examples(queries: Sequence[ClozeQuery], placeholder: str) -> list[SpanExample]:
    """Queries as span-extraction examples: context P, question ``"Fans cheered X again."`` (the
    blank written as ``placeholder``), the gold answer spans and every entity mention as a candidate."""
    return [SpanExample(q.id, q.passage, placeholder_query(q, placeholder), gold_char_spans(q),
                        tuple((e.start, e.end) for e in q.entities)) for q in queries]
