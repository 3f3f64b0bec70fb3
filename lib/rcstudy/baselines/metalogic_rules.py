"""Metagraph predictors without a pretrained model: empty, trivial, rules and a feature model.

* :func:`empty_prediction` — nothing at all (scores the metric's floor).
* :func:`trivial_prediction` — every other sentence supports the sentence before the option,
  no formulas, every node *contingent* (the structural prior the spec calls "heuristic").
* :func:`rule_prediction` — the paper's own annotation guides turned into rules: the unary
  indicators of Table 13 give the global operators (hence the degree) and the local ones; the
  connectives of Tables 20–22 between variable spans give the binary operators; sentence-initial
  conclusion words ("therefore", "thus", ...) pick the conclusion. The paper applied the
  indicators on a dependency parse (within 3 hops of the root); here a word window stands in.
* :class:`FeatureModel` — the same table features weighed by logistic regression, trained on
  the training passages (cheap enough for the data-scale curve at every ratio). A fitted model
  is plain data (:class:`LinearModel`: the regressions' coefficients and the vectoriser's
  columns), so the results cache stores it without pickling scikit-learn objects.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression

from ..data.metalogic import (AND, BOX, DIA, IMP, NEG, OR, SUPPORT, Metagraph, Node, Prediction, Step,
                              Triple, degree_of, s5_reduce)

# Table 13: indicators of the unary operators.
NEGATION_WORDS = frozenset(
    "no not none nobody nothing neither nor nowhere never hardly scarcely barely doesn't isn't wasn't shouldn't "
    "wouldn't couldn't won't can't don't impossible".split())
BOX_WORDS = frozenset("necessarily must definitely certainly clearly obviously undoubtedly surely will all every "
                      "always".split())
DIAMOND_WORDS = frozenset(
    "likely approximately possibly perhaps probably maybe few may might could many most some numerous countless "
    "majority often frequently commonly usually sometimes repeatedly appears seems suggests indicates".split())
INDICATORS = {**{w: NEG for w in NEGATION_WORDS}, **{w: BOX for w in BOX_WORDS}, **{w: DIA for w in DIAMOND_WORDS}}

# Tables 20–22: connectives of the binary operators (A → B; A ∧ B; A ∨ B).
IMPLICATION_CONNECTIVES = (
    "about", "accordingly", "after", "afterward", "afterwards", "as", "as a result", "as if", "because",
    "because of", "as long as", "before", "by", "by then", "consequently", "depending on", "depending upon",
    "due to", "earlier", "even after", "finally", "for", "for example", "for instance", "from", "given", "hence",
    "if", "if and when", "if only", "in", "in case", "in fact", "in order", "in particular", "in short", "in sum",
    "in that", "indeed", "insofar as", "later", "later on", "more accurately", "next", "not only because of",
    "now that", "on", "once", "only if", "previously", "since", "since before", "so", "so as", "so long as",
    "so that", "specifically", "subsequently", "such as", "that is", "then", "thereafter", "thereby", "therefore",
    "thus", "till", "ultimately", "until", "upon", "when", "when and if", "whenever", "where", "with", "without")
CONJUNCTION_CONNECTIVES = (
    "and", "additionally", "albeit", "along with", "also", "although", "as long as", "as much as", "as soon as",
    "as though", "as well", "as well as", "as", "at the same time", "before and after", "besides", "beyond", "both",
    "but", "but also", "but then", "but then again", "by comparison", "by contrast", "conversely", "despite",
    "even as", "even before", "even before then", "even if", "even so", "even then", "even though", "even when",
    "even while", "even with", "finally", "further", "furthermore", "however", "in addition", "in any case",
    "in contrast", "in fact", "in the end", "in the meantime", "in the meanwhile", "indeed", "like", "likewise",
    "meantime", "meanwhile", "moreover", "much less", "neither", "nevertheless", "no matter", "nonetheless", "nor",
    "not just", "not only", "on the contrary", "on the one hand", "on the other hand", "only", "plus",
    "regardless", "regardless of", "separately", "similarly", "simultaneously", "still", "then", "though",
    "whatever", "when", "whereas", "whether", "while", "with", "yet")
DISJUNCTION_CONNECTIVES = (
    "alternatively", "as an alternative", "either", "except", "in other words", "instead", "instead of", "lest",
    "not so much as", "or", "or otherwise", "otherwise", "rather", "rather than", "so much as", "unless", "without")
#: Connectives listed under several operators take the first: → before ∧ before ∨.
CONNECTIVES: dict[str, str] = {}
for _op, _words in ((OR, DISJUNCTION_CONNECTIVES), (AND, CONJUNCTION_CONNECTIVES), (IMP, IMPLICATION_CONNECTIVES)):
    CONNECTIVES.update({w: _op for w in _words})
_MAX_CONNECTIVE = max(len(w.split()) for w in CONNECTIVES)
#: → connectives that introduce the consequent ("A, therefore B" is A → B); the others introduce
#: the antecedent ("B because A" is A → B).
CONSEQUENT_MARKERS = frozenset(("accordingly", "as a result", "consequently", "finally", "hence", "in short",
                                "in sum", "so", "so that", "then", "thereafter", "thereby", "therefore", "thus",
                                "ultimately", "subsequently", "next", "later"))
#: Sentence-initial words that mark the argument's conclusion.
CONCLUSION_MARKERS = ("therefore", "thus", "hence", "so", "clearly", "consequently", "accordingly",
                      "it follows that", "this shows that", "we can conclude")

_PUNCT = re.compile(r"^[\W_]+$")


@functools.lru_cache(maxsize=1 << 16)
def words(text: str) -> tuple[str, ...]:
    """Lower-cased words with the data's split contractions rejoined (``doesn ' t`` → ``doesn't``)."""
    text = re.sub(r"(\w+) ' t\b", r"\1't", text.lower())
    return tuple(w for w in text.split() if not _PUNCT.match(w))


def unary_operators(text: str, window: int | None = None) -> tuple[str, ...]:
    """Table 13 indicators in order of appearance (the first is outermost), in the first ``window`` words."""
    return tuple(INDICATORS[w] for w in words(text)[:window] if w in INDICATORS)


def leading_connective(ws: tuple[str, ...]) -> str | None:
    """The longest connective the words start with."""
    for n in range(min(_MAX_CONNECTIVE, len(ws)), 0, -1):
        if " ".join(ws[:n]) in CONNECTIVES:
            return " ".join(ws[:n])
    return None


def _relation(connective: str, before: str, after: str) -> Triple:
    """The triple a connective introducing ``after`` makes with ``before``."""
    op = CONNECTIVES[connective]
    if op == IMP and connective not in CONSEQUENT_MARKERS:
        return Triple((), after, IMP, (), before)
    return Triple((), before, op, (), after)


def connective_pairs(node: Node) -> list[tuple[str, str, str]]:
    """``(connective, var_before, var_after)`` for each connective that starts a span (or is one).

    A span made only of a connective links the content spans on either side; a content span
    that starts with one links to the previous content span, or for the first span to the next.
    """
    spans = [(v, words(t)) for v, t in node.spans.items()]
    content = [(i, v) for i, (v, ws) in enumerate(spans) if ws and leading_connective(ws) != " ".join(ws)]
    out = []
    for i, (v, ws) in enumerate(spans):
        conn = leading_connective(ws)
        if conn is None:
            continue
        before = [u for j, u in content if j < i]
        after = [u for j, u in content if j > i]
        if conn == " ".join(ws):  # a connective-only span
            if before and after:
                out.append((conn, before[-1], after[0]))
        elif before:
            out.append((conn, before[-1], v))
        elif after:  # "since A, B": A is introduced by the connective, B follows
            out.append((conn, after[0], v) if CONNECTIVES[conn] == IMP and conn not in CONSEQUENT_MARKERS
                       else (conn, v, after[0]))
    return out


def empty_prediction(g: Metagraph) -> Prediction:
    return Prediction()


def trivial_prediction(g: Metagraph) -> Prediction:
    """Every other sentence ``->`` the sentence before the option; no formulas; all contingent."""
    root = g.sids[-2] if len(g.sids) > 1 else g.sids[-1]
    steps = tuple(Step(s, SUPPORT, root) for s in g.sids if s != root)
    return Prediction(steps, {}, {s: 2 for s in g.sids})


def conclusion_of(g: Metagraph) -> str:
    """The last sentence that opens with a conclusion word, else the sentence before the option."""
    marked = [sid for sid, n in g.nodes.items() if any(" ".join(words(n.text)).startswith(m + " ")
                                                       for m in CONCLUSION_MARKERS)]
    return marked[-1] if marked else (g.sids[-2] if len(g.sids) > 1 else g.sids[-1])


@dataclass(frozen=True)
class RuleConfig:
    window: int | None = 5  # words searched for global indicators (the paper: 3 hops from the parse root)
    local_ops: bool = True  # Table 13 indicators inside the linked spans become local operators
    formulas: bool = True  # Tables 20–22 connectives give triples


def rule_prediction(g: Metagraph, cfg: RuleConfig = RuleConfig()) -> Prediction:
    root = conclusion_of(g)
    steps = tuple(Step(s, SUPPORT, root) for s in g.sids if s != root)
    triples, degrees = {}, {}
    for sid, node in g.nodes.items():
        global_ops = unary_operators(node.text, cfg.window)
        degrees[sid] = degree_of(global_ops)
        if cfg.formulas:
            triples[sid] = tuple(_with_local_ops(_relation(c, a, b), node, set(global_ops), cfg.local_ops)
                                 for c, a, b in connective_pairs(node))
    return Prediction(steps, triples, degrees)


def _with_local_ops(t: Triple, node: Node, global_ops: set[str], local: bool) -> Triple:
    if not local:
        return t
    spans = node.spans

    def ops(v):  # an operator already global is not repeated locally (the paper's rule)
        return s5_reduce(o for o in unary_operators(spans.get(v, "")) if o not in global_ops)

    return Triple(ops(t.pre), t.pre, t.rel, ops(t.con), t.con)


# ---------------------------------------------------------------------------------------------
# The learned version: logistic regression over the same features
# ---------------------------------------------------------------------------------------------

_LABEL_OPS = {0: (), 1: (NEG,), 2: (BOX,), 3: (DIA,), 4: (NEG, BOX), 5: (NEG, DIA)}
_OPS_LABEL = {v: k for k, v in _LABEL_OPS.items()}


def _indicator_features(text: str) -> dict[str, float]:
    """Words, Table 13 indicators by position, the rule's operators, length."""
    ws = words(text)
    f = {f"w={w}": 1.0 for w in ws}
    for i, w in enumerate(ws):
        if w in INDICATORS:
            f[f"ind={INDICATORS[w]}@{min(i // 3, 4)}"] = 1.0
    f[f"ops={''.join(unary_operators(text, 5))}"] = 1.0
    f[f"len={min(len(ws) // 5, 6)}"] = 1.0
    return f


def _sentence_features(g: Metagraph, sid: str, prefix: str, root: str) -> dict[str, float]:
    node, i, n = g.nodes[sid], g.sids.index(sid), len(g.sids)
    ws = words(node.text)
    return {f"{prefix}first={' '.join(ws[:1])}": 1.0, f"{prefix}first2={' '.join(ws[:2])}": 1.0,
            f"{prefix}pos={min(i, 5)}": 1.0, f"{prefix}from_end={min(n - 1 - i, 3)}": 1.0,
            f"{prefix}root_guess": float(sid == root)}


def _pair_rows(g: Metagraph) -> tuple[list[tuple[str, str]], list[dict[str, float]]]:
    """Every ordered sentence pair of a passage and its features (a → b)."""
    root = conclusion_of(g)
    single = {sid: (_sentence_features(g, sid, "a:", root), _sentence_features(g, sid, "b:", root))
              for sid in g.sids}
    pairs, rows = list(itertools.permutations(g.sids, 2)), []
    for a, b in pairs:
        ia, ib = g.sids.index(a), g.sids.index(b)
        rows.append({**single[a][0], **single[b][1], f"dist={max(min(ib - ia, 3), -3)}": 1.0,
                     f"pos_pair={min(ia, 4)}>{min(ib, 4)}|n={min(len(g.sids), 6)}": 1.0})
    return pairs, rows


def _var_pair_rows(node: Node) -> tuple[list[tuple[str, str]], list[dict[str, float]]]:
    """Every ordered pair of a node's variables and its features (connectives around and between)."""
    spans = node.spans
    order = list(spans)
    ws = {v: words(t) for v, t in spans.items()}
    conn = {v: leading_connective(w) for v, w in ws.items()}
    side = {v: {"conn": conn[v], "only_conn": float(conn[v] is not None and conn[v] == " ".join(ws[v])),
                "len": min(len(ws[v]) // 3, 5)} for v in order}
    links = {}
    for c, a, b in connective_pairs(node):
        t = _relation(c, a, b)
        links[(t.pre, t.con)] = t.rel
    pairs, rows = list(itertools.permutations(order, 2)), []
    for a, b in pairs:
        ia, ib = order.index(a), order.index(b)
        f = {f"gap={max(min(ib - ia, 3), -3)}": 1.0, f"nvars={min(len(order), 6)}": 1.0,
             f"rule={links.get((a, b))}": 1.0}
        for name, v in (("a", a), ("b", b)):
            f[f"{name}_conn={side[v]['conn']}"] = 1.0
            f[f"{name}_only_conn"] = side[v]["only_conn"]
            f[f"{name}_len={side[v]['len']}"] = 1.0
        for j in range(min(ia, ib) + 1, max(ia, ib)):
            f[f"between_conn={conn[order[j]]}"] = 1.0
        rows.append(f)
    return pairs, rows


@dataclass(eq=False)
class LinearModel:
    """A fitted vectoriser and logistic regression held as their parameters (plain arrays, so a
    fitted model can be cached as data); the scikit-learn objects are rebuilt from them, and give
    the fitted ones' probabilities bit for bit. A single-class training set gives ``constant``."""

    features: list[str]  # the vectoriser's columns, in order
    classes: np.ndarray | None = None
    coef: np.ndarray | None = None
    intercept: np.ndarray | None = None
    params: dict = field(default_factory=dict)  # LogisticRegression's constructor arguments
    constant: str | int | None = None

    @classmethod
    def fit(cls, rows: list[dict], labels: list, seed: int) -> "LinearModel":
        vec = DictVectorizer()
        x = vec.fit_transform(rows)
        if len(set(labels)) < 2:
            return cls(list(vec.feature_names_), constant=labels[0])
        clf = LogisticRegression(max_iter=500, C=0.5, random_state=seed)
        clf.fit(x, labels)
        model = cls(list(vec.feature_names_), clf.classes_, clf.coef_, clf.intercept_, clf.get_params())
        model._fitted = (vec, clf)
        return model

    def sklearn(self) -> tuple[DictVectorizer, LogisticRegression | None]:
        """The vectoriser and classifier (None for a constant model), rebuilt once from the parameters."""
        if getattr(self, "_fitted", None) is None:
            vec = DictVectorizer()
            vec.feature_names_ = list(self.features)
            vec.vocabulary_ = {f: i for i, f in enumerate(self.features)}
            clf = None
            if self.constant is None:
                clf = LogisticRegression(**self.params)
                clf.classes_, clf.coef_, clf.intercept_ = self.classes, self.coef, self.intercept
                clf.n_features_in_ = self.coef.shape[1]
            self._fitted = (vec, clf)
        return self._fitted

    def proba(self, rows: list[dict]) -> tuple[list, np.ndarray]:
        """The classes and each row's probability of each."""
        if self.constant is not None:
            return [self.constant], np.ones((len(rows), 1))
        vec, clf = self.sklearn()
        return list(clf.classes_), clf.predict_proba(vec.transform(rows))


@dataclass
class FeatureModel:
    """Four logistic regressions over table features: degree, steps, triples and local operators
    (:class:`LinearModel` each, so a fitted model is plain data that the results cache can hold)."""

    seed: int = 0
    models: dict[str, LinearModel] = field(default_factory=dict)

    def fit(self, graphs: list[Metagraph]) -> "FeatureModel":
        deg_x, deg_y, step_x, step_y, tri_x, tri_y, loc_x, loc_y = ([] for _ in range(8))
        for g in graphs:
            gold = {(s.pre, s.con): s.type for s in g.steps}
            for sid, node in g.nodes.items():
                deg_x.append(_indicator_features(node.text))
                deg_y.append(node.degree)
                triples = {(t.pre, t.con): t for t in node.triples}
                pairs, rows = _var_pair_rows(node)
                tri_x += rows
                tri_y += [triples[pair].rel if pair in triples else "none" for pair in pairs]
                for t in node.triples:
                    for v, ops in ((t.pre, t.pre_ops), (t.con, t.con_ops)):
                        loc_x.append(_indicator_features(node.spans.get(v, "")))
                        loc_y.append(_OPS_LABEL.get(s5_reduce(ops), 0))
            pairs, rows = _pair_rows(g)
            step_x += rows
            step_y += [gold.get(pair, "none") for pair in pairs]
        self.models = {"degree": LinearModel.fit(deg_x, deg_y, self.seed),
                       "step": LinearModel.fit(step_x, step_y, self.seed),
                       "triple": LinearModel.fit(tri_x, tri_y, self.seed),
                       "local": LinearModel.fit(loc_x or [{}], loc_y or [0], self.seed)}
        return self

    def predict(self, g: Metagraph) -> Prediction:
        if not self.models:
            raise RuntimeError("FeatureModel.predict before fit")
        return Prediction(self._steps(g), *self._nodes(g))

    def _steps(self, g: Metagraph) -> tuple[Step, ...]:
        pairs, rows = _pair_rows(g)
        if not pairs:
            return ()
        classes, p = self.models["step"].proba(rows)
        none = classes.index("none") if "none" in classes else None
        steps = []
        for a in g.sids:  # each sentence makes at most one step: its most likely non-none one
            best = None
            for (x, b), row in zip(pairs, p):
                if x != a:
                    continue
                for k, c in enumerate(classes):
                    if c != "none" and (none is None or row[k] > row[none]) and (best is None or row[k] > best[0]):
                        best = (row[k], Step(a, c, b))
            if best:
                steps.append(best[1])
        if not steps and none is not None and len(classes) > 1:  # never return an empty graph
            kinds = [c for c in classes if c != "none"]
            i, k = divmod(int(np.argmax(np.delete(p, none, axis=1))), len(kinds))
            steps.append(Step(pairs[i][0], kinds[k], pairs[i][1]))
        return tuple(steps)

    def _nodes(self, g: Metagraph):
        sids = g.sids
        classes, p = self.models["degree"].proba([_indicator_features(g.nodes[s].text) for s in sids])
        degrees = {s: int(classes[int(np.argmax(row))]) for s, row in zip(sids, p)}
        triples = {}
        for sid, node in g.nodes.items():
            pairs, rows = _var_pair_rows(node)
            found = []
            if pairs:
                classes, p = self.models["triple"].proba(rows)
                links = [(a, classes[int(np.argmax(row))], b) for (a, b), row in zip(pairs, p)]
                links = [x for x in links if x[1] != "none"]
                ops = self._local(node, sorted({v for a, _, b in links for v in (a, b)}))
                found = [Triple(ops[a], a, rel, ops[b], b) for a, rel, b in links]
            triples[sid] = tuple(found)
        return triples, degrees

    def _local(self, node: Node, variables: list[str]) -> dict[str, tuple[str, ...]]:
        """Local unary operators of the given variables."""
        if not variables:
            return {}
        classes, p = self.models["local"].proba([_indicator_features(node.spans.get(v, "")) for v in variables])
        return {v: _LABEL_OPS[int(classes[int(np.argmax(row))])] for v, row in zip(variables, p)}
