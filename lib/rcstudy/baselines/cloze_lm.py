"""The paper's language-model baseline (after Trinh and Le): score each candidate filled into
passage + query with a causal LM (:mod:`rcstudy.models.lm`)."""

from __future__ import annotations

from typing import Sequence

from ..cache import cached, fingerprint
from ..data.records import ClozeQuery
from ..models.lm import load_lm
from ..prompts.record import lm_prefix_and_continuations
from ..runtime import Runtime


def lm_candidate_scores(model_name: str, queries: Sequence[ClozeQuery], rt: Runtime, *,
                        chunk: int = 16, batch_size: int = 16) -> list[dict]:
    """Per query, the summed log-likelihood and token count of each candidate's continuation.

    Cached in chunks of ``chunk`` queries, so an interrupted run resumes where it stopped.
    """
    lm = None
    out = []
    for start in range(0, len(queries), chunk):
        part = queries[start:start + chunk]
        key = {"model": model_name, "queries": fingerprint([(q.id, q.passage, q.query, q.candidates) for q in part])}

        def compute(part=part):
            nonlocal lm
            lm = lm or load_lm(model_name, rt)
            res = []
            for q in part:
                prefix, conts = lm_prefix_and_continuations(q)
                s, n = lm.loglik([prefix] * len(conts), conts, batch_size=batch_size, return_counts=True)
                res.append({"id": q.id, "loglik": s, "tokens": n})
            return res

        out += cached("record_lm_scores", key, compute)
    return out
