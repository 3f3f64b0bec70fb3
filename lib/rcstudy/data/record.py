"""ReCoRD (Zhang et al., 2018) in every public layout, as :class:`~rcstudy.data.ClozeQuery`.

Layouts read (``load_file`` picks the reader from the file):

* the **official release** (``train.json``/``dev.json``/``test.json``): ``{"version", "data": [{"id",
  "source", "passage": {"text", "entities"}, "qas": [{"id", "query", "answers"}]}]}``;
* **SuperGLUE** JSON Lines (``train.jsonl``/``val.jsonl``/``test.jsonl``, also FewGLUE's files):
  one passage per line with ``idx`` in place of ``id``;
* **CLUES** (microsoft/CLUES): SQuAD-like lines ``{"id", "context", "entities", "question", "answer"}``
  whose question wraps the query in a fixed template that is removed here;
* the official **explorer** pages (``examples.json``): one HTML page per query, gold entities marked
  with the class ``correct-answer``.

Checks. Every file must hold at least one query; passage and query ids (``id``/``idx``; CLUES and
explorer ``id``) and the passage's news ``source`` are required, ids unique within a file; every query of a labelled file (all but
the official and SuperGLUE ``test`` files) has at least one answer, and each answer's ``text`` must
be the passage text at its span (``start``..``end``, or CLUES' ``answer_start`` + its length): a
contradiction raises :class:`~rcstudy.errors.DataFormatError` naming file, line or item. Fields the
loader does not use (CLUES' ``is_impossible``, the explorer's ``idx``) are still
type-checked, and a CLUES query marked ``is_impossible`` is refused (ReCoRD queries always have an
answer). A ReCoRD query picks its answer among the passage's entities: a passage with no entity,
and a gold answer whose text is not the text of one of the passage's entities, are refused; so is
an empty passage (whitespace and invisible format characters do not count). :func:`discover` reads
the declared files only (CLUES' ``record_train_{10,20,30}_{1..5}.jsonl``, not any file the glob
would match) and refuses any other file in the folder and its ``fewglue/``, ``clues/`` and
``explorer/`` sub-folders, naming it.

Conventions. In the files an entity or answer ``end`` is *inclusive*; here :class:`Entity` spans are
Python-style (end exclusive). Highlight bullets, written ``@highlight\\n`` in the raw text, are
rendered as ``- `` bullets *after* the spans have been read, and every span is moved with them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterable

from ..errors import DataFileMissing, DataFormatError
from ..settings import data_dir
from .registry import DatasetInfo, HubCopy, check_folder
from . import hub
from .io import (UniqueKeys, is_blank, iter_jsonl, located, optional_fields, read_json, read_text, require_fields,
                 require_items)
from .records import ClozeQuery, Entity

PLACEHOLDER = "@placeholder"
HIGHLIGHT = "@highlight\n"
BULLET = "- "
CLUES_PREFIX = 'According to claims in the suit, "'
CLUES_SUFFIX = '". What is @placeholder?'

#: Preference when one query comes from several sources (the first keeps it): fuller gold sets first.
SOURCE_PRIORITY = ("official", "superglue", "explorer", "fewglue", "clues")


# --------------------------------------------------------------------------- passages

def render_passage(raw: str) -> tuple[str, list[int]]:
    """Replace each ``@highlight\\n`` marker by a ``- `` bullet.

    Returns the rendered text and ``pos`` with ``pos[i]`` = position in the rendered text of raw
    character ``i`` (``pos[len(raw)]`` = rendered length), so spans move with their text.
    """
    pieces = raw.split(HIGHLIGHT)
    pos: list[int] = []
    n = 0
    for k, piece in enumerate(pieces):
        if k:
            pos.extend([n] * len(HIGHLIGHT))
            n += len(BULLET)
        pos.extend(range(n, n + len(piece)))
        n += len(piece)
    pos.append(n)
    return BULLET.join(pieces), pos


def _spans(raw: str, spans: Iterable[tuple[int, int]], path: Path, line: int | None, item: str,
           what: str) -> list[tuple[int, int]]:
    """Check inclusive-end ``(start, end)`` pairs against ``raw``; return them end-exclusive."""
    out = []
    for k, (start, end) in enumerate(spans):
        if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start <= end < len(raw):
            raise DataFormatError(path, f"{what} {k}: span ({start}, {end}) outside the passage "
                                        f"of {len(raw)} characters", line=line, item=item)
        out.append((start, end + 1))
    return out


def _query(text: str, path: Path, line: int | None, item: str) -> str:
    if PLACEHOLDER not in text:
        raise DataFormatError(path, f"query has no {PLACEHOLDER}: {text[:80]!r}", line=line, item=item)
    return text


def _build(qid: str, raw: str, rendered: tuple[str, list[int]], entity_spans: list[tuple[int, int]], query: str,
           answers: list[tuple[str, tuple[int, int]]], source: str, meta: dict) -> ClozeQuery:
    """One ClozeQuery from the raw passage (and its :func:`render_passage`), end-exclusive raw spans
    and (text, raw span) answers."""
    text, pos = rendered
    entities = tuple(Entity(pos[s], pos[e - 1] + 1, text[pos[s]:pos[e - 1] + 1]) for s, e in entity_spans)
    gold = tuple(dict.fromkeys(a for a, _ in answers))
    spans = tuple((pos[s], pos[e - 1] + 1) for _, (s, e) in answers)
    cut = raw.find(HIGHLIGHT)
    lead_end = len(text) if cut < 0 else pos[cut]  # end of the article's lead, before the highlights
    return ClozeQuery(qid, text, query, entities, gold, source,
                      {"answer_spans": spans, "raw_passage": raw, "lead_end": lead_end, **meta})


def _candidates(raw: str, ents: list[tuple[int, int]], answers: list[tuple[str, tuple[int, int]]], path: Path,
                line: int | None, item: str) -> None:
    """The passage is not empty, has candidate entities, and every gold answer is one of them (by text)."""
    if is_blank(raw):
        raise DataFormatError(path, "the passage is empty", line=line, item=item)
    if not ents:
        raise DataFormatError(path, "the query has no candidate entities (the passage lists none)", line=line,
                              item=item)
    texts = {raw[s:e] for s, e in ents}
    for k, (text, _) in enumerate(answers):
        if text not in texts:
            raise DataFormatError(path, f"answer {k} {text[:40]!r} is not among the passage's {len(texts)} candidate "
                                        f"entities", line=line, item=item)


def _answers(raw: str, answers: list, path: Path, line: int | None, item: str) -> list:
    out = []
    for k, a in enumerate(answers):
        if not isinstance(a, dict):
            raise DataFormatError(path, f"answer {k} should be an object", line=line, item=item)
        require_fields(a, {"start": int, "end": int, "text": str}, path, line=line, item=f"{item}, answer {k}")
        (span,) = _spans(raw, [(a["start"], a["end"])], path, line, item, f"answer {k}")
        out.append((_answer_text(raw, a["text"], span, path, line, item, k), span))
    return out


def _answer_text(raw: str, text: str, span: tuple[int, int], path: Path, line: int | None, item: str,
                 k: int) -> str:
    """An answer's ``text``, which must be the passage text at its (end-exclusive) span."""
    if raw[span[0]:span[1]] != text:
        raise DataFormatError(path, f"answer {k}: text {text[:40]!r} differs from the passage text "
                                    f"{raw[span[0]:span[1]][:40]!r} at its span ({span[0]}, {span[1] - 1})",
                              line=line, item=item)
    return text


def _passage_queries(p: dict, path: Path, line: int | None, *, id_key: str, source: str,
                     labelled: bool, position: int, query_ids: UniqueKeys) -> list[ClozeQuery]:
    """The queries of one passage record (official and SuperGLUE layouts share this shape)."""
    pid = str(p.get(id_key, f"#{position}"))
    id_type = str if id_key == "id" else int
    require_fields(p, {id_key: id_type, "source": str, "passage": dict, "qas": list}, path, line=line, item=pid)
    require_fields(p["passage"], {"text": str, "entities": list}, path, line=line, item=pid)
    raw = p["passage"]["text"]
    for k, e in enumerate(p["passage"]["entities"]):
        if not isinstance(e, dict):
            raise DataFormatError(path, f"entity {k} should be an object", line=line, item=pid)
        require_fields(e, {"start": int, "end": int}, path, line=line, item=f"{pid}, entity {k}")
    ents = _spans(raw, [(e["start"], e["end"]) for e in p["passage"]["entities"]], path, line, pid, "entity")
    rendered = render_passage(raw)
    out = []
    for k, qa in enumerate(p["qas"]):
        if not isinstance(qa, dict):
            raise DataFormatError(path, f"query {k} should be an object", line=line, item=pid)
        qid = str(qa.get(id_key, f"{pid}-{k}"))
        require_fields(qa, {id_key: id_type, "query": str}, path, line=line, item=qid)
        query_ids.add(qa[id_key], f"passage {pid}", line=line, item=qid)
        if labelled or "answers" in qa:
            require_fields(qa, {"answers": list}, path, line=line, item=qid)
        if labelled and not qa["answers"]:
            raise DataFormatError(path, "no answer (this file is labelled)", line=line, item=qid)
        answers = _answers(raw, qa.get("answers", []), path, line, qid)
        _candidates(raw, ents, answers, path, line, qid)
        out.append(_build(f"{source}:{qid}" if id_key == "idx" else qid, raw, rendered, ents,
                          _query(qa["query"], path, line, qid), answers, source,
                          {"passage_id": pid, "news_source": p["source"], "file": path.name}))
    return out


def _labelled(path: Path) -> bool:
    """Test files of the official and SuperGLUE releases carry no answers."""
    return not path.stem.startswith("test")


def load_official(path: Path, source: str = "official") -> list[ClozeQuery]:
    """The original release (``{"version", "data": [...]}``); the version string is not checked."""
    path = Path(path)
    doc = read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise DataFormatError(path, 'the file is not an object with a "data" list (official ReCoRD layout)')
    out = []
    passage_ids, query_ids = UniqueKeys(path, "passage id"), UniqueKeys(path, "query id")
    for i, p in enumerate(doc["data"]):
        if not isinstance(p, dict):
            raise DataFormatError(path, "passage record should be an object", item=str(i))
        with located(path, item=str(p.get("id", i))):
            out += _passage_queries(p, path, None, id_key="id", source=source, labelled=_labelled(path), position=i,
                                    query_ids=query_ids)
        passage_ids.add(p["id"], f"position {i}", item=p["id"])
    return list(require_items(out, path, "queries"))


def load_superglue(path: Path, source: str = "superglue") -> list[ClozeQuery]:
    """SuperGLUE/FewGLUE JSON Lines: one passage with its queries per line."""
    path = Path(path)
    out = []
    passage_ids, query_ids = UniqueKeys(path, "passage idx"), UniqueKeys(path, "query idx")
    for line, p in iter_jsonl(path):
        with located(path, line=line, item=str(p.get("idx", line))):
            out += _passage_queries(p, path, line, id_key="idx", source=source, labelled=_labelled(path),
                                    position=line, query_ids=query_ids)
        passage_ids.add(p["idx"], f"line {line}", line=line, item=str(p["idx"]))
    return list(require_items(out, path, "queries"))


def unwrap_clues_question(question: str, path: Path, line: int | None = None, item: str | None = None) -> str:
    """The ReCoRD query inside CLUES' ``According to claims in the suit, "<query>". What is @placeholder?``."""
    if not (question.startswith(CLUES_PREFIX) and question.endswith(CLUES_SUFFIX)):
        raise DataFormatError(path, f"question does not follow the CLUES template "
                                    f"{CLUES_PREFIX}…{CLUES_SUFFIX}: {question[:80]!r}", line=line, item=item)
    return _query(question[len(CLUES_PREFIX):-len(CLUES_SUFFIX)], path, line, item)


def load_clues(path: Path, source: str = "clues") -> list[ClozeQuery]:
    """CLUES lines; CLUES keeps one gold answer per query (its other mentions are not listed)."""
    path = Path(path)
    out = []
    ids = UniqueKeys(path, "id")
    for line, d in iter_jsonl(path):
        qid = str(d.get("id", line))
        with located(path, line=line, item=qid):
            require_fields(d, {"id": str, "context": str, "entities": list, "question": str, "answer": list},
                           path, line=line, item=qid)
            optional_fields(d, {"is_impossible": bool}, path, line=line, item=qid)
            if d.get("is_impossible"):
                raise DataFormatError(path, "is_impossible is true, but every ReCoRD query has an answer",
                                      line=line, item=qid)
            ids.add(qid, f"line {line}", line=line, item=qid)
            raw = d["context"]
            for k, e in enumerate(d["entities"]):
                if not isinstance(e, dict):
                    raise DataFormatError(path, f"entity {k} should be an object", line=line, item=qid)
                require_fields(e, {"start": int, "end": int}, path, line=line, item=f"{qid}, entity {k}")
            ents = _spans(raw, [(e["start"], e["end"]) for e in d["entities"]], path, line, qid, "entity")
            answers = []
            for k, a in enumerate(d["answer"]):
                if not isinstance(a, dict):
                    raise DataFormatError(path, f"answer {k} should be an object", line=line, item=qid)
                require_fields(a, {"text": str, "answer_start": int}, path, line=line, item=f"{qid}, answer {k}")
                if not a["text"]:
                    raise DataFormatError(path, f"answer {k} is empty", line=line, item=qid)
                (span,) = _spans(raw, [(a["answer_start"], a["answer_start"] + len(a["text"]) - 1)],
                                 path, line, qid, f"answer {k}")
                answers.append((_answer_text(raw, a["text"], span, path, line, qid, k), span))
            if not answers:
                raise DataFormatError(path, "no gold answer", line=line, item=qid)
            _candidates(raw, ents, answers, path, line, qid)
            query = unwrap_clues_question(d["question"], path, line, qid)
            out.append(_build(qid, raw, render_passage(raw), ents, query, answers, source,
                              {"passage_id": qid.rsplit("_", 1)[0], "news_source": "", "file": path.name,
                               "answers_complete": False}))
    return list(require_items(out, path, "queries"))


class _ExplorerPage(HTMLParser):
    """Passage paragraphs/highlights with their entity anchors, and the query, of one explorer page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.segments: list[str] = []
        self.entities: list[dict] = []  # segment, start, end (within the segment), value, gold
        self.query: list[str] = []
        self._where = None  # "context" | "query" | None
        self._anchor: dict | None = None
        self._in_placeholder = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") in ("context", "query"):
            self._where = a["id"]
        elif a.get("id") in ("hint", "next-example"):
            self._where = None
        if self._where == "context" and tag in ("p", "li"):
            self.segments.append("")
        elif self._where == "context" and tag == "a" and "entity" in (a.get("class") or "").split():
            if not self.segments:
                self.segments.append("")
            self._anchor = {"segment": len(self.segments) - 1, "start": len(self.segments[-1]),
                            "gold": "correct-answer" in a["class"].split(), "value": None}
        elif tag == "input" and self._anchor is not None:
            self._anchor["value"] = a.get("value")
        elif self._where == "query" and tag == "span" and a.get("id") == "placeholder":
            self.query.append(PLACEHOLDER)
            self._in_placeholder = True

    def handle_endtag(self, tag):
        if tag == "a" and self._anchor is not None:
            self._anchor["end"] = len(self.segments[-1])
            self.entities.append(self._anchor)
            self._anchor = None
        elif tag == "span" and self._in_placeholder:
            self._in_placeholder = False
        elif tag == "fieldset":
            self._where = None

    def handle_data(self, data):
        if self._where == "context" and self.segments:
            self.segments[-1] += data
        elif self._where == "query" and not self._in_placeholder:
            self.query.append(data)


def parse_explorer_page(page: str, path: Path, item: str) -> tuple[str, list[tuple[int, int]], str, list]:
    """Raw passage (paragraph + ``@highlight`` lines), entity spans, query and gold answers of a page."""
    parser = _ExplorerPage()
    parser.feed(page)
    parser.close()
    if not parser.segments:
        raise DataFormatError(path, 'page has no passage (no <div id="context"> paragraphs)', item=item)
    query = " ".join("".join(parser.query).split())
    if not query:
        raise DataFormatError(path, 'page has no query (no <div id="query">)', item=item)
    segments = [s.strip() for s in parser.segments]
    lead = [len(s) - len(s.lstrip()) for s in parser.segments]
    starts, raw = [], ""
    for k, seg in enumerate(segments):
        if k:
            raw += "\n" + HIGHLIGHT
        starts.append(len(raw))
        raw += seg
    if not parser.entities:
        raise DataFormatError(path, "the query has no candidate entities (the page marks none)", item=item)
    spans, answers = [], []
    for k, e in enumerate(parser.entities):
        s = starts[e["segment"]] + e["start"] - lead[e["segment"]]
        end = starts[e["segment"]] + e["end"] - lead[e["segment"]]
        text = raw[s:end]
        value_text = (e["value"] or "").split("-", 3)[-1]
        if not text or " ".join(text.split()) != " ".join(value_text.split()):
            raise DataFormatError(path, f"entity {k}: anchor text {text!r} differs from its value "
                                        f"{e['value']!r}", item=item)
        spans.append((s, end))
        if e["gold"]:
            answers.append((text, (s, end)))
    if not answers:
        raise DataFormatError(path, "no entity is marked correct-answer", item=item)
    return raw, spans, _query(query, path, None, item), answers


def load_explorer(path: Path, source: str = "explorer") -> list[ClozeQuery]:
    """The explorer's ``examples.json``: a list of ``{"idx", "id", "html"}`` pages."""
    path = Path(path)
    pages = read_json(path)
    if not isinstance(pages, list):
        raise DataFormatError(path, "the file is not a JSON list of example pages")
    out = []
    ids = UniqueKeys(path, "id")
    for i, page in enumerate(pages):
        item = str(page.get("id", i)) if isinstance(page, dict) else str(i)
        if not isinstance(page, dict):
            raise DataFormatError(path, "example should be an object", item=item)
        require_fields(page, {"id": str, "html": str}, path, item=item)
        optional_fields(page, {"idx": str}, path, item=item)
        ids.add(page["id"], f"position {i}", item=item)
        with located(path, item=item):
            raw, spans, query, answers = parse_explorer_page(page["html"], path, item)
            _candidates(raw, spans, answers, path, None, item)
        out.append(_build(page["id"], raw, render_passage(raw), spans, query, answers, source,
                          {"passage_id": page["id"].split("-")[0], "news_source": "", "file": path.name}))
    return list(require_items(out, path, "example pages"))


def read_hub_split(src: hub.Source, split: str) -> list[ClozeQuery]:
    """One split of SuperGLUE's ReCoRD on the Hub: a row per query (see the registry for its columns).

    The rows carry SuperGLUE's passages and ids, so the queries equal those :func:`load_superglue`
    reads from ``val.jsonl``/``train.jsonl``, except that the copy lists each gold answer's text
    only: every entity mention with a gold text counts as an answer span.
    """
    path = Path(src.where(split))
    labelled = split != "test"
    out, query_ids = [], UniqueKeys(path, "query idx")
    for row, obj in enumerate(hub.rows(src, split), start=1):
        require_fields(obj, {"idx": dict}, path, line=row)
        require_fields(obj["idx"], {"passage": int, "query": int}, path, line=row)
        qid = str(obj["idx"]["query"])
        require_fields(obj, {"passage": str, "query": str, "entity_spans": dict, "answers": list}, path,
                       line=row, item=qid)
        spans = obj["entity_spans"]
        require_fields(spans, {"text": list, "start": list, "end": list}, path, line=row, item=qid)
        if not len(spans["text"]) == len(spans["start"]) == len(spans["end"]):
            raise DataFormatError(path, "entity_spans' text, start and end lists differ in length", line=row, item=qid)
        raw = obj["passage"]
        # the copy's ends are exclusive; the checks take the files' inclusive ends
        ents = _spans(raw, [(s, e - 1) for s, e in zip(spans["start"], spans["end"])], path, row, qid, "entity")
        for k, (text, (s, e)) in enumerate(zip(spans["text"], ents)):
            if raw[s:e] != text:
                raise DataFormatError(path, f"entity {k}: text {text!r:.40} differs from the passage text "
                                            f"{raw[s:e]!r:.40} at its span ({s}, {e - 1})", line=row, item=qid)
        if not ents:
            raise DataFormatError(path, "the query has no candidate entities (the passage lists none)", line=row,
                                  item=qid)
        texts = set(spans["text"])
        for k, a in enumerate(obj["answers"]):
            if not isinstance(a, str) or a not in texts:
                raise DataFormatError(path, f"answer {k} {a!r:.40} is none of the passage's entities",
                                      line=row, item=qid)
        if labelled and not obj["answers"]:
            raise DataFormatError(path, "no answer (this split is labelled)", line=row, item=qid)
        query_ids.add(obj["idx"]["query"], f"line {row}", line=row, item=qid)
        gold = set(obj["answers"])
        answers = [(raw[s:e], (s, e)) for s, e in sorted(ents) if raw[s:e] in gold]
        out.append(_build(f"superglue:{qid}", raw, render_passage(raw), ents, _query(obj["query"], path, row, qid),
                          answers, "superglue", {"passage_id": str(obj["idx"]["passage"]), "news_source": "",
                                                 "file": path.name}))
    return list(require_items(out, path, "queries"))


# --------------------------------------------------------------------------- the data folder

@dataclass(frozen=True)
class SourceFile:
    source: str  # official | superglue | fewglue | clues | explorer | hub
    role: str  # train | eval | test (test: answers hidden)
    path: Path


#: Where each layout lives inside ``$RCSTUDY_DATA/record`` and what it is used for.
LAYOUT: tuple[tuple[str, str, str], ...] = (
    ("official", "train", "train.json"), ("official", "eval", "dev.json"), ("official", "test", "test.json"),
    ("superglue", "train", "train.jsonl"), ("superglue", "eval", "val.jsonl"), ("superglue", "test", "test.jsonl"),
    ("fewglue", "train", "fewglue/train.jsonl"), ("fewglue", "eval", "fewglue/dev32.jsonl"),
    ("clues", "train", "clues/record_train_[123]0_[1-5].jsonl"), ("clues", "eval", "clues/record_test.jsonl"),
    ("explorer", "eval", "explorer/examples.json"),
)
FULL_SOURCES = ("official", "superglue")
READERS = {"official": load_official, "superglue": load_superglue, "fewglue": load_superglue,
           "clues": load_clues, "explorer": load_explorer}


def record_dir() -> Path:
    return data_dir() / "record"


def discover(root: Path | None = None) -> list[SourceFile]:
    """The ReCoRD files present under ``root`` (default ``$RCSTUDY_DATA/record``).

    With the full official dev set (``dev.json`` or ``val.jsonl``) only the full releases are
    used; otherwise every public subset found (FewGLUE, CLUES, explorer pages).
    """
    root = Path(root) if root is not None else record_dir()
    check_folder("record", root)
    found = [SourceFile(src, role, p) for src, role, pattern in LAYOUT for p in sorted(root.glob(pattern))]
    if any(f.source in FULL_SOURCES and f.role == "eval" for f in found):
        found = [f for f in found if f.source in FULL_SOURCES]
    if not any(f.role == "eval" for f in found):
        raise DataFileMissing(root / "dev.json", "record",
                              f"No ReCoRD evaluation file under {root}: put the official dev.json "
                              "(https://sheng-z.github.io/ReCoRD-explorer/), SuperGLUE's val.jsonl, or the "
                              "public subsets fewglue/, clues/, explorer/ there (see the book's data table).")
    return found


def load_file(path: Path, source: str | None = None) -> list[ClozeQuery]:
    """Read one file, choosing the reader from ``source`` or else from the file itself."""
    path = Path(path)
    if source is None:
        if path.suffix == ".jsonl":
            first = next(iter_jsonl(path), (None, {}))[1]
            source = "clues" if "context" in first else "superglue"
        else:
            doc_head = read_text(path)[:200].lstrip()
            source = "explorer" if doc_head.startswith("[") else "official"
    return READERS[source](path, source=source)


def normalise_text(text: str) -> str:
    return " ".join(text.split())


def passage_key(q: ClozeQuery) -> str:
    return hashlib.sha1(normalise_text(q.passage).encode()).hexdigest()[:16]


def query_key(q: ClozeQuery) -> str:
    """Identity of a query across layouts: its passage and query text, whitespace-normalised."""
    return hashlib.sha1(f"{passage_key(q)}\0{normalise_text(q.query)}".encode()).hexdigest()[:16]


def deduplicate(queries: Iterable[ClozeQuery]) -> tuple[list[ClozeQuery], list[tuple[str, str]]]:
    """Keep one copy of each query (by :func:`query_key`), preferring :data:`SOURCE_PRIORITY` order.

    Returns the kept queries in input order and, per dropped copy, ``(its source, kept source)``.
    """
    queries = list(queries)
    rank = {s: i for i, s in enumerate(SOURCE_PRIORITY)}
    best: dict[str, ClozeQuery] = {}
    for q in sorted(queries, key=lambda q: rank.get(q.source, len(rank))):
        best.setdefault(query_key(q), q)
    kept = [q for q in queries if best[query_key(q)] is q]
    dropped = [(q.source, best[query_key(q)].source) for q in queries if best[query_key(q)] is not q]
    return kept, dropped


@dataclass
class RecordData:
    """Every ReCoRD query available, split into train / eval (labelled) / test (hidden answers)."""

    mode: str  # "official" or "local subsets"
    train: list[ClozeQuery]
    eval: list[ClozeQuery]
    test: list[ClozeQuery]
    files: list[SourceFile]
    read: dict[str, int] = field(default_factory=dict)  # queries read per file
    duplicates: list[tuple[str, str]] = field(default_factory=list)  # (dropped copy's source, kept source)
    train_dropped_for_overlap: int = 0

    @property
    def paths(self) -> list[Path]:
        return [f.path for f in self.files]


def load_record(root: Path | None = None, source: str = hub.FOLDER) -> RecordData:
    """Load, deduplicate and split everything :func:`discover` finds (or the splits of another
    ``source``, see :mod:`rcstudy.data.hub`).

    Train queries whose passage also appears in the evaluation set are dropped, so that the
    evaluation is on unseen passages (the official splits share no passage).
    """
    src = hub.resolve("record", source)
    pooled, read, files = [], {}, []
    if src is not None:
        for role in ("train", "eval", "test"):  # the copy's splits, named as the roles here
            qs = [replace(q, meta={**q.meta, "role": role}) for q in read_hub_split(src, role)]
            shards = hub.files(src, [role])  # one Arrow file per split unless it is very large
            for f in shards:
                files.append(SourceFile("hub", role, f))
                read[src.where(role) + (f" {f.name}" if len(shards) > 1 else "")] = hub.rows_in(f)
            pooled += qs
    else:
        root = Path(root) if root is not None else record_dir()
        files = discover(root)
        for f in files:
            qs = [replace(q, meta={**q.meta, "role": f.role}) for q in load_file(f.path, f.source)]
            read[str(f.path.relative_to(root))] = len(qs)
            pooled += qs
    # CLUES' nested training files repeat queries, and the subsets overlap each other; a query in
    # both an evaluation and a training file stays in the evaluation set
    roles = ("eval", "test", "train")
    kept, duplicates = deduplicate(sorted(pooled, key=lambda q: roles.index(q.meta["role"])))
    split = {role: [q for q in kept if q.meta["role"] == role] for role in ("train", "eval", "test")}
    eval_passages = {passage_key(q) for q in split["eval"]}
    train = [q for q in split["train"] if passage_key(q) not in eval_passages]
    return RecordData(
        mode="official" if src is not None or any(f.source in FULL_SOURCES for f in files) else "local subsets",
        train=train, eval=split["eval"], test=split["test"], files=files, read=read,
        duplicates=duplicates, train_dropped_for_overlap=len(split["train"]) - len(train),
    )


# --- the dataset, as the registry lists it ------------------------------------------------------

def splits(source: str = hub.FOLDER) -> dict[str, tuple[str, list]]:
    """The training, evaluation and test queries the source has (deduplicated as the chapter reads them)."""
    data = load_record(source=source)
    return {s: ("cloze", qs) for s, qs in (("train", data.train), ("eval", data.eval), ("test", data.test)) if qs}


RELEASES = (
    DatasetInfo(
        "record", "record", (),
        "https://sheng-z.github.io/ReCoRD-explorer/ (official); SuperGLUE; FewGLUE; microsoft/CLUES",
        "ReCoRD: research use (news articles); FewGLUE and CLUES: MIT",
        "Any of: official train.json/dev.json, SuperGLUE train.jsonl/val.jsonl, fewglue/, clues/, explorer/.",
        HubCopy("aps/super_glue", {"train": "train", "eval": "validation", "test": "test"},
                "one row per query: passage (raw, with @highlight markers), query, entities (distinct texts), "
                "entity_spans {text, start, end (exclusive)} sorted by start, answers (distinct texts, "
                "sorted; none in test), idx {passage, query}",
                "other (ReCoRD: research use of news articles)", revision="refs/convert/parquet",
                data_dir="record",
                notes="SuperGLUE's release (100,730 / 10,000 / 10,000 queries); the copy drops the news source "
                      "and the answers' spans, so every mention of a gold text counts as an answer span"),
        # the official release, SuperGLUE's, FewGLUE's ReCoRD folder (unlabeled.jsonl is not read),
        # CLUES' ReCoRD files (10, 20 and 30 training queries, 5 draws each) and the explorer's pages
        known_files=("train.json", "dev.json", "test.json", "train.jsonl", "val.jsonl", "test.jsonl",
                     "fewglue/train.jsonl", "fewglue/dev32.jsonl", "fewglue/unlabeled.jsonl",
                     "clues/record_test.jsonl", *(f"clues/record_train_{n}_{k}.jsonl" for n in (10, 20, 30)
                                                  for k in range(1, 6)),
                     "explorer/examples.json", "explorer/dataset_readme.txt"),
        splits=splits,
    ),
)
