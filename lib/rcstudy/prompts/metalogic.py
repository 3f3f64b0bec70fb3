"""MetaLogic: the texts the models read and write, one pure function each.

The per-passage linearisations of the official code (``once_source``, ``once_target``,
``multitask_examples``, the MetGen builders) are defined beside the metagraph type in
:mod:`rcstudy.data.metalogic`, whose tests check them against the paper's Table 10; the functions
here are the only way the chapter reaches them. Rendered examples below are the fixture passage
``train_4341`` (the paper's Uranus passage), shortened with ``…``; ``tests/snapshots/metalogic/``
holds them in full.
"""

from __future__ import annotations

import random
import re
from typing import Sequence

from ..data import metalogic as ml
from ..data.metalogic import Example, Metagraph


def once_inputs(graphs: Sequence[Metagraph], input_format: str = "paper") -> list[str]:
    """All-at-Once inputs: sentence ids and variable marks (``paper``), or the bare passage
    (``released``: the official inference code)::

        sent1: v1: measurements of the motion of the planet uranus … sent2: v1: neptune and pluto , v2: … sent4: v1: there is a belt of comets beyond the orbit of pluto with powerful gravitational pull .␠
    """
    return [ml.once_source(g, input_format) for g in graphs]


def once_targets(graphs: Sequence[Metagraph]) -> list[str]:
    """All-at-Once targets (the official strings, double spaces included)::

        $tree$ sent1 -> sent3; sent2 -> sent3; sent4 => sent2;  $formulae$ sent3: v2 [and] [necessary] v3;  $degree$ sent1: contingent | sent2: contingent | sent3: necessary | sent4: contingent␠
    """
    return [ml.once_target(g) for g in graphs]


def once_pairs(graphs: Sequence[Metagraph], input_format: str = "paper") -> tuple[list[str], list[str]]:
    """(inputs, targets) of All-at-Once: :func:`once_inputs` and :func:`once_targets`."""
    return once_inputs(graphs, input_format), once_targets(graphs)


def multitask_examples(graphs: Sequence[Metagraph], input_format: str = "paper") -> list[Example]:
    """The Multitask sub-tasks of every passage: one TREE example, then FORMULAE and DEGREE per node::

        TREE: sent1: measurements of the motion … sent4: there is a belt of comets … .␠  ⟶  $tree$ sent1 -> sent3; sent2 -> sent3; sent4 => sent2;␠
        FORMULAE: v1: measurements of the motion of the planet uranus … .  ⟶  $formulae$␠
        DEGREE: measurements of the motion of the planet uranus … .  ⟶  $degree$ contingent
    """
    return [x for g in graphs for x in ml.multitask_examples(g, input_format)]


def multitask_pairs(graphs: Sequence[Metagraph], input_format: str = "paper") -> tuple[list[str], list[str]]:
    """(inputs, targets) of every Multitask example (:func:`multitask_examples`)."""
    exs = multitask_examples(graphs, input_format)
    return [x.source for x in exs], [x.target for x in exs]


def official_strings(g: Metagraph) -> dict[str, str]:
    """The strings the official code builds for one passage, labelled for the chapter's table:
    the All-at-Once input and target, the first three Multitask examples and the first MetGen
    controller and module examples (``source  ⟶  target``)."""
    texts = {"All-at-Once input": ml.once_source(g), "All-at-Once target": ml.once_target(g)}
    for x in ml.multitask_examples(g)[:3]:
        texts[f"Multitask {x.task} ({x.node or 'passage'})"] = f"{x.source}  ⟶  {x.target}"
    ctrl = ml.metgen_controller_examples(g)
    texts["MetGen controller (first example)"] = f"{ctrl[0].source}  ⟶  {ctrl[0].target}"
    mod = ml.metgen_module_examples(g, random.Random(0))
    texts["MetGen module (first example)"] = f"{mod[0].source}  ⟶  {mod[0].target}"
    return texts


FEWSHOT_INSTRUCTION = (
    "Each sentence of a passage is a node sentK; its atomic parts are variables vK. Write the logic "
    "metagraph: after $tree$ the steps (a -> b: a supports b; a => b: a rebuts b), after $formulae$ each "
    "node's formula with [entail] [and] [or] and the unary operators [negative] [necessary] [possible], "
    "after $degree$ each node's certainty (impossible, unnecessary, contingent, possible, necessary).")


def fewshot_prompt(shots: Sequence[Metagraph], g: Metagraph) -> str:
    """Instruction, ``shots`` solved examples, then the passage (runs of spaces collapsed for BPE models)::

        Each sentence of a passage is a node sentK; its atomic parts are variables vK. Write the logic metagraph: …

        Passage: sent1: v1: … (a solved example's All-at-Once input)
        Metagraph: $tree$ … $formulae$ … $degree$ … (its All-at-Once target)

        Passage: sent1: v1: measurements of the motion of the planet uranus … sent4: v1: there is a belt of comets … .
        Metagraph:
    """
    def block(x: Metagraph, answer: str) -> str:
        return f"Passage: {ml.once_source(x)}\nMetagraph: {answer}"

    parts = [FEWSHOT_INSTRUCTION] + [block(s, ml.once_target(s)) for s in shots] + [block(g, "")]
    return re.sub(r"[ \t]+", " ", "\n\n".join(parts)).rstrip()
