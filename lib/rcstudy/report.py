"""What a chapter shows: paper-vs-ours tables, checked claims, and numbers glued into prose.

Claims are the heart of the book: each chapter states the paper's claims, checks each one in
code against its own numbers, and records the verdict with :class:`ClaimLog`. The log is glued
into the notebook (HTML for the page, JSON for the scorecard, which gathers every chapter's).
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .claims import UNDERPOWERED_UNSIZED, VERDICT_ORDER, ClaimSpec, Power, Verdict, by_id
from .learning import LossCheck
from .stats import Interval, MeanSD

CLAIMS_SUFFIX = "_claims"
VERDICTS = {True: Verdict.HOLDS.value, False: Verdict.DOES_NOT_HOLD.value, None: Verdict.NOT_TESTABLE.value}
#: The verdict of a claim that rests on a model that did not learn: a trained row (or a prompted
#: model, on the task the claim rests on) whose held-out accuracy does not beat chance as a whole
#: interval (:mod:`rcstudy.learning`; a falling training loss is not enough). No verdict.
NOT_LEARNED = Verdict.AT_CHANCE.value
#: No verdict from our evidence: it could not have reached one if the truth were the paper's
#: (power below the target), or it could have and did not (:class:`rcstudy.claims.Power`); or no
#: power could be computed (the paper gives no number for the effect).
UNDERPOWERED, INCONCLUSIVE = Verdict.UNDERPOWERED.value, Verdict.INCONCLUSIVE.value
#: Where a claim's record comes from: the paper's claims are counted, our checks are not.
CLAIM, CHECK = "claim", "check"


# --------------------------------------------------------------------------- text from data

#: The ASCII punctuation Markdown can read as syntax, anywhere or at a line start (all of it but
#: ``, ; ? " ' / @``, which CommonMark and MyST's extensions never read so on their own). CommonMark
#: renders any ASCII punctuation escaped with a backslash as the character itself.
_MD_PUNCTUATION = re.compile(r"([!#$%&()*+\-.:<=>\[\\\]^_`{|}~])")
_SAFE_URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#@!$&'()*+,;=%]+")


def md_text(value) -> str:
    """``value``, text from data or parameters, as Markdown that renders as exactly that text.

    Every punctuation character Markdown reads is escaped with a backslash, so nothing in it is
    Markdown or HTML: no raw HTML (``<script>``, ``<img onerror=...>``), entity, link, emphasis, code span,
    table cell, ``$`` math, MyST role or ``{{ }}`` substitution, nor a list, heading, comment or
    block quote at the start of a line. Line breaks are kept (a blank line still parts paragraphs);
    the indentation of a line is dropped, so that it cannot become a code block."""
    lines = str(value).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(_MD_PUNCTUATION.sub(r"\\\1", line.lstrip()) for line in lines)


def md_code(value) -> str:
    """``value`` as an inline code span, shown verbatim: fenced with more backticks than any run of
    them it holds (so it cannot close the span early), on one line."""
    text = " ".join(str(value).splitlines())
    if not text.strip():
        return md_text(text)
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    pad = " " if text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_code_block(text: str, info: str = "") -> str:
    """``text`` as a fenced code block, shown verbatim: its fence is longer than any run of
    backticks inside, so no line of it can close the block."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return f"{fence}{info}\n{text}\n{fence}"


def md_url(url: str) -> str:
    """A link to ``url`` when it is a plain http(s) address; otherwise the text as code (no link)."""
    return f"<{url}>" if _SAFE_URL.fullmatch(str(url)) else md_code(url)


def html_text(value) -> str:
    """``value`` as HTML text (``<``, ``>``, ``&`` and quotes escaped): for HTML a page displays."""
    return html.escape(str(value), quote=True)


def glue(name: str, value, display: bool = False):
    """myst-nb ``glue`` (imported lazily so the library works outside notebooks)."""
    import numpy as np
    from myst_nb import glue as _glue

    if isinstance(value, np.generic):  # numpy 2 reprs np.float64(1.0): {glue:text}`x:.1f` could not format it
        value = value.item()
    _glue(name, value, display=display)


def glue_facts(facts: Mapping[str, object]) -> None:
    """Glue every fact a chapter's prose quotes, by name (no display)."""
    for name, value in facts.items():
        glue(name, value)


@dataclass
class ChapterResults:
    """What a chapter's ``run(cfg, rt)`` returns: its tables, the facts its prose quotes (glue name
    → value) and its checked claims. Chapters subclass it with their systems and figure data."""

    tables: dict[str, pd.DataFrame]
    facts: dict[str, object]
    claims: "ClaimLog"


def cell(value, digits: int = 1) -> str:
    """Format one table cell: MeanSD / Interval as text, floats rounded, missing as n/a."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, (MeanSD, Interval)):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def paper_vs_ours(paper: pd.DataFrame, ours: pd.DataFrame, *, digits: int = 1,
                  labels: tuple[str, str] = ("paper", "ours")) -> pd.DataFrame:
    """Side-by-side table: for every column, the paper's number then ours, row by row.

    Rows and columns are the union of both frames (paper order first); a missing cell reads n/a.
    """
    rows = list(dict.fromkeys([*paper.index, *ours.index]))
    cols = list(dict.fromkeys([*paper.columns, *ours.columns]))
    out = {}
    for c in cols:
        for label, frame in zip(labels, (paper, ours)):
            out[(c, label)] = [
                cell(frame.at[r, c] if r in frame.index and c in frame.columns else None, digits) for r in rows
            ]
    table = pd.DataFrame(out, index=pd.Index(rows, name=paper.index.name or ours.index.name))
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table


@dataclass(frozen=True)
class Claim:
    chapter: str
    id: str
    claim: str  # the paper's statement
    test: str  # how we check it
    evidence: str  # our numbers behind the verdict
    holds: bool | None
    reason: str = ""  # why there is no verdict: NOT_LEARNED, UNDERPOWERED(_UNSIZED), INCONCLUSIVE, or not testable
    ours: str = ""  # our interval of the quantity the power calculation is about
    paper_effect: float | None = None  # the paper's value of that quantity, minus the rule's line
    power: float | None = None  # computed only where there is no verdict (rcstudy.claims.Power)
    n_needed: int | None = None  # items for power 0.8, where our power is below it
    scope: str = CLAIM  # CLAIM: the paper's, counted on the scorecard; CHECK: ours, shown apart
    rule: str = ""  # the rule in words: the line or the margin (with the paper's words for it)
    judged: str = ""  # what the rule compared on our evidence: each interval against its line or margin
    null: str = ""  # the negative control: what a system with no skill gives, and the rule's verdict on it
    power_from: str = ""  # the power calculation in words: the paper's value and row it assumes

    @property
    def verdict(self) -> str:
        return self.reason or VERDICTS[self.holds]

    @property
    def kind(self) -> str:
        """The scorecard's category: one of :data:`rcstudy.claims.VERDICT_ORDER`."""
        v = self.verdict
        if v.startswith(UNDERPOWERED):
            return UNDERPOWERED
        if v.startswith(INCONCLUSIVE):  # also "inconclusive (power not computed)" of older notebooks
            return INCONCLUSIVE
        if v == "model did not learn":  # notebooks published before the verdict was renamed
            return NOT_LEARNED
        return v if v in VERDICT_ORDER else VERDICTS[None]


def _null_text(spec: ClaimSpec, evidence: Mapping | None = None) -> str:
    """The negative control in words: what it is and the rule's verdict on it, measured as
    precisely as ``evidence`` where there is some (:meth:`ClaimSpec.null_at`)."""
    measured = evidence is not None and not spec.points(evidence)
    try:
        outcome = spec.judge(spec.null_at(evidence) if measured else spec.null)
    except Exception as e:  # a malformed null is a bug the tests catch; the page says so
        return f"{spec.null_what}: the rule fails on it ({type(e).__name__})"
    word = {True: "holds (the check cannot tell this claim from no skill)", False: "does not hold",
            None: "no verdict"}[outcome]
    return f"{spec.null_what}{' (here with the widths of our intervals)' if measured else ''} → {word}"


class ClaimLog:
    """The claims a chapter checked, in order, and the checks of ours beside them. Display it (or
    :meth:`glue` it) at the end.

    The paper's claims are declared in ``rcstudy.papers.<paper>.CLAIMS``, our checks in
    ``CHECKS`` (:mod:`rcstudy.claims`); :meth:`judge` applies a declared spec's rule to the
    evidence the pipeline supplies. ``claims`` are the paper's (counted), ``checks`` ours (not).
    """

    def __init__(self, chapter: str):
        from . import papers

        self.chapter = chapter
        known = chapter in papers.PAPERS
        self.specs = by_id(papers.claims(chapter)) if known else {}
        self.check_specs = by_id(papers.checks(chapter)) if known else {}
        if set(self.specs) & set(self.check_specs):
            raise ValueError(f"{chapter}: {sorted(set(self.specs) & set(self.check_specs))} both claim and check")
        self.claims: list[Claim] = []
        self.checks: list[Claim] = []

    def judge(self, id: str, evidence: Mapping | None, text: str, *, rests_on: Sequence[LossCheck] = ()) -> Claim:
        """Record the verdict of declared claim (or check) ``id`` on ``evidence`` (named values;
        None: the data here cannot test it), with ``text`` saying the evidence in words.
        ``rests_on``: the models the evidence comes from (:class:`rcstudy.learning.LossCheck`); if
        one of them did not learn — its held-out accuracy does not beat chance with its interval —
        the verdict is "model at chance", and the record says what the full profile would spend on
        it. A compared quantity given as a point, with no interval, gets
        no verdict (not testable here), and the record says what the chapter must compute.
        Power is computed only where there is no verdict."""
        scope = CHECK if id in self.check_specs else CLAIM
        spec = self.check_specs.get(id) or self.specs.get(id)
        if spec is None:
            raise KeyError(f"{self.chapter}: no declared claim {id!r}; declared: "
                           f"{', '.join([*self.specs, *self.check_specs])}")
        more = {"scope": scope, "rule": spec.rule.describe(), "null": _null_text(spec, evidence)}
        stuck = [c for c in rests_on if not c.learned]
        if evidence is not None and stuck:
            text += "; not judged: " + "; ".join(c.describe() for c in stuck)
            return self.check(id, spec.statement(), spec.how(), None, text, reason=NOT_LEARNED, **more)
        if evidence is not None and (bare := spec.points(evidence)):
            text += (f"; not judged: {', '.join(bare)} is a point with no interval"
                     + (f" (needs {spec.needs})" if spec.needs else ""))
            return self.check(id, spec.statement(), spec.how(), None, text, **more)
        holds = spec.judge(evidence)
        if evidence is None:
            return self.check(id, spec.statement(), spec.how(), None, text, **more)
        more["judged"] = spec.rule.explain(evidence)
        if holds is not None:
            return self.check(id, spec.statement(), spec.how(), holds, text, **more)
        power = spec.power(evidence)
        reason = (UNDERPOWERED_UNSIZED if power is None else UNDERPOWERED if not power.adequate else INCONCLUSIVE)
        return self.check(id, spec.statement(), spec.how(), None, text, reason=reason, power=power, **more)

    def check(self, id: str, claim: str, test: str, holds: bool | None, evidence: str, *, reason: str = "",
              power: Power | None = None, scope: str = CLAIM, **more) -> Claim:
        """Record one checked claim; ``holds=None`` when the data here cannot test it (or
        ``reason`` says why there is no verdict); ``power``: how likely our evidence was to reach
        the verdict if the truth were the paper's; ``scope``: CLAIM (the paper's) or CHECK (ours)."""
        if any(c.id == id for c in (*self.claims, *self.checks)):
            raise ValueError(f"claim {id!r} recorded twice in {self.chapter}")
        if power is not None:
            more |= {"ours": str(power.ours), "paper_effect": round(power.effect, 2), "power": round(power.power, 3),
                     "n_needed": None if power.adequate else power.n_needed, "power_from": power.describe()}
        c = Claim(self.chapter, id, claim, test, evidence, None if holds is None else bool(holds), reason,
                  scope=scope, **more)
        (self.checks if scope == CHECK else self.claims).append(c)
        return c

    def frame(self, scope: str = CLAIM) -> pd.DataFrame:
        rows = self.checks if scope == CHECK else self.claims
        return pd.DataFrame(
            [{"claim": c.claim, "test": c.test, "our evidence": c.evidence, "verdict": c.verdict} for c in rows],
            index=pd.Index([c.id for c in rows], name="id"), columns=["claim", "test", "our evidence", "verdict"],
        )

    @staticmethod
    def _rows_html(rows: Sequence[Claim]) -> str:
        def power(c: Claim) -> str:
            if c.holds is not None or not c.reason.startswith((UNDERPOWERED, INCONCLUSIVE)):
                return "—"  # computed only where there is no verdict
            if c.power is None:
                return ("not computed: the paper gives no number for the effect, so the test is not shown to be "
                        "one that could have reached a verdict")
            need = (f"; {c.n_needed:,} items would give 0.8" if c.n_needed
                    else "; no number of items suffices" if c.power < 0.8 else "")
            return f"{c.power_from} (ours: {c.ours}){need}"

        def how(c: Claim) -> str:
            return f"{html_text(c.test)}<br/><small>Rule: {html_text(c.rule)}</small>" if c.rule else html_text(c.test)

        def evidence(c: Claim) -> str:
            judged = f"<br/><small>Compared: {html_text(c.judged)}</small>" if c.judged else ""
            return html_text(c.evidence) + judged

        return "".join(
            f'<tr class="verdict-{html_text(c.kind.replace(" ", "-"))}"><td>{html_text(c.claim)}</td>'
            f"<td>{how(c)}</td><td>{evidence(c)}</td><td>{html_text(c.null or '—')}</td>"
            f"<td>{html_text(power(c))}</td><td><strong>{html_text(c.verdict)}</strong></td></tr>"
            for c in rows
        )

    def _repr_html_(self) -> str:
        head = ("<thead><tr><th>{0}</th><th>How we check it (the rule)</th><th>Our evidence, as the rule compared "
                "it</th><th>The same rule on a system with no skill</th><th>Power (only without a verdict)</th>"
                "<th>Verdict</th></tr></thead>")
        out = (f'<table class="claims">{head.format("The paper says")}<tbody>{self._rows_html(self.claims)}'
               "</tbody></table>")
        if self.checks:
            out += ('<p class="claims-checks-caption"><strong>Our checks</strong> (of the data, the loader or the '
                    "paper's tables; not the paper's claims, not counted on the scorecard)</p>"
                    f'<table class="claims claims-checks">{head.format("We check")}<tbody>'
                    f"{self._rows_html(self.checks)}</tbody></table>")
        return out

    def _repr_json_(self) -> dict:
        return {"chapter": self.chapter, "claims": [asdict(c) for c in (*self.claims, *self.checks)]}

    def __repr__(self) -> str:
        return self.frame().to_string()

    def glue(self) -> None:
        """Glue the log as ``<chapter>_claims`` (shown in place) and the tallies of the paper's
        claims for prose (our checks are not counted)."""
        glue(self.chapter + CLAIMS_SUFFIX, self, display=True)
        glue(f"{self.chapter}_claims_total", len(self.claims))
        glue(f"{self.chapter}_claims_held", sum(c.holds is True for c in self.claims))


def claims_from_notebook(path: Path) -> list[Claim]:
    """Read back the claims a published (executed) chapter notebook glued."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    found = []
    for c in nb.get("cells", []):
        for out in c.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name", "")
            data = out.get("data", {})
            if name.endswith(CLAIMS_SUFFIX) and "application/json" in data:
                payload = data["application/json"]
                found += [Claim(**d) for d in payload["claims"]]
    return found


def glued_values(path: Path) -> dict[str, object]:
    """Every value a published (executed) notebook glued, by name: its JSON (claims) or text form.
    Two runs computed the same numbers when these are equal."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    values = {}
    for c in nb.get("cells", []):
        for out in c.get("outputs", []):
            scrapbook = out.get("metadata", {}).get("scrapbook", {})
            if name := scrapbook.get("name"):
                # papermill's record mime types carry a prefix: "application/papermill.record/text/plain"
                prefix = scrapbook.get("mime_prefix", "")
                data = {key.removeprefix(prefix): value for key, value in out.get("data", {}).items()}
                values[name] = next((data[m] for m in ("application/json", "text/markdown", "text/plain", "text/html")
                                     if m in data), None)  # a Markdown value's plain text is its class name
    return values


def csv_download_link(frame: pd.DataFrame, name: str) -> str:
    """An HTML link that downloads ``frame`` as ``<name>.csv`` (embedded, works offline)."""
    import base64

    payload = base64.b64encode(frame.to_csv().encode("utf-8")).decode("ascii")
    return (f'<a class="table-download" download="{html_text(name)}.csv" '
            f'href="data:text/csv;base64,{payload}">⬇ {html_text(name)}.csv</a>')


def show_table(frame: pd.DataFrame, name: str, caption: str | None = None, *, glue_as: str | None = None):
    """Display a results table with its caption and a CSV download link; optionally glue it.

    ``name`` is the download's file name (e.g. ``reclor_table7``); ``glue_as`` glues the frame
    under that key so the prose (or another page) can paste it.
    """
    from IPython.display import HTML, display

    if glue_as:
        glue(glue_as, frame, display=False)
    head = f'<p class="table-caption"><strong>{html_text(caption)}</strong></p>' if caption else ""
    display(HTML(head + frame.to_html(classes="results", na_rep="n/a", escape=True)
                 + f'<p class="table-links">{csv_download_link(frame, name)}</p>'))
