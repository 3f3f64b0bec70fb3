"""MetaLogic (Huang et al., 2022): logic metagraphs over ReClor passages.

A *metagraph* has three parts:

1. the meta structure: sentences (meta nodes ``sent1, sent2, ...``) joined by **support**
   (``->``) and **rebut** (``=>``) steps, each step with a single premise;
2. one propositional **formula** per node: a conjunction of triples ``m(v_i) r m(v_j)`` over
   the node's atomic-sentence variables, with ``r`` in {→, ∧, ∨} and ``m`` a sequence of the
   unary operators {¬, □, ◇};
3. one **degree of certainty** per node, a function of its global unary operators after the
   S5 reduction (□ necessary 4, ◇ possible 3, none or ¬ contingent 2, ¬□ unnecessary 1,
   ¬◇ impossible 0).

The official release is three JSON Lines files (``metalogic_{train,dev,test}.json`` despite
the suffix). :func:`load_split` reads them into :class:`Metagraph` records, checking every
field (a malformed line raises :class:`~rcstudy.errors.DataFormatError` naming file and line).
The redundant fields must agree: each node's ``degree_label`` with the degree of its
``global_operators``, the sentences with ``meta_info`` context + option, and, where a line has
the official ``gold_item`` copy, its ``proof_str`` and ``degree_str_dict`` with ``proof`` and the
degree labels. An empty file and a repeated ``id_string`` are refused, and so are an empty sentence
or question (whitespace and invisible format characters such as U+200B do not count) and a proof
whose steps form a self-loop (``sent1 -> sent1``) or a cycle (``sent1 -> sent2; sent2 => sent1``;
support and rebut steps alike), except the release's one self-loop (:data:`KNOWN_SELF_LOOPS`).
:func:`load_split` also refuses a file in the folder that is not one of the three, and a passage
found in two splits (the same id, or the same sentences and question, normalised) naming both
files and lines, except the release's one repeat (:data:`KNOWN_REPEATS`).

The module also holds the text forms the models read and write: the linearisations of the
paper's All-at-Once (:func:`once_source`, :func:`once_target`), Multitask
(:func:`multitask_examples`) and MetGen (:func:`metgen_controller_examples`,
:func:`metgen_module_examples`) settings, exactly as the official code builds them, and the
parsers back from generated text (:func:`parse_once`, :func:`parse_proof`,
:func:`parse_triples`, :func:`parse_degree`), made tolerant of WordPiece spacing by
:func:`normalise`.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from ..errors import DataFormatError
from .io import (SplitOverlap, UniqueKeys, is_blank, iter_jsonl, located, optional_fields, parsed_once, require_fields,
                 require_items, text_key)
from .registry import DatasetInfo, check_folder, dataset_dir, dataset_file

SPLITS = ("train", "dev", "test")
#: The release's own self-loop: ``_train_52`` has the step ``sent1 -> sent1``. Any other is refused.
KNOWN_SELF_LOOPS = {"_train_52": frozenset({"sent1"})}
#: The release's own repeat between splits: ``train_844`` (train) and ``train_3200`` (dev) are two
#: ReClor questions with the same passage, question and kept option. Any other repeat is refused.
KNOWN_REPEATS = ({("train", "train_844"), ("dev", "train_3200")},)

# Operators as the data stores them.
NEG, BOX, DIA = "[NEG]", "[BOX]", "[DIAMOND]"
IMP, AND, OR = "[I-IMPLICATION]", "[I-CONJUNCTION]", "[I-DISJUNCTION]"
UNARY = (NEG, BOX, DIA)
BINARY = (IMP, AND, OR)
#: Other spellings the official parser accepts for the binary operators.
BINARY_ALIASES = {"[I-ENTAIL]": IMP, "[I-AND]": AND, "[I-OR]": OR}
SUPPORT, REBUT = "->", "=>"
STEP_TYPES = (SUPPORT, REBUT)

#: Display symbols (DejaVu Sans has all of them; the data's own glyphs render badly).
SYMBOL = {NEG: "¬", BOX: "□", DIA: "◇", IMP: "→", AND: "∧", OR: "∨"}
#: The words the models read and write for each operator (paper App. E.1, official code).
OPERATOR_TOKEN = {IMP: "[entail]", AND: "[and]", OR: "[or]", NEG: "[negative]", BOX: "[necessary]",
                  DIA: "[possible]"}
TOKEN_OPERATOR = {v: k for k, v in OPERATOR_TOKEN.items()}

#: Degree words, indexed by degree (0 impossible ... 4 necessary).
DEGREE_WORDS = ("impossible", "unnecessary", "contingent", "possible", "necessary")
UNRESOLVED = -1  # a degree word the parser cannot read
#: Canonical global operators of each degree (plain ¬ is contingent too).
DEGREE_OPERATORS = {0: (NEG, DIA), 1: (NEG, BOX), 2: (), 3: (DIA,), 4: (BOX,)}

#: Target-string slot names: the official code's and the paper's (Table 10).
FLAGS = {"code": ("tree", "formulae", "degree"), "paper": ("graph", "formula", "degree")}
SLOT_ALIASES = {"graph": "tree", "formula": "formulae"}
#: Task prefixes of the Multitask and MetGen settings (official code).
PREFIX = {"tree": "TREE: ", "formulae": "FORMULAE: ", "degree": "DEGREE: ", "control": "CONTROL: ",
          SUPPORT: "CONCLUSION: ", REBUT: "REBUTTAL: "}
INPUT_FORMATS = ("paper", "released")

_VAR_MARK = re.compile(r"(?:^|(?<=\s))(v\d+):")
_SID = re.compile(r"sent\d+")


# ---------------------------------------------------------------------------------------------
# Modal operators
# ---------------------------------------------------------------------------------------------

def _dual(op: str) -> str:
    return DIA if op == BOX else BOX


def s5_reduce(ops: Iterable[str]) -> tuple[str, ...]:
    """Reduce a sequence of unary operators (``ops[0]`` outermost) to its S5 normal form.

    The result is one of ``()``, ``(¬,)``, ``(□,)``, ``(◇,)``, ``(¬,□)``, ``(¬,◇)``: double
    negations cancel, □¬ = ¬◇ and ◇¬ = ¬□, and of nested modalities the innermost wins
    (□□ = □, ◇◇ = ◇, □◇ = ◇, ◇□ = □). A sequence holding anything else is returned
    unchanged, as the official ``operator_reduction`` does.
    """
    ops = tuple(ops)
    if any(o not in UNARY for o in ops):
        return ops
    neg, mod = False, None
    for o in reversed(ops):  # innermost first
        if o == NEG:
            neg = not neg
        elif mod is None:
            mod = _dual(o) if neg else o
    return ((NEG,) if neg else ()) + ((mod,) if mod else ())


def degree_of(global_ops: Iterable[str]) -> int:
    """The degree of certainty (0–4) of a node with these global operators."""
    reduced = s5_reduce(global_ops)
    if reduced == (NEG,):
        return 2
    for degree, ops in DEGREE_OPERATORS.items():
        if ops == reduced:
            return degree
    raise ValueError(f"not a sequence of unary operators: {list(global_ops)}")


def ops_text(ops: Iterable[str]) -> str:
    return "".join(SYMBOL[o] for o in ops)


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Triple:
    """One logical triple ``pre_ops pre rel con_ops con`` (``→`` points from ``pre`` to ``con``)."""

    pre_ops: tuple[str, ...]
    pre: str
    rel: str
    con_ops: tuple[str, ...]
    con: str

    def reduced(self) -> "Triple":
        return Triple(s5_reduce(self.pre_ops), self.pre, self.rel, s5_reduce(self.con_ops), self.con)

    def swapped(self) -> "Triple":
        return Triple(self.con_ops, self.con, self.rel, self.pre_ops, self.pre)

    @property
    def variables(self) -> tuple[str, str]:
        return (self.pre, self.con)

    @property
    def operators(self) -> set[str]:
        """The relation and every local unary operator (the groups of the per-operator scores)."""
        return {self.rel, *self.pre_ops, *self.con_ops}

    def linear(self) -> str:
        """The official token form, e.g. ``[negative] [necessary] v3 [entail]  v1`` (double spaces kept)."""
        words = f"{' '.join(self.pre_ops)} {self.pre} {self.rel} {' '.join(self.con_ops)} {self.con}"
        return _to_tokens(words)

    def readable(self) -> str:
        return f"{ops_text(self.pre_ops)}{self.pre} {SYMBOL[self.rel]} {ops_text(self.con_ops)}{self.con}"


@dataclass(frozen=True)
class Step:
    """One single-premise inference step ``pre -> con`` (support) or ``pre => con`` (rebut)."""

    pre: str
    type: str
    con: str

    @property
    def text(self) -> str:
        return f"{self.pre} {self.type} {self.con}"


@dataclass(frozen=True)
class Node:
    """A meta node: one (possibly merged) sentence of the passage."""

    id: str
    text: str
    text_with_vars: str  # "v1: ... v2: ..." (spans may nest or repeat text; may be empty)
    global_ops: tuple[str, ...]
    triples: tuple[Triple, ...]
    degree: int

    @property
    def spans(self) -> dict[str, str]:
        """``{"v1": text, ...}`` in order; text before ``v1`` is left out (see :attr:`prefix`)."""
        parts = _VAR_MARK.split(self.text_with_vars)
        return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}

    @property
    def prefix(self) -> str:
        return _VAR_MARK.split(self.text_with_vars)[0].strip()

    def formula(self) -> str:
        """Readable formula, e.g. ``□(v2 ∧ □v3)``; empty when the node has neither triples nor operators."""
        body = " ∧ ".join(t.readable() for t in self.triples)
        if not self.global_ops:
            return body
        return ops_text(self.global_ops) + (f"({body})" if body else "")


@dataclass(frozen=True)
class Prediction:
    """What a model says about a passage: steps (a list: duplicates count), triples and degrees by node."""

    steps: tuple[Step, ...] = ()
    triples: Mapping[str, tuple[Triple, ...]] = field(default_factory=dict)
    degrees: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Metagraph:
    """One annotated passage. ``nodes`` keeps passage order and the original (possibly gapped) ids."""

    id: str
    nodes: Mapping[str, Node]
    steps: tuple[Step, ...]
    question: str
    source: str = ""  # file:line it was read from

    @property
    def sids(self) -> list[str]:
        return list(self.nodes)

    @property
    def proof(self) -> str:
        """The official proof string, e.g. ``"sent2 -> sent1; sent4 => sent2; "``."""
        return "".join(f"{s.text}; " for s in self.steps)

    @property
    def graph_nodes(self) -> set[str]:
        return {s.pre for s in self.steps} | {s.con for s in self.steps}

    def gold(self) -> Prediction:
        """The annotation in the form predictions take (what the metrics compare against)."""
        return Prediction(self.steps, {k: tuple(t.reduced() for t in n.triples) for k, n in self.nodes.items()},
                          {k: n.degree for k, n in self.nodes.items()})

    def passage(self, with_ids: bool = True) -> str:
        """The plain passage: ``"sent1: ... sent2: ... "`` (official), or the sentences alone."""
        if with_ids:
            return "".join(f"{sid}: {n.text} " for sid, n in self.nodes.items())
        return " ".join(n.text for n in self.nodes.values())


# ---------------------------------------------------------------------------------------------
# Loader
# ---------------------------------------------------------------------------------------------

def metalogic_file(split: str) -> Path:
    if split not in SPLITS:
        raise ValueError(f"unknown MetaLogic split {split!r}; choose one of {', '.join(SPLITS)}")
    return dataset_file("metalogic", f"metalogic_{split}.json")


def load_split(split: str) -> list[Metagraph]:
    """All metagraphs of one official split (``train`` 600, ``dev`` 200, ``test`` 200); a passage
    also found in another split's file is refused (see the module notes)."""
    path = metalogic_file(split)
    check_folder("metalogic")
    graphs = parsed_once(load_metagraphs, path)
    overlap = SplitOverlap(KNOWN_REPEATS)
    for other in SPLITS:
        other_path = dataset_dir("metalogic") / f"metalogic_{other}.json"
        if other != split and other_path.is_file():
            for g in parsed_once(load_metagraphs, other_path):
                overlap.add(other, other_path, graph_key(g), g.id, line=_line(g))
    for g in graphs:
        overlap.check(split, path, graph_key(g), g.id, line=_line(g), item=g.id)
    return graphs


def graph_key(g: "Metagraph") -> tuple[str, str]:
    """What makes two passages the same: the sentences (context and option) and the question, normalised."""
    return text_key(g.passage(with_ids=False)), text_key(g.question)


def _line(g: "Metagraph") -> int | None:
    return int(g.source.rsplit(":", 1)[1]) if ":" in g.source else None


def load_metagraphs(path: Path) -> list[Metagraph]:
    """Read a MetaLogic JSON Lines file; any departure from the official format raises DataFormatError."""
    path = Path(path)
    graphs, ids = [], UniqueKeys(path, "id_string")
    for line, obj in iter_jsonl(path):
        item = obj.get("id_string") if isinstance(obj.get("id_string"), str) else None
        with located(path, line=line, item=item):
            g = _parse_item(obj, path, line)
        ids.add(g.id, f"line {line}", line=line, item=g.id)
        graphs.append(g)
    return list(require_items(graphs, path, "metagraphs"))


def _parse_item(obj: dict, path: Path, line: int) -> Metagraph:
    item = obj.get("id_string") if isinstance(obj.get("id_string"), str) else None
    require_fields(obj, {"id_string": str, "sent_dict": dict, "proof": str, "meta_info": dict}, path,
                   line=line, item=item)
    optional_fields(obj, {"gold_item": dict}, path, line=line, item=item)

    def fail(problem: str):
        raise DataFormatError(path, problem, line=line, item=item)

    meta = obj["meta_info"]
    require_fields(meta, {"context": str, "question": str, "option": str}, path, line=line, item=item)
    for what in ("context", "question", "option"):
        if is_blank(meta[what]):
            fail(f"meta_info.{what} is empty")
    if not obj["sent_dict"]:
        fail("sent_dict is empty")
    nodes = {}
    for sid, entry in obj["sent_dict"].items():
        if not _SID.fullmatch(sid):
            fail(f"sentence key {sid!r} is not of the form sentK")
        nodes[sid] = _parse_node(sid, entry, fail)
    joined = "".join(f"{sid}: {n.text} " for sid, n in nodes.items())
    if joined != meta["context"] + " " + meta["option"] + " ":
        fail("the sentences of sent_dict do not join into meta_info context + option")
    steps = parse_proof(obj["proof"], strict=True, fail=fail)
    for s in steps:
        for sid in (s.pre, s.con):
            if sid not in nodes:
                fail(f"proof step {s.text!r} names {sid}, which is not in sent_dict")
    _check_acyclic(steps, KNOWN_SELF_LOOPS.get(obj["id_string"], frozenset()), fail)
    if "gold_item" in obj:
        _check_gold_item(obj["gold_item"], obj["proof"], nodes, fail)
    return Metagraph(obj["id_string"], nodes, tuple(steps), meta["question"], f"{path.name}:{line}")


def _check_acyclic(steps: list["Step"], known_loops: frozenset, fail) -> None:
    """No step from a sentence to itself (but the release's ``known_loops``), no cycle of steps."""
    import networkx as nx

    graph = nx.DiGraph()
    for s in steps:
        if s.pre == s.con:
            if s.pre not in known_loops:
                fail(f"proof step {s.text!r} is a self-loop (a sentence supporting or rebutting itself)")
            continue
        graph.add_edge(s.pre, s.con)
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return
    fail(f"the proof's steps form a cycle: {' -> '.join([u for u, _ in cycle] + [cycle[0][0]])}")


def _check_gold_item(gold: dict, proof: str, nodes: Mapping[str, "Node"], fail) -> None:
    """The release's ``gold_item`` repeats the proof and the degrees as strings: they must agree."""
    if gold.get("proof_str") != proof:
        fail("gold_item.proof_str differs from proof")
    degrees = gold.get("degree_str_dict")
    if not isinstance(degrees, dict) or set(degrees) != set(nodes):
        fail("gold_item.degree_str_dict should give one degree word per sentence of sent_dict")
    for sid, n in nodes.items():
        if degrees[sid] != DEGREE_WORDS[n.degree]:
            fail(f"{sid}: gold_item.degree_str_dict says {degrees[sid]!r} but degree_label is {n.degree}")


def _parse_node(sid: str, entry, fail) -> Node:
    if not isinstance(entry, dict) or not isinstance(entry.get("sent"), str):
        fail(f"{sid}: needs a string field 'sent'")
    if is_blank(entry["sent"]):
        fail(f"{sid}: the sentence is empty")
    info = entry.get("inner_info")
    if not isinstance(info, dict):
        fail(f"{sid}: needs an object field 'inner_info'")
    for name, typ in {"inner_sent_w_variables": str, "global_operators": list, "degree_label": int,
                      "formula_triples": list}.items():
        if not isinstance(info.get(name), typ) or isinstance(info.get(name), bool):
            fail(f"{sid}: inner_info.{name} missing or not a {typ.__name__}")
    global_ops = tuple(info["global_operators"])
    if any(o not in UNARY for o in global_ops):
        fail(f"{sid}: unknown global operator in {list(global_ops)} (expected {', '.join(UNARY)})")
    if info["degree_label"] not in range(5):
        fail(f"{sid}: degree_label {info['degree_label']} is not 0–4")
    if degree_of(global_ops) != info["degree_label"]:
        fail(f"{sid}: degree_label {info['degree_label']} contradicts global_operators {list(global_ops)} "
             f"(degree {degree_of(global_ops)})")
    text_with_vars = info["inner_sent_w_variables"]
    variables = set(_VAR_MARK.findall(text_with_vars))
    triples = []
    for k, t in enumerate(info["formula_triples"], start=1):
        where = f"{sid}: formula triple {k}"
        if not (isinstance(t, list) and len(t) == 5):
            fail(f"{where} is not [pre_ops, pre_var, relation, con_ops, con_var]")
        pre_ops, pre, rel, con_ops, con = t
        if not (isinstance(pre_ops, list) and isinstance(con_ops, list)):
            fail(f"{where}: operator lists must be lists")
        if not all(isinstance(x, str) for x in (pre, rel, con)):
            fail(f"{where}: the variables and the relation must be strings")
        if any(o not in UNARY for o in pre_ops + con_ops):
            fail(f"{where}: unknown unary operator in {pre_ops + con_ops}")
        rel = BINARY_ALIASES.get(rel, rel)
        if rel not in BINARY:
            fail(f"{where}: unknown relation {t[2]!r} (expected {', '.join(BINARY)})")
        for v in (pre, con):
            if v not in variables:
                fail(f"{where}: variable {v!r} is not marked in inner_sent_w_variables")
        triples.append(Triple(tuple(pre_ops), pre, rel, tuple(con_ops), con))
    return Node(sid, entry["sent"], text_with_vars, global_ops, tuple(triples), info["degree_label"])


# ---------------------------------------------------------------------------------------------
# Linearisations (the exact strings of the official code)
# ---------------------------------------------------------------------------------------------

def _to_tokens(text: str) -> str:
    for op, tok in OPERATOR_TOKEN.items():
        text = text.replace(op, tok)
    for alias, op in BINARY_ALIASES.items():
        text = text.replace(alias, OPERATOR_TOKEN[op])
    return text


def linearize_triples(triples: Iterable[Triple], flag: str = "") -> str:
    """``flag + " " + "pre_ops pre rel con_ops con; "...`` in operator words (official ``linearize_inner_triples``)."""
    return flag + " " + "".join(f"{t.linear()}; " for t in triples)


def once_source(g: Metagraph, input_format: str = "paper") -> str:
    """All-at-Once input: ``"sent1: v1: ... sent2: v1: ... "`` (paper), or the bare passage (released inference)."""
    _check_format(input_format)
    if input_format == "released":
        return g.passage(with_ids=False)
    return "".join(f"{sid}: {n.text_with_vars} " for sid, n in g.nodes.items())


def once_target(g: Metagraph | Prediction, sids: Iterable[str] | None = None, flags: str = "code") -> str:
    """All-at-Once target: ``$tree$ <proof> $formulae$ <sid: triples | ...> $degree$ <sid: word | ...>``.

    Works for a gold metagraph or a prediction (then ``sids`` gives the node order).
    """
    tree, form, deg = FLAGS[flags]
    pred = g.gold() if isinstance(g, Metagraph) else g
    sids = list(g.nodes) if isinstance(g, Metagraph) else list(sids if sids is not None else pred.degrees)
    proof = "".join(f"{s.text}; " for s in pred.steps)
    # The official code appends "sid: value | " per node, then drops the last two characters.
    formulae = "".join(f"{sid}: {linearize_triples(pred.triples[sid]).strip()} | "
                       for sid in sids if pred.triples.get(sid))[:-2]
    degrees = "".join(f"{sid}: {_degree_word(pred.degrees.get(sid, UNRESOLVED))} | " for sid in sids)[:-2]
    return f"${tree}$ {proof} ${form}$ {formulae} ${deg}$ {degrees}"


def _degree_word(d: int) -> str:
    return DEGREE_WORDS[d] if d in range(5) else "unresolved"


def _check_format(input_format: str) -> None:
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"input_format must be one of {INPUT_FORMATS}, not {input_format!r}")


@dataclass(frozen=True)
class Example:
    """One seq2seq training/inference example of a sub-task (``task`` names the prefix)."""

    task: str
    graph: str  # Metagraph id
    node: str | None
    source: str
    target: str


def multitask_examples(g: Metagraph, input_format: str = "paper") -> list[Example]:
    """The three Multitask sub-tasks: one TREE example per passage, FORMULAE and DEGREE per node."""
    _check_format(input_format)
    out = [Example("tree", g.id, None, PREFIX["tree"] + g.passage(with_ids=input_format == "paper"),
                   "$tree$ " + g.proof)]
    for sid, n in g.nodes.items():
        out.append(Example("formulae", g.id, sid, PREFIX["formulae"] + n.text_with_vars,
                           linearize_triples([t.reduced() for t in n.triples], flag="$formulae$")))
        out.append(Example("degree", g.id, sid, PREFIX["degree"] + n.text, f"$degree$ {DEGREE_WORDS[n.degree]}"))
    return out


def metgen_controller_input(g: Metagraph, previous: Iterable[Step], input_format: str = "paper") -> str:
    _check_format(input_format)
    ctx = g.passage(with_ids=input_format == "paper")
    body = f"proof: {'; '.join(s.text for s in previous)}; context: {ctx}"
    return PREFIX["control"] + body if input_format == "paper" else body


def metgen_controller_examples(g: Metagraph, input_format: str = "paper") -> list[Example]:
    """MetGen controller: given the steps so far, name the sentence pair of a next step (or ``done``)."""
    steps = sorted(g.steps, key=lambda s: s.text)
    n, out = len(steps), []
    for i in range(n + 1):
        prev, future = steps[:i], steps[i:]
        for perm in itertools.islice(itertools.permutations(prev), n):
            src = metgen_controller_input(g, perm, input_format)
            if not future:
                out.append(Example("control", g.id, None, src, "done"))
            for nxt in future:
                out.append(Example("control", g.id, None, src, " ".join(sorted([nxt.pre, nxt.con]))))
    return out


def metgen_module_input(g: Metagraph, pair: Iterable[str], kind: str) -> str:
    return PREFIX[kind] + "".join(f"{sid}: {g.nodes[sid].text} " for sid in sorted(pair))


def metgen_module_examples(g: Metagraph, rng: random.Random, neg_pos_rate: float = 2.0) -> list[Example]:
    """MetGen conclusion (``->``) and rebuttal (``=>``) modules: gold steps plus ``none`` negatives."""
    pos, type_neg = [], []
    gold_pairs = set()
    for s in g.steps:
        gold_pairs.add(tuple(sorted((s.pre, s.con))))
        pos.append(Example(s.type, g.id, None, metgen_module_input(g, (s.pre, s.con), s.type), s.text))
        other = REBUT if s.type == SUPPORT else SUPPORT
        type_neg.append(Example(other, g.id, None, metgen_module_input(g, (s.pre, s.con), other), "none"))
    pair_neg = [Example(kind, g.id, None, metgen_module_input(g, pair, kind), "none")
                for pair in itertools.combinations(g.sids, 2) if tuple(sorted(pair)) not in gold_pairs
                for kind in STEP_TYPES]
    rng.shuffle(pair_neg)
    keep = max(0, int(neg_pos_rate * len(pos)) - len(type_neg))
    return pos + type_neg + pair_neg[:keep]


# ---------------------------------------------------------------------------------------------
# Parsing generated text
# ---------------------------------------------------------------------------------------------

_NORMALISE = [
    (re.compile(r"\$\s*(\w+)\s*\$"), r"$\1$"),
    (re.compile(r"-\s*>"), "->"),
    (re.compile(r"=\s*>"), "=>"),
    (re.compile(r"\[\s*(and|or|entail|negative|necessary|possible)\s*\]", re.I), lambda m: f"[{m[1].lower()}]"),
    (re.compile(r"\bsent\s+(\d+)\b"), r"sent\1"),
    (re.compile(r"\bv\s+(\d+)\b"), r"v\1"),
    (re.compile(r"\s+"), " "),
]


def normalise(text: str) -> str:
    """Undo tokenizer spacing (``$ tree $``, ``- >``, ``[ and ]``, ``sent 1``) and collapse whitespace."""
    for pattern, repl in _NORMALISE:
        text = pattern.sub(repl, text)
    return text.strip()


def parse_proof(text: str, *, strict: bool = False, fail=None) -> list[Step]:
    """Steps of a proof string, as the official parser reads them.

    Pieces are split on ``;``; a piece with ``->`` is support, else one with ``=>`` is rebut,
    else it is dropped, as is a piece that does not split into exactly premise and conclusion.
    ``a & b -> c`` becomes one single-premise step per premise (sorted). With ``strict`` (for
    data files) a piece that cannot be read calls ``fail(problem)`` instead of being dropped.
    """
    steps = []
    for piece in text.split(";"):
        piece = piece.strip()
        if not piece:
            continue
        kind = SUPPORT if SUPPORT in piece else REBUT if REBUT in piece else None
        parts = piece.split(kind) if kind else []
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            if strict:
                fail(f"proof step {piece!r} is not 'sentA -> sentB' or 'sentA => sentB'")
            continue
        con = parts[1].strip()
        for pre in sorted(p.strip() for p in parts[0].split("&")):
            steps.append(Step(pre, kind, con))
    return steps


_RELATION_WORDS = ["[I-AND]", "[I-OR]", "[I-ENTAIL]", AND, OR, IMP]  # the official order: the last found wins


def _to_operators(text: str) -> str:
    for tok, op in TOKEN_OPERATOR.items():
        text = text.replace(tok, op)
    return text


def parse_triples(text: str) -> list[Triple]:
    """Triples of one node from operator words, e.g. ``[negative] v3 [entail] v1; v2 [and] v4;``.

    The relation is the last relation token found in a piece; each side's last word is the
    variable and the words before it its unary operators (S5-reduced). Unreadable pieces are dropped.
    """
    out = []
    for piece in _to_operators(text).split(";"):
        rel = None
        for r in _RELATION_WORDS:
            if r in piece:
                rel = r
        if rel is None:
            continue
        parts = piece.split(rel)
        if len(parts) != 2:
            continue
        sides = [p.split() for p in parts]
        if not sides[0] or not sides[1]:
            continue
        (*pre_ops, pre), (*con_ops, con) = sides
        out.append(Triple(s5_reduce(pre_ops), pre, BINARY_ALIASES.get(rel, rel), s5_reduce(con_ops), con))
    return out


def parse_degree(text: str) -> int:
    """A degree word → 0–4; anything else → −1 (the official sequential replacement, then ``int``)."""
    text = text.strip()
    for d, word in enumerate(DEGREE_WORDS):
        text = text.replace(word, str(d))
    try:
        return int(text)
    except ValueError:
        return UNRESOLVED


_SLOT = re.compile(r"\$(\w*?)\$", re.I)


def parse_slots(text: str) -> dict[str, str]:
    """``{"tree": ..., "formulae": ..., "degree": ...}`` from a flagged target (paper names are aliases)."""
    matches = list(_SLOT.finditer(text))
    slots = {}
    for m, nxt in zip(matches, matches[1:] + [None]):
        name = m[1].lower()
        slots[SLOT_ALIASES.get(name, name)] = text[m.end(): nxt.start() if nxt else len(text)]
    return slots


def _per_node(text: str) -> dict[str, str]:
    out = {}
    for piece in text.split("|"):
        parts = piece.split(":")
        if len(parts) >= 2:
            out[parts[-2].strip()] = parts[-1]
    return out


def parse_once(text: str) -> Prediction:
    """Read an All-at-Once output (after :func:`normalise` when the tokenizer splits words)."""
    slots = parse_slots(text)
    triples = {sid: tuple(parse_triples(v)) for sid, v in _per_node(slots.get("formulae", "")).items()}
    degrees = {sid: parse_degree(v) for sid, v in _per_node(slots.get("degree", "")).items()}
    return Prediction(tuple(parse_proof(slots.get("tree", ""))), triples, degrees)


def strip_flag(text: str) -> str:
    """A sub-task output without its ``$flag$`` (Multitask inference strips them)."""
    return _SLOT.sub("", text, count=1).strip()


def prediction_from_parts(proof: str, formulae: Mapping[str, str], degrees: Mapping[str, str]) -> Prediction:
    """Assemble a Multitask prediction from its per-passage proof and per-node outputs."""
    return Prediction(tuple(parse_proof(strip_flag(proof))),
                      {sid: tuple(parse_triples(strip_flag(t))) for sid, t in formulae.items()},
                      {sid: parse_degree(strip_flag(d)) for sid, d in degrees.items()})


# ---------------------------------------------------------------------------------------------
# Statistics (Table 4 and the per-split label counts)
# ---------------------------------------------------------------------------------------------

def _longest_path_nodes(steps: Iterable[Step], edge_types=STEP_TYPES) -> int:
    succ: dict[str, set[str]] = {}
    for s in steps:
        if s.type in edge_types:
            succ.setdefault(s.pre, set()).add(s.con)

    def depth(v, seen=frozenset()):
        return 1 + max((depth(w, seen | {v}) for w in succ.get(v, ()) if w not in seen), default=0)

    return max((depth(v) for v in succ), default=0)


def is_multi_step(g: Metagraph) -> bool:
    """Some node concludes one step and is the premise of another (longest path ≥ 3 nodes, any edge type)."""
    return _longest_path_nodes(g.steps) >= 3


def is_multi_premise(g: Metagraph) -> bool:
    """Some node has ≥ 2 incoming support steps (the released proofs have no ``&``)."""
    cons = [s.con for s in g.steps if s.type == SUPPORT]
    return len(cons) != len(set(cons))


def has_rebut(g: Metagraph) -> bool:
    return any(s.type == REBUT for s in g.steps)


def table4(graphs: list[Metagraph]) -> dict[str, float]:
    """Table 4's statistics recomputed from the files, with the definitions in the docstrings above.

    ``avg_var`` counts distinct variables per formula-bearing node, ``avg_global``/``avg_local``
    unary operators per passage after reduction: the paper's own definitions are not recoverable.
    """
    n = len(graphs)
    nodes = [node for g in graphs for node in g.nodes.values()]
    forms = [node for node in nodes if node.triples]
    reb, step, prem = ({g.id for g in graphs if f(g)} for f in (has_rebut, is_multi_step, is_multi_premise))
    return {
        "passage": n, "graph": n, "node": len(nodes), "form": len(forms),
        "reb": len(reb), "multi_step": len(step), "multi_premise": len(prem),
        "reb_step_premise": len(reb & step & prem),
        "avg_node": len(nodes) / n, "avg_form": len(forms) / n,
        "avg_var": sum(len({v for t in node.triples for v in t.variables}) for node in forms) / max(len(forms), 1),
        "avg_binary": sum(len(node.triples) for node in nodes) / n,
        "avg_global": sum(len(node.global_ops) for node in nodes) / n,
        "avg_local": sum(len(t.pre_ops) + len(t.con_ops) for node in nodes for t in node.triples) / n,
    }


# --- the dataset, as the registry lists it ------------------------------------------------------

def splits(source: str = "folder") -> dict[str, tuple[str, list]]:
    """Every split, as metagraphs (from the folder: MetaLogic has no Hub copy)."""
    return {s: ("metagraph", load_split(s)) for s in SPLITS}


RELEASES = (
    DatasetInfo(
        "metalogic", "metalogic", ("metalogic_train.json", "metalogic_dev.json", "metalogic_test.json"),
        "https://github.com/tencent-ailab/MetaLogic", "MIT",
        "JSON Lines despite the .json suffix; one metagraph-annotated ReClor item per line. "
        "No public Hub copy was found.",
        splits=splits,
    ),
)
