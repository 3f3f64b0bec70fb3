"""RULE (Kawabata & Sugawara, 2023): ReClor main questions and their rationale subquestions.

The official release (github.com/nii-cl/rule) has three kinds of files, read here as they are:

* ``mainq.jsonl`` — one ReClor *train* question per line: ``id`` (ReClor ``id_string``),
  ``context``, ``question``, ``answer0``..``answer3``, ``label``;
* ``subq_split_{1..5}.jsonl`` (or their concatenation ``subq_all.jsonl``) — one subquestion per
  line: ``id``, ``main_id``, ``context``, ``question``, ``answer0``..``answer3`` (the four
  rationales written for the main question), ``label``, ``main_question`` (``{context, question,
  option}``: the main option the subquestion asks about) and ``main_option_correctness``
  (``true``: a *selective* subquestion, made from the correct option; ``false``: *eliminative*);
* ``prompts.json`` — the few-shot exemplars and the zero-shot instruction used in the paper.

Rows may also give the options as one list ``answers`` instead of ``answer0``..``answer3``; either
way a question has exactly four options. Subquestion ids (``train_1_sub4``) are not option
indices: the main option is found by matching ``main_question.option`` against the main
question's options.

Every file must hold at least one question, ids are unique, ``label`` is an integer option index
(never ``true``/``false``), and the fields a subquestion repeats from its main question must agree
with it: the id's prefix (``train_1`` of ``train_1_sub4``) with ``main_id``, ``main_question.context``
with the main context, ``main_question.question`` with the main question, and
``main_option_correctness`` with the main label. Tolerated variant: in the release three
subquestions of ``train_1287`` quote the main question with ``>`` where ``mainq.jsonl`` has the
HTML entity ``&gt;``, so questions are compared after HTML unescaping.

A question's context, question and options must not be empty (whitespace and invisible format
characters such as U+200B do not count) and its options must differ from each other. The splits
are ``subq_split_1.jsonl`` to ``subq_split_5.jsonl`` exactly: any other file in the folder (a stray
``subq_split_6.jsonl``) is refused, naming it, and so is a subquestion found in two splits (the
same id, or the same context, question and options, normalised), naming both files and lines.
In ``prompts.json`` every list must have the shape of the release's (a family per shot count,
each with as many batches of ``context``, ``question``, ``options``, ``label`` and ``rationales``
as ``prompt`` has strings, each batch with one entry per shot): any other shape is refused, naming
the family, batch and exemplar.
"""

from __future__ import annotations

import html
import re
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ..errors import DataFileMissing, DataFormatError
from .io import (SplitOverlap, UniqueKeys, check_texts, item_key, iter_jsonl, located, optional_fields, read_json,
                 require_fields, require_index, require_items)
from .records import MCItem
from .registry import DATASETS, DatasetInfo, check_folder, dataset_dir, dataset_file

NONE_OPTION = "None of the above choices"
N_OPTIONS = 4

#: Counts of the official release (nii-cl/rule, commit ace6fb6). :func:`check_release` compares a
#: loaded copy with them and warns on any difference (expected for the small test fixtures).
RELEASE_COUNTS = {
    "main questions": 943,
    "subquestions": 3003,
    "selective subquestions": 785,
    "eliminative subquestions": 2218,
    "subquestions with a None option": 1102,
    "subquestions whose answer is None": 222,
    "main questions with subquestions in more than one split": 100,
}

SHOT_KEYS = {"0shot": 0, "1shot": 1, "5shots": 5}
#: The released subquestion splits (``subq_split_{k}.jsonl``).
SPLITS = (1, 2, 3, 4, 5)
#: Families whose exemplars give the answer only (no rationale): ReClor (``vanilla``) and RULE (``subq``).
ANSWER_ONLY_FAMILIES = ("vanilla", "subq")


# --------------------------------------------------------------------------------------------
# Questions


@dataclass(frozen=True)
class RuleData:
    """The main questions and subquestions of RULE (or a subset of them).

    Every subquestion is an :class:`MCItem` whose ``meta`` holds ``main_id``, ``split`` (1–5, or
    ``None`` when read from ``subq_all.jsonl``), ``main_option`` (index of the main option it is
    about), ``selective``, ``has_none``, ``none_correct``, ``main_question`` and ``main_option_text``.
    """

    mains: tuple[MCItem, ...]
    subs: tuple[MCItem, ...]

    def __post_init__(self):
        by_main: dict[str, list[MCItem]] = {m.id: [] for m in self.mains}
        for s in self.subs:
            by_main[s.meta["main_id"]].append(s)
        object.__setattr__(self, "_main_index", {m.id: m for m in self.mains})
        object.__setattr__(self, "_sub_index", {s.id: s for s in self.subs})
        object.__setattr__(self, "_subs_by_main", by_main)

    def main(self, main_id: str) -> MCItem:
        return self._main_index[main_id]

    def sub(self, sub_id: str) -> MCItem:
        return self._sub_index[sub_id]

    def subs_of(self, main_id: str) -> list[MCItem]:
        return list(self._subs_by_main[main_id])

    @property
    def splits(self) -> list[int]:
        return sorted({s.meta["split"] for s in self.subs if s.meta["split"] is not None})

    def subset(self, main_ids: Sequence[str]) -> "RuleData":
        """These main questions with all of their subquestions."""
        keep = set(main_ids)
        return RuleData(tuple(m for m in self.mains if m.id in keep),
                        tuple(s for s in self.subs if s.meta["main_id"] in keep))

    def split(self, k: int) -> "RuleData":
        """The subquestions of released split ``k`` and the main questions they belong to."""
        subs = tuple(s for s in self.subs if s.meta["split"] == k)
        mains = {s.meta["main_id"] for s in subs}
        return RuleData(tuple(m for m in self.mains if m.id in mains), subs)

    def without_context(self) -> "RuleData":
        """The same questions with every context removed (the context-ablated setting)."""
        return RuleData(tuple(replace(m, context="") for m in self.mains),
                        tuple(replace(s, context="") for s in self.subs))

    def frame(self) -> pd.DataFrame:
        """One row per subquestion with the fields the analyses group by."""
        n_subs = {m: len(v) for m, v in self._subs_by_main.items()}
        return pd.DataFrame([
            {"id": s.id, "main_id": s.meta["main_id"], "split": s.meta["split"], "label": s.label,
             "main_option": s.meta["main_option"], "selective": s.meta["selective"],
             "has_none": s.meta["has_none"], "none_correct": s.meta["none_correct"],
             "subs_of_main": n_subs[s.meta["main_id"]]}
            for s in self.subs
        ]).set_index("id")


def _options(obj: dict, path: Path, line: int, item: str) -> tuple[str, ...]:
    if "answers" in obj:
        require_fields(obj, {"answers": list}, path, line=line, item=item)
        options = obj["answers"]
    else:
        keys = sorted((k for k in obj if re.fullmatch(r"answer\d+", k)), key=lambda k: int(k[6:]))
        if not keys:
            raise DataFormatError(path, "no options: expected answer0..answer3 or a list 'answers'",
                                  line=line, item=item)
        if keys != [f"answer{i}" for i in range(len(keys))]:
            raise DataFormatError(path, f"options are not numbered answer0..answer{len(keys) - 1}: {keys}",
                                  line=line, item=item)
        options = [obj[k] for k in keys]
    if len(options) != N_OPTIONS or not all(isinstance(o, str) for o in options):
        raise DataFormatError(path, f"expected {N_OPTIONS} option strings, got {len(options)} options",
                              line=line, item=item)
    return tuple(options)


def _read_mains(path: Path) -> list[MCItem]:
    mains, ids = [], UniqueKeys(path, "main question id")
    for line, obj in iter_jsonl(path):
        with located(path, line=line, item=obj.get("id") if isinstance(obj.get("id"), str) else None):
            require_fields(obj, {"id": str}, path, line=line)
            item = obj["id"]
            require_fields(obj, {"context": str, "question": str, "label": int}, path, line=line, item=item)
            ids.add(item, f"line {line}", line=line, item=item)
            options = _options(obj, path, line, item)
            check_texts(path, {"context": obj["context"], "question": obj["question"]}, options,
                        names=[f"answer{k}" for k in range(len(options))], line=line, item=item)
            mains.append(MCItem(item, obj["context"], obj["question"], options,
                                require_index(obj["label"], len(options), path, line=line, item=item),
                                {"source_line": line}))
    return list(require_items(mains, path, "main questions"))


def _read_subs(path: Path, split: int | None, mains: Mapping[str, MCItem], seen: dict[str, str]) -> list[MCItem]:
    subs = []
    for line, obj in iter_jsonl(path):
        with located(path, line=line, item=obj.get("id") if isinstance(obj.get("id"), str) else None):
            subs.append(_read_sub(path, line, obj, split, mains, seen))
    return list(require_items(subs, path, "subquestions"))


def _read_sub(path: Path, line: int, obj: dict, split: int | None, mains: Mapping[str, MCItem],
              seen: dict[str, str]) -> MCItem:
    require_fields(obj, {"id": str}, path, line=line)
    item = obj["id"]
    require_fields(obj, {"main_id": str, "context": str, "question": str, "label": int,
                         "main_question": dict, "main_option_correctness": bool},
                   path, line=line, item=item)
    require_fields(obj["main_question"], {"question": str, "option": str}, path, line=line, item=item)
    optional_fields(obj["main_question"], {"context": str}, path, line=line, item=item)
    if item in seen:
        raise DataFormatError(path, f"duplicate subquestion id (first at {seen[item]})"
                                    f"{'' if seen[item].startswith(path.name + ':') else ': leakage between splits'}",
                              line=line, item=item)
    seen[item] = f"{path.name}:{line}"
    main = mains.get(obj["main_id"])
    if main is None:
        raise DataFormatError(path, f"main_id {obj['main_id']!r} is not in mainq.jsonl", line=line, item=item)
    if item.rsplit("_sub", 1)[0] != main.id:
        raise DataFormatError(path, f"the id names main question {item.rsplit('_sub', 1)[0]!r} but main_id "
                                    f"is {main.id!r}", line=line, item=item)
    if obj["main_question"].get("context", main.context) != main.context:
        raise DataFormatError(path, f"main_question.context differs from the context of {main.id}",
                              line=line, item=item)
    if html.unescape(obj["main_question"]["question"]) != html.unescape(main.question):
        raise DataFormatError(path, f"main_question.question differs from the question of {main.id}",
                              line=line, item=item)
    option_text = obj["main_question"]["option"]
    matches = [i for i, o in enumerate(main.options) if o.strip() == option_text.strip()]
    if not matches:
        raise DataFormatError(path, f"main_question.option matches none of {main.id}'s options",
                              line=line, item=item)
    main_option = matches[0]
    selective = obj["main_option_correctness"]
    if selective != (main_option == main.label):
        raise DataFormatError(
            path, f"main_option_correctness={selective} but option {main_option} of {main.id} is "
            f"{'the right' if main_option == main.label else 'a wrong'} answer", line=line, item=item)
    options = _options(obj, path, line, item)
    check_texts(path, {"context": obj["context"], "question": obj["question"]}, options,
                names=[f"answer{k}" for k in range(len(options))], line=line, item=item)
    label = require_index(obj["label"], len(options), path, line=line, item=item)
    none_at = [i for i, o in enumerate(options) if o.strip() == NONE_OPTION]
    return MCItem(item, obj["context"], obj["question"], options, label, {
        "main_id": main.id, "split": split, "main_option": main_option, "selective": selective,
        "has_none": bool(none_at), "none_correct": label in none_at, "none_position": none_at[0] if none_at else None,
        "main_question": obj["main_question"]["question"], "main_option_text": main.options[main_option],
        "context_matches_main": obj["context"] == main.context, "source_line": line,
    })


def _require(folder: Path | None, name: str) -> Path:
    if folder is None:
        return dataset_file("rule", name)
    path = Path(folder) / name
    if not path.is_file():
        raise DataFileMissing(path, "rule", f"put the file {name} of the RULE release ({DATASETS['rule'].source}) "
                                            f"in {path.parent}")
    return path


def subquestion_files(folder: Path | None = None) -> list[tuple[int | None, Path]]:
    """``(split, path)`` of the released split files, else ``[(None, subq_all.jsonl)]``."""
    root = Path(folder) if folder is not None else dataset_dir("rule")
    check_folder("rule", root)  # refuses any other file, e.g. a stray subq_split_6.jsonl
    found = [(k, root / f"subq_split_{k}.jsonl") for k in SPLITS if (root / f"subq_split_{k}.jsonl").is_file()]
    if found:
        return found
    return [(None, _require(folder, "subq_all.jsonl"))]


def load_rule(folder: Path | str | None = None) -> RuleData:
    """Load the release from ``folder`` (default ``$RCSTUDY_DATA/rule``), checking every join.

    A subquestion must point at a main question of ``mainq.jsonl``, name one of its options, and
    agree with its label about whether that option is the right one; otherwise the error names
    the file, the line and the subquestion.
    """
    folder = Path(folder) if folder is not None else None
    check_folder("rule", folder)
    mains = _read_mains(_require(folder, "mainq.jsonl"))
    index = {m.id: m for m in mains}
    subs: list[MCItem] = []
    seen: dict[str, str] = {}
    overlap = SplitOverlap()
    for split, path in subquestion_files(folder):
        read = _read_subs(path, split, index, seen)
        keys = [item_key(s.context, s.question, s.options) for s in read]
        for s, key in zip(read, keys):
            overlap.check(str(split), path, key, s.id, line=s.meta["source_line"], item=s.id, id_space=None)
        for s, key in zip(read, keys):
            overlap.add(str(split), path, key, s.id, line=s.meta["source_line"], id_space=None)
        subs += read
    return RuleData(tuple(mains), tuple(subs))


def release_counts(data: RuleData) -> dict[str, int]:
    """The quantities of :data:`RELEASE_COUNTS`, counted on ``data``."""
    f = data.frame()
    splits_per_main = f.groupby("main_id")["split"].nunique()
    return {
        "main questions": len(data.mains),
        "subquestions": len(data.subs),
        "selective subquestions": int(f["selective"].sum()),
        "eliminative subquestions": int((~f["selective"]).sum()),
        "subquestions with a None option": int(f["has_none"].sum()),
        "subquestions whose answer is None": int(f["none_correct"].sum()),
        "main questions with subquestions in more than one split": int((splits_per_main > 1).sum()),
    }


def check_release(data: RuleData) -> pd.DataFrame:
    """Counts of ``data`` beside the official release's; warns when they differ (e.g. on a subset)."""
    found = release_counts(data)
    table = pd.DataFrame({"release": RELEASE_COUNTS, "loaded": found})
    table["matches"] = table["release"] == table["loaded"]
    if not table["matches"].all():
        differ = ", ".join(table.index[~table["matches"]])
        warnings.warn(f"the RULE data loaded differs from the official release in: {differ} "
                      "(expected for a subset or the test fixtures)", stacklevel=2)
    return table


def compare_with_reclor(data: RuleData, reclor_items: Sequence[MCItem]) -> pd.DataFrame:
    """Join the main questions to ReClor items by id; one row per main with what differs.

    Columns: ``found`` (the id is among ``reclor_items``) and one boolean per field that matches.
    """
    reclor = {it.id: it for it in reclor_items}
    rows = []
    for m in data.mains:
        r = reclor.get(m.id)
        rows.append({"id": m.id, "found": r is not None,
                     "context": r is not None and r.context == m.context,
                     "question": r is not None and r.question == m.question,
                     "options": r is not None and tuple(r.options) == tuple(m.options),
                     "label": r is not None and r.label == m.label})
    return pd.DataFrame(rows).set_index("id")


# --------------------------------------------------------------------------------------------
# Prompts


@dataclass(frozen=True)
class Exemplar:
    context: str
    question: str
    options: tuple[str, ...]
    label: int
    rationale: object = None  # the CoT families: a string, or one string per option

    @property
    def none_correct(self) -> bool:
        return self.options[self.label].strip() == NONE_OPTION


@dataclass(frozen=True)
class PromptBatch:
    """One released prompt: ``text`` is the stored string, used verbatim."""

    shots: int
    family: str  # vanilla (ReClor exemplars), subq (RULE exemplars), cot_step_random, ...
    batch: int
    text: str
    exemplars: tuple[Exemplar, ...]

    @property
    def has_none_correct_exemplar(self) -> bool:
        return any(e.none_correct for e in self.exemplars)


@dataclass(frozen=True)
class RulePrompts:
    instruction: str  # the zero-shot task instruction
    batches: Mapping[tuple[int, str], tuple[PromptBatch, ...]]

    def families(self, shots: int) -> list[str]:
        return [f for (s, f) in self.batches if s == shots]

    def get(self, shots: int, family: str, batch: int) -> PromptBatch:
        try:
            batches = self.batches[(shots, family)]
        except KeyError:
            raise KeyError(f"prompts.json has no {shots}-shot family {family!r}; "
                           f"it has {self.families(shots)}") from None
        return batches[batch % len(batches)]

    def without_context(self) -> "RulePrompts":
        """The answer-only families (``vanilla``, ``subq``) rebuilt with every exemplar's context removed.

        Their stored strings are exactly the exemplars in :func:`exemplar_text`'s layout joined by a
        space, so the rebuilt prompts differ from the released ones only by the missing contexts.
        The chain-of-thought families are left out: their rationales refer to the context.
        """
        batches = {}
        for (shots, family), bs in self.batches.items():
            if family not in ANSWER_ONLY_FAMILIES:
                continue
            rebuilt = []
            for b in bs:
                exemplars = tuple(replace(e, context="") for e in b.exemplars)
                rebuilt.append(replace(b, text=" ".join(exemplar_text(e) for e in exemplars), exemplars=exemplars))
            batches[(shots, family)] = tuple(rebuilt)
        return RulePrompts(self.instruction, batches)


def _prompt_batches(path: Path, key: str, shots: int, fam) -> tuple[PromptBatch, ...]:
    """One few-shot family of ``prompts.json``, every list checked for its shape (a wrong shape is
    an error naming the family, batch and exemplar, never a ``TypeError`` or ``IndexError``)."""
    name = fam.get("name") if isinstance(fam, dict) else None
    where = f"{key}/{name}" if isinstance(name, str) else key
    pr = fam.get("prompt") if isinstance(fam, dict) else None
    if not isinstance(name, str) or not isinstance(pr, dict):
        raise DataFormatError(path, "expected {'name': str, 'prompt': {...}}", item=where)
    with located(path, item=where):
        return _checked_batches(path, where, shots, name, pr)


def _checked_batches(path: Path, where: str, shots: int, name: str, pr: dict) -> tuple[PromptBatch, ...]:
    require_fields(pr, {"context": list, "question": list, "options": list, "label": list, "prompt": list},
                   path, item=where)
    n = len(pr["prompt"])
    for field in ("context", "question", "options", "label"):
        if len(pr[field]) != n:
            raise DataFormatError(path, f"{field!r} has {len(pr[field])} batches but 'prompt' has {n}", item=where)
    rationales = pr.get("rationales")
    if rationales is not None and not (isinstance(rationales, list) and len(rationales) == n):
        raise DataFormatError(path, f"'rationales' should be null or a list of {n} batches", item=where)
    batches = []
    for b in range(n):
        exemplars = []
        for field in ("context", "question", "options", "label") + (("rationales",) if rationales else ()):
            got = pr[field][b]
            # the release's 1shot/cot_step_complex gives 5 rationales per 1-shot batch: the first is used
            if not isinstance(got, list) or len(got) < shots or (len(got) != shots and field != "rationales"):
                size = f"{len(got)} exemplars" if isinstance(got, list) else f"no list ({type(got).__name__})"
                raise DataFormatError(path, f"batch {b} has {size}, expected {shots}" if field == "context" else
                                      f"{field!r} of batch {b} has {size}, expected {shots}", item=where)
        if not isinstance(pr["prompt"][b], str):
            raise DataFormatError(path, f"prompt of batch {b} is not a string", item=where)
        for i in range(shots):
            at = f"{where} batch {b} exemplar {i}"
            context, question, options = pr["context"][b][i], pr["question"][b][i], pr["options"][b][i]
            if not (isinstance(context, str) and isinstance(question, str)):
                raise DataFormatError(path, "context and question should be strings", item=at)
            if not (isinstance(options, list) and len(options) >= 2 and all(isinstance(o, str) for o in options)):
                raise DataFormatError(path, f"options should be a list of option strings, got {options!r:.60}", item=at)
            label = pr["label"][b][i]
            if str(label) not in {str(k) for k in range(len(options))}:
                raise DataFormatError(path, f"label {label!r} is not an option index", item=at)
            rationale = rationales[b][i] if rationales else None
            if not (rationale is None or isinstance(rationale, str)
                    or isinstance(rationale, list) and all(isinstance(r, str) for r in rationale)):
                raise DataFormatError(path, f"rationale should be a string or a list of strings, got "
                                            f"{type(rationale).__name__}", item=at)
            exemplars.append(Exemplar(context, question, tuple(options), int(label),
                                      tuple(rationale) if isinstance(rationale, list) else rationale))
        batches.append(PromptBatch(shots, name, b, pr["prompt"][b], tuple(exemplars)))
    return tuple(batches)


def load_prompts(folder: Path | str | None = None) -> RulePrompts:
    """Read ``prompts.json``: the zero-shot instruction and every few-shot family and batch."""
    folder = Path(folder) if folder is not None else None
    check_folder("rule", folder)
    path = _require(folder, "prompts.json")
    raw = read_json(path)
    if not isinstance(raw, dict) or "0shot" not in raw:
        raise DataFormatError(path, "expected an object with keys '0shot', '1shot', '5shots'")
    zero = raw["0shot"]
    if not (isinstance(zero, list) and zero and isinstance(zero[0], dict) and isinstance(zero[0].get("prompt"), str)):
        raise DataFormatError(path, "'0shot' should be [{'name': ..., 'prompt': <instruction>}]", item="0shot")
    batches = {}
    for key, shots in SHOT_KEYS.items():
        if shots == 0 or key not in raw:
            continue
        if not isinstance(raw[key], list):
            raise DataFormatError(path, f"{key!r} should be a list of prompt families", item=key)
        for k, fam in enumerate(raw[key]):
            fb = _prompt_batches(path, f"{key}" if isinstance(fam, dict) else f"{key}[{k}]", shots, fam)
            family = fb[0].family if fb else fam["name"]
            if (shots, family) in batches:
                raise DataFormatError(path, f"family {family!r} is given twice", item=f"{key}/{family}")
            batches[(shots, family)] = fb
    return RulePrompts(zero[0]["prompt"], batches)


def question_block(context: str, question: str, options: Sequence[str], rationales: Sequence[str] = ()) -> str:
    """A question in the released prompt layout, up to and including ``Answer:``.

    An empty ``context`` drops the ``Context:`` line (the context-ablated setting). Each of
    ``rationales`` adds a ``Rationale:`` line after the options (the paper's Table 5 setting).
    """
    lines = [*([f"Context: {context}"] if context else []), f"Question: {question}",
             *(f"Option{i}: {o}" for i, o in enumerate(options)), *(f"Rationale: {r}" for r in rationales)]
    return " \n ".join(lines) + " \n Answer:"


def exemplar_text(e: Exemplar) -> str:
    """One answer-only exemplar exactly as the ``vanilla`` and ``subq`` prompts write it."""
    return question_block(e.context, e.question, e.options) + f" The answer is Option{e.label} \n"


def exemplar_keys(batch: PromptBatch) -> set[tuple[str, tuple[str, ...]]]:
    """(question, options) of each exemplar: evaluation items with these keys leak into the prompt.

    The context is not part of the key, so a leak is still found when contexts are removed.
    """
    return {(e.question, tuple(e.options)) for e in batch.exemplars}


# --- the dataset, as the registry lists it ------------------------------------------------------

def splits(source: str = "folder") -> dict[str, tuple[str, list]]:
    """The main questions and the subquestions (from the folder: RULE has no Hub copy)."""
    data = load_rule()
    return {"main": ("mc", list(data.mains)), "sub": ("subquestion", list(data.subs))}


def check(source: str = "folder") -> None:
    """What the chapter reads: the questions and the prompts."""
    load_rule()
    load_prompts()


RELEASES = (
    DatasetInfo(
        "rule", "rule", ("mainq.jsonl", "subq_all.jsonl", "prompts.json"),
        "https://github.com/nii-cl/rule", "none stated",
        "Main questions are ReClor train items; subq_split_{1..5}.jsonl are the released splits. "
        "No public Hub copy was found.",
        known_files=("mainq.jsonl", "subq_all.jsonl", "prompts.json", *(f"subq_split_{k}.jsonl" for k in range(1, 6))),
        splits=splits, check=check,
    ),
)
