"""The LogiQA chapter's pipeline: data diagnostics, statistics, reasoning-type labels, the
rule-based, from-scratch and pretrained systems, and the paper's analyses (ablation, transfer,
length, lexical overlap, reasoning types).

Every system ends up as a :class:`Predictions`: for each evaluated split (``"en-eval"``,
``"en-test"``, ``"zh-eval"``, ``"zh-test"``) an array (seeds × items) of predicted option
indices over the *whole* split, ``-1`` where an item was not evaluated (subsampled runs). The
analyses then average over seeds item by item, so every table is computed the same way.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..baselines import lexical
from ..baselines.readers import READERS, ReaderConfig, train_reader_cached
from ..cache import atomic_write_bytes, cached, file_checksum
from ..data import logiqa as lq
from ..data.records import MCItem
from ..models import mc
from ..runtime import Runtime
from ..settings import exports_dir
from ..stats import Interval, MeanSD, bootstrap_ci, mean_sd

SPLIT_COLUMNS = {"en-eval": "LogiQA Dev", "en-test": "LogiQA Test", "zh-eval": "Chinese Dev", "zh-test": "Chinese Test"}
LENGTH_BINS = (0, 100, 150, 200, np.inf)
LENGTH_LABELS = ("(0,100]", "(100,150]", "(150,200]", "(200,+∞)")
EXPORT_FILE = "logiqa_predictions.json"


def key(lang: str, split: str) -> str:
    return f"{lang}-{split}"


# --------------------------------------------------------------------------------------------
# Data


@dataclass
class LogiQAData:
    """Every LogiQA 1.0 split read here (by ``"en-test"``-style keys), in both label readings,
    the training set, and LogiQA 2.0 dev+test (the reasoning-type source)."""

    splits: dict[str, list[MCItem]]
    position: dict[str, list[MCItem]]  # the same files read naively (answer letter = line)
    train: lq.TrainingSet
    logiqa2: list[MCItem]
    files: list[Path]

    def gold(self, split_key: str) -> np.ndarray:
        return np.array([it.label for it in self.splits[split_key]])


def load_data(languages: Sequence[str] = ("en", "zh"), *, dedup_threshold: float = 0.3) -> LogiQAData:
    splits, position, files = {}, {}, []
    for lang in languages:
        for split in ("eval", "test"):
            splits[key(lang, split)] = lq.load_logiqa(split, lang)
            position[key(lang, split)] = lq.load_logiqa(split, lang, label_mode="position")
            files.append(lq.logiqa_path(split, lang))
    train = lq.training_set("en", threshold=dedup_threshold)
    logiqa2 = lq.load_logiqa2("dev") + lq.load_logiqa2("test")
    files += [lq.logiqa2_path("dev"), lq.logiqa2_path("test")]
    return LogiQAData(splits, position, train, logiqa2, sorted(set(files + train.files)))


GLUED_PERIOD = re.compile(r"(?<=[a-z])\.(?=[A-Z])")


def fix_glued_periods(text: str) -> str:
    """Insert the missing space in "park.These" (a lower-case letter, a period, a capital)."""
    return GLUED_PERIOD.sub(". ", text)


def split_diagnostics(data: LogiQAData) -> pd.DataFrame:
    """Per split: size, label-order facts, labels left in the text, duplicates, answer shares."""
    rows = {}
    for k, items in data.splits.items():
        naive = data.position[k]
        pairs = Counter((lq.normalise(it.context), lq.normalise(it.question)) for it in items)
        paragraphs = Counter(lq.normalise(it.context) for it in items)
        letters = Counter("ABCD"[it.label] for it in items)
        rows[k] = {
            "questions": len(items),
            "blocks printed out of order": sum(it.meta["permuted"] for it in items),
            "answers that differ if the letter is read as the line": sum(a.answer != b.answer
                                                                        for a, b in zip(items, naive)),
            "blocks with a label left in the text": sum(bool(it.meta["unlabelled"]) for it in items),
            "glued sentence periods": sum(len(GLUED_PERIOD.findall(it.context)) for it in items),
            "duplicate paragraph-question pairs": sum(c - 1 for c in pairs.values()),
            "paragraphs with more than one question": sum(c > 1 for c in paragraphs.values()),
            **{f"answer {c} (%)": 100 * letters[c] / len(items) for c in "ABCD"},
            "majority answer (%)": 100 * lexical.majority_class_accuracy([it.label for it in items]),
        }
    return pd.DataFrame(rows)


def answer_shares(data: LogiQAData) -> pd.DataFrame:
    """Long table (split, answer, share %) for the answer-letter plot, training set included."""
    sets = {**data.splits, "training set": data.train.items}
    rows = []
    for name, items in sets.items():
        counts = Counter("ABCD"[it.label] for it in items)
        rows += [{"split": name, "answer": c, "share (%)": 100 * counts[c] / len(items)} for c in "ABCD"]
    return pd.DataFrame(rows)


def paragraph_leak(train: Sequence[MCItem], test: Sequence[MCItem]) -> int:
    """Test items whose normalised paragraph also appears in the training data."""
    seen = {lq.normalise(it.context) for it in train}
    return sum(lq.normalise(it.context) in seen for it in test)


STAT_TOKENIZERS = {
    "whitespace": str.split,
    "whitespace, glued periods fixed": lambda s: fix_glued_periods(s).split(),
    r"\w+": lambda s: re.findall(r"\w+", s),
    r"\w+ and punctuation": lambda s: re.findall(r"\w+|[^\w\s]", s),
}


def token_statistics(items: Sequence[MCItem]) -> pd.DataFrame:
    """Table 2 under each tokeniser: mean and max tokens per paragraph, question and option."""
    rows = []
    for name, tok in STAT_TOKENIZERS.items():
        parts = {"Paragraph": [len(tok(it.context)) for it in items],
                 "Question": [len(tok(it.question)) for it in items],
                 "Candidate Answer": [len(tok(o)) for it in items for o in it.options]}
        for part, lengths in parts.items():
            rows.append({"tokeniser": name, "row": part, "Ave. tokens": float(np.mean(lengths)),
                         "Max. tokens": float(np.max(lengths))})
    return pd.DataFrame(rows)


def item_length(item: MCItem) -> int:
    """Table 5's length: whitespace words of the paragraph, the question and all four options."""
    return sum(len(t.split()) for t in (item.context, item.question, *item.options))


def length_bucket(items: Sequence[MCItem]) -> np.ndarray:
    """Index (0-3) of each item's Table 5 length bin."""
    lengths = np.array([item_length(it) for it in items])
    return np.searchsorted(np.array(LENGTH_BINS[1:-1]), lengths, side="left")


# --------------------------------------------------------------------------------------------
# Reasoning types


#: Keyword cues for the five types, read from the definitions in the paper's §3.2.
TYPE_CUES = {
    "categorical": re.compile(r"\b(all|every(one)?|any|no|none|some|each)\b"),
    "sufficient": re.compile(r"(?<!only )\bif\b|\bthen\b"),
    "necessary": re.compile(r"only if|unless|only when|necessary|must .* to|without .* (cannot|can't)"),
    "disjunctive": re.compile(r"either .* or|\bor\b"),
    "conjunctive": re.compile(r"both .* and|at the same time|neither .* nor|\band\b"),
}


def heuristic_types(item: MCItem) -> tuple[str, ...]:
    """The types whose cue occurs in the paragraph or question (a heuristic proxy: it overcounts)."""
    text = f"{item.context} {item.question}".lower()
    return tuple(t for t, cue in TYPE_CUES.items() if cue.search(text))


@dataclass
class TypeLabels:
    """Reasoning-type labels of the test items from one source."""

    source: str
    types: dict[str, tuple[str, ...]]  # item id → types (only labelled items)
    n_items: int  # test items in all

    def shares(self) -> pd.Series:
        """Percent of labelled items carrying each type (multi-label, so they sum above 100)."""
        counts = Counter(t for ts in self.types.values() for t in ts)
        n = max(len(self.types), 1)
        return pd.Series({t: 100 * counts[t] / n for t in lq.REASONING_TYPES}, name=self.source)


def type_labels(test: Sequence[MCItem], logiqa2: Sequence[MCItem], *, threshold: float = 0.5) -> dict[str, TypeLabels]:
    """Two proxies for the unreleased labels: LogiQA 2.0's labels of the matched items, and cues."""
    matched = lq.match_items(test, logiqa2, threshold=threshold)
    return {
        "LogiQA 2.0 labels (proxy)": TypeLabels("LogiQA 2.0 labels (proxy)",
                                                {q: p.meta["types"] for q, p in matched.items()}, len(test)),
        "keyword heuristic (proxy)": TypeLabels("keyword heuristic (proxy)",
                                                {it.id: heuristic_types(it) for it in test}, len(test)),
    }


def gold_agreement(test: Sequence[MCItem], logiqa2: Sequence[MCItem], *, threshold: float = 0.5) -> float:
    """Share of matched pairs whose right options also match (the LogiQA 1.0 gold option is most
    similar to the LogiQA 2.0 gold option): a check that the matching pairs the same questions."""
    matched = lq.match_items(test, logiqa2, threshold=threshold)
    by_id = {it.id: it for it in test}
    agree = [lq.similarity_matrix([by_id[q].answer], list(p.options), stop_words=False)[0].argmax() == p.label
             for q, p in matched.items()]  # stop words kept: options often differ only by "not"/"no"
    return float(np.mean(agree)) if agree else float("nan")


# --------------------------------------------------------------------------------------------
# Systems and their predictions


@dataclass
class Predictions:
    name: str
    category: str
    trained_on: str  # what the system learned from, in words ("—" for rules)
    preds: dict[str, np.ndarray]  # split key → (seeds, items) option indices, -1 = not evaluated
    extra: dict = field(default_factory=dict)

    def correct(self, split_key: str, gold: np.ndarray) -> np.ndarray:
        """(seeds, items) 1.0/0.0 correctness, NaN where not evaluated."""
        p = self.preds[split_key]
        return np.where(p >= 0, (p == gold[None, :]).astype(float), np.nan)

    def evaluated(self, split_key: str) -> np.ndarray:
        return (self.preds[split_key] >= 0).all(axis=0)


def full_length(pred: np.ndarray, positions: np.ndarray, n: int) -> np.ndarray:
    """Predictions on a subsample placed into a split-length array (-1 elsewhere)."""
    out = np.full(n, -1, dtype=int)
    out[positions] = pred
    return out


def restrict(pred: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """(seeds, items) predictions with every item outside ``positions`` marked not evaluated (-1)."""
    out = np.full_like(pred, -1)
    out[:, positions] = pred[:, positions]
    return out


def subsample(items: Sequence[MCItem], n: int | None, seed: int) -> np.ndarray:
    """Sorted positions of a seeded random subsample (all positions when ``n`` is None or ≥ len)."""
    if n is None or n >= len(items):
        return np.arange(len(items))
    return np.sort(np.random.default_rng(seed).choice(len(items), size=n, replace=False))


def lexical_systems(data: LogiQAData) -> list[Predictions]:
    """Random (majority answer), word matching, sliding window and SW+D on every split."""
    systems = {"Word Matching": {}, "Sliding Window": {}, "Sliding Window + Distance": {}}
    for k, items in data.splits.items():
        lang = k.split("-")[0]
        wm = lexical.PAPER_WM if lang == "en" else lexical.PAPER_WM_ZH
        systems["Word Matching"][k] = lexical.word_matching_scores(items, wm)
        systems["Sliding Window"][k] = lexical.sliding_window_scores(items, lang=lang)
        systems["Sliding Window + Distance"][k] = lexical.sliding_window_scores(items, lang=lang, distance=True)
    return [Predictions(name, "Rule-based", "—", {k: lexical.first_argmax(s)[None, :] for k, s in by_split.items()},
                        {"scores": by_split})
            for name, by_split in systems.items()]


def majority_system(data: LogiQAData) -> Predictions:
    """Always answer the training set's most frequent letter (what a label-biased model learns)."""
    top = Counter(it.label for it in data.train.items).most_common(1)[0][0]
    return Predictions(f"Majority answer ({'ABCD'[top]})", "Random", "answer shares of the training set",
                       {k: np.full((1, len(v)), top) for k, v in data.splits.items()})


def reader_systems(data: LogiQAData, names: Sequence[str], seeds: Sequence[int], *, n_train: int | None,
                   sample_seed: int = 0, device: str = "cpu", **cfg_kwargs) -> list[Predictions]:
    """The from-scratch readers, trained on (a subsample of) the training set, early-stopped on
    English Eval, evaluated on English Eval and Test."""
    train = [data.train.items[i] for i in subsample(data.train.items, n_train, sample_seed)]
    dev, test = data.splits["en-eval"], data.splits["en-test"]
    out = []
    for name in names:
        runs = [train_reader_cached(ReaderConfig(model=name, seed=s, **cfg_kwargs), train, dev,
                                    {"en-eval": dev, "en-test": test}, device) for s in seeds]
        preds = {k: np.stack([r.logits[k].argmax(1) for r in runs]) for k in ("en-eval", "en-test")}
        out.append(Predictions(READERS[name][0], "Deep learning (re-impl.)", f"{len(train)} training questions",
                               preds, {"dev_curves": [r.dev_accuracy for r in runs],
                                       "losses": [r.losses for r in runs], "best_epoch": [r.best_epoch for r in runs],
                                       "vocab": runs[0].vocab_size}))
    return out


@dataclass(frozen=True)
class PLMSetup:
    """What the fine-tuned encoder runs share: model, schedule, data sizes and seeds."""

    model: str
    seeds: tuple[int, ...]
    n_train: int | None
    n_dev: int | None  # Eval items the encoder is scored on (model selection, Table 3 dev)
    n_test_sub: int | None  # Test items for ablations, transfer and LM scoring
    max_length: int = 256
    epochs: float = 1
    lr: float = 2e-5
    batch_size: int = 8
    sample_seed: int = 0

    def config(self, seed: int, fields: str = "CQA") -> mc.MCConfig:
        return mc.MCConfig(model=self.model, fields=fields, max_length=self.max_length, epochs=self.epochs,
                           lr=self.lr, batch_size=self.batch_size, seed=seed)


def plm_train_items(data: LogiQAData, setup: PLMSetup) -> list[MCItem]:
    return [data.train.items[i] for i in subsample(data.train.items, setup.n_train, setup.sample_seed)]


def eval_positions(data: LogiQAData, setup: PLMSetup) -> dict[str, np.ndarray]:
    """Positions scored by the encoder: a dev subsample, the whole test, and the test subsample."""
    return {"en-eval": subsample(data.splits["en-eval"], setup.n_dev, setup.sample_seed),
            "en-test": np.arange(len(data.splits["en-test"])),
            "test-sub": subsample(data.splits["en-test"], setup.n_test_sub, setup.sample_seed + 1)}


def plm_system(data: LogiQAData, setup: PLMSetup, rt: Runtime) -> Predictions:
    """The fine-tuned encoder (the paper's BERT/RoBERTa rows) on Eval (subsample) and Test."""
    train = plm_train_items(data, setup)
    pos = eval_positions(data, setup)
    sets = {k: [data.splits[k][i] for i in pos[k]] for k in ("en-eval", "en-test")}
    preds, losses = {k: [] for k in sets}, []
    for seed in setup.seeds:
        out = mc.finetune_and_predict(setup.config(seed), train, sets, rt)
        for k in sets:
            preds[k].append(full_length(out[k].argmax(1), pos[k], len(data.splits[k])))
        losses.append(out["losses"])
    return Predictions(setup.model, "Pre-trained (fine-tuned)", f"{len(train)} training questions",
                       {k: np.stack(v) for k, v in preds.items()}, {"losses": losses})


ABLATIONS = {
    "full input": "CQA",
    "no paragraph": "QA",  # [CLS] question option [SEP]
    "no question": "CQA",  # [CLS] paragraph [SEP] option [SEP] (the question blanked)
    "options only": "A",  # [CLS] option [SEP]
}


def ablation_items(items: Sequence[MCItem], ablation: str) -> list[MCItem]:
    """The items as the ablated model sees them (only "no question" changes the items)."""
    if ablation == "no question":
        return [replace(it, question="") for it in items]
    return list(items)


def ablation_systems(data: LogiQAData, setup: PLMSetup, main: Predictions, ablations: Sequence[str],
                     rt: Runtime) -> list[Predictions]:
    """Retrain and evaluate with partial input on the test subsample (Figure 3).

    The full-input bar is the main model restricted to the same subsample.
    """
    train = plm_train_items(data, setup)
    pos = eval_positions(data, setup)["test-sub"]
    test = data.splits["en-test"]
    sub = [test[i] for i in pos]
    n = len(test)
    out = [Predictions("full input", main.category, main.trained_on, {"en-test": restrict(main.preds["en-test"], pos)})]
    for name in ablations:
        fields = ABLATIONS[name]
        preds = []
        for seed in setup.seeds:
            logits = mc.finetune_and_predict(setup.config(seed, fields), ablation_items(train, name),
                                             {"en-test": ablation_items(sub, name)}, rt)["en-test"]
            preds.append(full_length(logits.argmax(1), pos, n))
        out.append(Predictions(name, "Ablation", main.trained_on, {"en-test": np.stack(preds)}))
    return out


def sequential_finetune_predict(stages: Sequence[Sequence[MCItem]], eval_sets: dict[str, Sequence[MCItem]],
                                cfg: mc.MCConfig, rt: Runtime) -> dict[str, np.ndarray]:
    """Fine-tune one encoder on each stage's items in turn (source, then target) with the engine's
    recipe, then score the evaluation sets; cached. The first stage's model comes from the shared
    model cache, so a source-only row and a source → target row train the source stage once."""
    def compute() -> dict[str, np.ndarray]:
        trained = mc.finetune_cached(stages[0], cfg, rt)
        losses = [trained.losses]
        for items in stages[1:]:
            trained = mc.finetune(items, cfg, rt, init=trained.model)
            losses.append(trained.losses)
        out = {name: mc.predict(trained, items, rt) for name, items in eval_sets.items()}
        return {**out, "losses": losses}

    params = {"cfg": asdict(cfg), "recipe": "engine", "stages": [mc.items_fingerprint(s) for s in stages],
              "eval": {k: mc.items_fingerprint(v) for k, v in eval_sets.items()}}
    return cached("logiqa_transfer", params, compute)


def transfer_systems(data: LogiQAData, setup: PLMSetup, main: Predictions, source: Sequence[MCItem],
                     source_name: str, rt: Runtime) -> list[Predictions]:
    """Table 4: the encoder trained on LogiQA only, on the source only, and source → LogiQA,
    all with the same sequential recipe, scored on the dev and test subsamples. One stage of
    LogiQA is the Table 3 model, so the LogiQA-only row is ``main`` on those subsamples."""
    target = plm_train_items(data, setup)
    pos = eval_positions(data, setup)
    sets = {"en-eval": [data.splits["en-eval"][i] for i in pos["en-eval"]],
            "en-test": [data.splits["en-test"][i] for i in pos["test-sub"]]}
    where = {"en-eval": pos["en-eval"], "en-test": pos["test-sub"]}
    m = setup.model
    out = [Predictions(f"{m}_LogiQA", "Transfer", f"{len(target)} LogiQA",
                       {k: restrict(main.preds[k], where[k]) for k in sets})]
    rows = {f"{m}_{source_name}": ([source], f"{len(source)} {source_name}"),
            f"{m}_{source_name} → LogiQA": ([source, target], f"{len(source)} {source_name}, then {len(target)} LogiQA")}
    for name, (stages, trained_on) in rows.items():
        preds = {k: [] for k in sets}
        for seed in setup.seeds:
            res = sequential_finetune_predict(stages, sets, setup.config(seed), rt)
            for k in sets:
                preds[k].append(full_length(res[k].argmax(1), where[k], len(data.splits[k])))
        out.append(Predictions(name, "Transfer", trained_on, {k: np.stack(v) for k, v in preds.items()}))
    return out


LM_PROMPT = "{context}\nQuestion: {question}\nAnswer:"


def lm_system(data: LogiQAData, setup: PLMSetup, model_name: str, rt: Runtime, *, batch_size: int = 8) -> Predictions:
    """Zero-shot log-likelihood scoring with a causal LM on the test subsample: each option is
    scored as the continuation of the paragraph and question; summed and per-token scores."""
    from ..models.lm import load_lm

    pos = eval_positions(data, setup)["test-sub"]
    items = [data.splits["en-test"][i] for i in pos]

    def compute() -> dict[str, np.ndarray]:
        lm = load_lm(model_name, rt)
        ctx = [LM_PROMPT.format(context=it.context, question=it.question) for it in items for _ in it.options]
        cont = [" " + o for it in items for o in it.options]
        scores, counts = lm.loglik(ctx, cont, batch_size=batch_size, return_counts=True)
        return {"sum": scores.reshape(len(items), -1), "per_token": (scores / np.maximum(counts, 1)).reshape(len(items), -1)}

    out = cached("logiqa_lm", {"model": model_name, "prompt": LM_PROMPT, "items": mc.items_fingerprint(items)}, compute)
    n = len(data.splits["en-test"])
    return Predictions(f"{model_name} (zero-shot LL)", "Zero-shot LM", "no LogiQA training",
                       {"en-test": full_length(out["sum"].argmax(1), pos, n)[None, :]},
                       {"per_token": full_length(out["per_token"].argmax(1), pos, n)[None, :]})


# --------------------------------------------------------------------------------------------
# Tables


@dataclass(frozen=True)
class Score:
    """Accuracy (%) of one system on one split: seeds, a bootstrap interval, and its n."""

    seeds: MeanSD
    ci: Interval
    n: int


def score(system: Predictions, data: LogiQAData, split_key: str) -> Score | None:
    if split_key not in system.preds:
        return None
    keep = system.evaluated(split_key)
    correct = system.correct(split_key, data.gold(split_key))[:, keep]
    return Score(mean_sd(100 * correct.mean(axis=1)), bootstrap_ci(correct.mean(axis=0), scale=100), int(keep.sum()))


def results_table(systems: Sequence[Predictions], data: LogiQAData, *, name_map: dict[str, str] | None = None,
                  splits: Sequence[str] = tuple(SPLIT_COLUMNS)) -> pd.DataFrame:
    """Rows = systems (renamed by ``name_map`` to the paper's rows), columns = Table 3's, cells MeanSD."""
    rows = {}
    for s in systems:
        row = (name_map or {}).get(s.name, s.name)
        rows[row] = {SPLIT_COLUMNS[k]: sc.seeds for k in splits if (sc := score(s, data, k)) is not None}
    return pd.DataFrame.from_dict(rows, orient="index")


def detail_table(systems: Sequence[Predictions], data: LogiQAData, split_key: str = "en-test") -> pd.DataFrame:
    """Per system on one split: seeds, mean ± sd, the 95% bootstrap interval, n, training data."""
    rows = []
    for s in systems:
        sc = score(s, data, split_key)
        if sc is None:
            continue
        rows.append({"system": s.name, "category": s.category, "seeds": sc.seeds.n, "accuracy (mean ± sd)": str(sc.seeds),
                     "95% bootstrap CI": f"[{sc.ci.low:.1f}, {sc.ci.high:.1f}]", "items": sc.n,
                     "trained on": s.trained_on})
    return pd.DataFrame(rows).set_index("system")


def per_item_accuracy(system: Predictions, data: LogiQAData, split_key: str) -> np.ndarray:
    """Seed-averaged correctness per item (NaN where not evaluated)."""
    out = np.full(len(data.splits[split_key]), np.nan)
    if split_key in system.preds:
        keep = system.evaluated(split_key)
        out[keep] = system.correct(split_key, data.gold(split_key))[:, keep].mean(axis=0)
    return out


def length_table(systems: Sequence[Predictions], data: LogiQAData, split_key: str = "en-test") -> pd.DataFrame:
    """Table 5: items per length bin, and each system's accuracy (%) per bin."""
    items = data.splits[split_key]
    bucket = length_bucket(items)
    rows = {"#Instances": {lab: int((bucket == b).sum()) for b, lab in enumerate(LENGTH_LABELS)}}
    for s in systems:
        acc = per_item_accuracy(s, data, split_key)
        rows[s.name] = {lab: 100 * np.nanmean(acc[bucket == b]) if np.isfinite(acc[bucket == b]).any() else np.nan
                        for b, lab in enumerate(LENGTH_LABELS)}
    return pd.DataFrame.from_dict(rows, orient="index")


def length_points(systems: Sequence[Predictions], data: LogiQAData, split_key: str = "en-test") -> pd.DataFrame:
    """Long table: system, bin, accuracy and its 95% bootstrap interval (for the length plot)."""
    bucket = length_bucket(data.splits[split_key])
    rows = []
    for s in systems:
        acc = per_item_accuracy(s, data, split_key)
        for b, lab in enumerate(LENGTH_LABELS):
            vals = acc[(bucket == b) & np.isfinite(acc)]
            if len(vals):
                ci = bootstrap_ci(vals, scale=100)
                rows.append({"system": s.name, "length": lab, "accuracy": ci.estimate, "low": ci.low, "high": ci.high,
                             "n": len(vals)})
    return pd.DataFrame(rows)


def best_match(items: Sequence[MCItem], context: str = "pq") -> np.ndarray:
    """The option with the highest word-matching overlap (Table 6's "best-matching candidate")."""
    return lexical.first_argmax(lexical.word_matching_scores(items, replace(lexical.PAPER_WM, context=context)))


def overlap_table(systems: Sequence[Predictions], data: LogiQAData, split_key: str = "en-test", *,
                  context: str = "pq") -> pd.DataFrame:
    """Table 6 for each system and the gold answers.

    Overlap Ratio: % of items where the prediction is the best-matching option. Accuracy, two
    readings: P(right | prediction is the best match) — the one the paper's anchor rows fit —
    and P(right | the gold answer is the best match).
    """
    items = data.splits[split_key]
    bm, gold = best_match(items, context), data.gold(split_key)
    gold_is_bm = gold == bm
    rows = {}
    for s in systems:
        p = s.preds[split_key]
        keep = s.evaluated(split_key)
        p, g, b, gb = p[:, keep], gold[keep], bm[keep], gold_is_bm[keep]
        on_bm = p == b[None, :]
        right = p == g[None, :]
        rows[s.name] = {
            "Overlap Ratio": 100 * on_bm.mean(),
            "Accuracy(%)": 100 * right[on_bm].mean() if on_bm.any() else np.nan,
            "accuracy when gold is the best match": 100 * right[:, gb].mean() if gb.any() else np.nan,
            "items": int(keep.sum()),
        }
    rows["Gold-standard"] = {"Overlap Ratio": 100 * gold_is_bm.mean(), "Accuracy(%)": 100.0,
                             "accuracy when gold is the best match": 100.0, "items": len(items)}
    return pd.DataFrame.from_dict(rows, orient="index")


def per_item_overlap(system: Predictions, data: LogiQAData, split_key: str = "en-test", *,
                     context: str = "pq") -> np.ndarray:
    """Seed-averaged 1/0 "the prediction is the best-matching option" per item (NaN where not evaluated)."""
    out = np.full(len(data.splits[split_key]), np.nan)
    keep = system.evaluated(split_key)
    bm = best_match(data.splits[split_key], context)
    out[keep] = (system.preds[split_key][:, keep] == bm[None, keep]).mean(axis=0)
    return out


def paired_difference(x: np.ndarray, y: np.ndarray) -> Interval:
    """Bootstrap interval (percentage points) of mean(x − y) over the items where both are defined."""
    keep = np.isfinite(x) & np.isfinite(y)
    return bootstrap_ci((x - y)[keep], scale=100)


def direction(ci: Interval) -> bool | None:
    """True if the interval lies above 0, False if below, None if it includes 0 (no decision)."""
    return True if ci.low > 0 else False if ci.high < 0 else None


def type_table(systems: Sequence[Predictions], data: LogiQAData, labels: TypeLabels,
               split_key: str = "en-test") -> pd.DataFrame:
    """Table 7: accuracy (%) on the labelled test items of each type, and n per type."""
    items = data.splits[split_key]
    index = {it.id: i for i, it in enumerate(items)}
    rows = {}
    for t in lq.REASONING_TYPES:
        pos = np.array([index[i] for i, ts in labels.types.items() if t in ts], dtype=int)
        row = {"items": len(pos)}
        for s in systems:
            acc = per_item_accuracy(s, data, split_key)[pos] if len(pos) else np.array([])
            acc = acc[np.isfinite(acc)]
            row[s.name] = 100 * acc.mean() if len(acc) else np.nan
        rows[t] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def export_predictions(systems: Sequence[Predictions], data: LogiQAData) -> Path:
    """Write every system's predictions ``{system: {split: {item id: [option per seed]}}}`` to the
    exports folder, with the data files' checksums."""
    payload = {"data": {p.name: file_checksum(p) for p in data.files}, "systems": {}}
    for s in systems:
        payload["systems"][s.name] = {
            k: {it.id: [int(x) for x in p[:, i]] for i, it in enumerate(data.splits[k]) if (p[:, i] >= 0).all()}
            for k, p in s.preds.items()}
    path = exports_dir() / EXPORT_FILE
    atomic_write_bytes(path, json.dumps(payload, indent=1, ensure_ascii=False).encode("utf-8"))
    return path
