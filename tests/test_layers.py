"""The library's layers point down, and a cached result depends only on the code that computes it.

The import graph is drawn from the source (``ast``), imports inside functions included: a lazy
import cannot hide a cycle or an upward arrow. The results cache keys every entry on the source
of the calling engine's import closure (:func:`rcstudy.cache.module_closure`), so these layers
are also what decides which edits throw cached models away.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import networkx as nx
import pytest

from rcstudy import cache

LIB = cache.LIBRARY_PARENT
PACKAGE = "rcstudy"

#: Bottom to top. A module may import its own layer and those below, never one above.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("", "errors", "settings", "serialize", "stats", "sampling", "learning", "runtime", "cache",
                    "schema", "config", "exports", "bench_presets")),
    ("data", ("data",)),
    ("engines", ("models", "metrics", "papers", "prompts", "claims", "bias")),
    ("baselines", ("baselines",)),
    ("experiments", ("jobs", "experiments", "report", "plots")),
    ("book", ("pages", "chapters", "preflight", "notebook", "plan", "cluster", "run", "book", "bench", "compare", "cli",
              "__main__", "sphinxext")),
]

#: The engines whose results are cached (trained weights, predictions, scores).
ENGINES = ["models.mc", "models.lm", "models.seq2seq", "models.scratch", "models.sequential", "models.rule_lm",
           "baselines.option_runs", "baselines.metagraph", "baselines.option_lm", "baselines.cloze_lm",
           "baselines.readers", "baselines.span_readers", "baselines.asreader", "baselines.bilstm",
           "baselines.ngram"]


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of a dotted module name (``rcstudy.data.hub`` → data)."""
    rel = module.removeprefix(PACKAGE).lstrip(".")
    head = rel.split(".")[0]
    for i, (_, members) in enumerate(LAYERS):
        if head in members:
            return i
    raise AssertionError(f"{module} is in no layer: place it in LAYERS")


def import_graph(root: Path = LIB) -> nx.DiGraph:
    """Every module of the package and the modules of the package it imports anywhere in its source
    (edges carry ``lazy=True`` for imports inside a function)."""
    graph = nx.DiGraph()
    for module in cache.library_modules(root):
        graph.add_node(module)
        for target, lazy in cache.import_targets(module, cache.module_file(module, root)):
            if target != module and target.split(".")[0] == PACKAGE and cache.module_file(target, root):
                graph.add_edge(module, target, lazy=graph.get_edge_data(module, target, {}).get("lazy", True) and lazy)
    return graph


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    return import_graph()


def test_every_module_has_a_layer(graph):
    for module in graph:
        layer_of(module)


def test_no_import_cycle(graph):
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, f"import cycles: {cycles}"


def test_imports_point_down(graph):
    upward = [f"{a} ({LAYERS[layer_of(a)][0]}) → {b} ({LAYERS[layer_of(b)][0]})" + (" inside a function" if lazy else "")
              for a, b, lazy in graph.edges(data="lazy") if layer_of(b) > layer_of(a)]
    assert not upward, "imports that point up:\n" + "\n".join(upward)


def test_the_graph_sees_lazy_imports_and_cycles(tmp_path):
    """The checks above can fail: an import inside a function that closes a cycle is found."""
    root = tmp_path / "lib"
    shutil.copytree(LIB / PACKAGE, root / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    errors = root / PACKAGE / "errors.py"
    errors.write_text(errors.read_text() + "\n\ndef _upward():\n    from .run import run_chapters\n")
    g = import_graph(root)
    assert g.edges[f"{PACKAGE}.errors", f"{PACKAGE}.run"]["lazy"]
    assert any(f"{PACKAGE}.errors" in c and len(c) > 1 for c in nx.strongly_connected_components(g))


@pytest.mark.parametrize("engine", ENGINES)
def test_an_engine_depends_only_on_layers_below_the_experiments(engine):
    """A cached result's key covers its engine's import closure: nothing of the experiments or
    the book may be in it, else editing a page's code or a claim would retrain models."""
    closure = cache.module_closure(f"{PACKAGE}.{engine}")
    above = [m for m in closure if layer_of(m) > layer_of(f"{PACKAGE}.{engine}")]
    assert not above, f"{engine} imports {above}"
    for forbidden in ("claims", "papers", "report", "config", "chapters", "run", "book", "preflight", "plan",
                      "models.replicas"):  # building replicas is no part of computing with a model
        assert not any(m == f"{PACKAGE}.{forbidden}" or m.startswith(f"{PACKAGE}.{forbidden}.") for m in closure), \
            f"{engine}'s cache key depends on {forbidden}"


def test_closure_sizes_are_small():
    """The engines' closures, printed for the record, stay a small part of the library."""
    total = len(cache.library_modules())
    sizes = {e: len(cache.module_closure(f"{PACKAGE}.{e}")) for e in ENGINES}
    print("\nimport closure of each engine (modules, of", total, "):",
          ", ".join(f"{e} {n}" for e, n in sizes.items()))
    assert max(sizes.values()) <= total // 3, sizes


EDITED = ["book.py", "run.py", "claims.py", "report.py", "chapters.py", "config.py", "plots.py",
          "papers/reclor.py", "experiments/reclor/page.py", "experiments/rule/__init__.py", "notebook.py", "pages.py"]


def test_editing_the_book_keeps_every_trained_model(tmp_path):
    """Editing the book's code, a page's experiments module, a claim spec or the configuration
    leaves every engine's code fingerprint (the code part of its cache keys) as it was, so a
    re-run after such an edit finds every trained model in the cache; editing an engine does not."""
    root = tmp_path / "lib"
    shutil.copytree(LIB / PACKAGE, root / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    before = {e: cache.code_fingerprint([f"{PACKAGE}.{e}"], root) for e in ENGINES}
    for name in EDITED:
        path = root / PACKAGE / name
        path.write_text(path.read_text() + "\n# an edit\n")
    after = {e: cache.code_fingerprint([f"{PACKAGE}.{e}"], root) for e in ENGINES}
    assert after == before
    mc = root / PACKAGE / "models" / "mc.py"
    mc.write_text(mc.read_text() + "\n# an edit of the engine\n")
    assert cache.code_fingerprint([f"{PACKAGE}.models.mc"], root) != before["models.mc"]
