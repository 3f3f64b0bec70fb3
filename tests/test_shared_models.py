"""The shared ReClor model: every chapter's defaults build the same model on the same questions."""

import warnings
from dataclasses import asdict

import pytest

from rcstudy import runtime, sampling
from rcstudy.cache import fingerprint
from rcstudy.data import reclor as reclor_data
from rcstudy.data import rule as rule_data
from rcstudy.experiments import logiqa, reclor, rule, shared


def same_cache_key(cfg) -> bool:
    """The model's cache key is that of the shared model: equal settings *and* equal JSON (1 and
    1.0 are equal in Python but not in a key)."""
    return cfg == shared.RECLOR_ENCODER and fingerprint(asdict(cfg)) == fingerprint(asdict(shared.RECLOR_ENCODER))


@pytest.mark.parametrize("profile", [None, "quick"])  # the defaults, and the profile as the runner loads it
def test_every_chapter_builds_the_shared_reclor_model(profile):
    load = (lambda cls: cls()) if profile is None else (lambda cls: cls.load(profile))
    r = load(reclor.Config)
    assert same_cache_key(r.encoder.finetune.mc(r.headline, "CQA", r.seeds_of(r.headline)[0]))
    u = load(rule.Config)
    _, setups = rule.trained_setups(u)
    (encoder,) = setups[f"{u.encoder.model}, fine-tuned on ReClor"]
    assert same_cache_key(encoder.cfg) and encoder.train_questions is None
    q = load(logiqa.Config)
    assert same_cache_key(q.transfer.source_mc(q.encoder, q.encoder.seeds[0]))  # the transfer rows' source stage


def test_the_chapters_train_it_on_the_same_questions(fixture_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", reclor_data.SplitSizeWarning)
        splits = reclor.load_splits()
        train = reclor_data.load_split("train")
    held = {m.id for m in rule_data.load_rule().mains}
    expected = [it for it in train if it.id not in held and it.label is not None]
    assert 0 < len(expected) < len(train)
    cfg = reclor.Config()
    runner = reclor.Runner(cfg, splits, runtime.setup("cpu", threads=1))
    assert runner.train_items(cfg.headline, "CQA") == expected
    u = rule.Config()
    pool = sampling.draw(train, u.encoder.train_questions, u.sample_seed)
    assert shared.reclor_training_questions(pool, held) == expected
    assert logiqa.reclor_source(logiqa.Config().transfer, logiqa.Config().sizes.seed) == expected


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _full_profiles():
    from rcstudy.chapters import config_class, toc_chapters

    for chapter in toc_chapters():
        cls = config_class(chapter)
        if cls is not None:
            yield chapter, cls.load("full")


def test_every_hub_reference_of_the_full_profiles_is_pinned_to_a_commit():
    """Every model and tokenizer a full profile names — found by its field's type (``ModelName``),
    whatever the field is called and whether or not the id has a "/" — is offline, tiny, trained
    here, or a Hub id pinned to a 40-digit commit."""
    from rcstudy.chapters import hub_models
    from rcstudy.models.registry import split_revision

    pinned, unpinned = set(), []
    for chapter, cfg in _full_profiles():
        for name in hub_models(cfg):
            repo, revision = split_revision(name)
            if revision and len(revision) == 40 and all(c in "0123456789abcdef" for c in revision):
                pinned.add(repo)
            else:
                unpinned.append(f"{chapter}: {name}")
    assert not unpinned, unpinned
    assert {"roberta-large", "roberta-base", "t5-large", "microsoft/deberta-v3-large", "Qwen/Qwen2.5-7B",
            "xlnet-large-cased", "gpt2-large", "bert-base-uncased", "allenai/unifiedqa-v2-t5-base-1363200",
            "allenai/unifiedqa-v2-t5-3b-1363200"} <= pinned


def test_the_typed_model_fields_hold_every_model_a_profile_names():
    """No model hides in a plain text field: every value of a full or quick profile that is a model
    name (a pinned id, or a name the key-name heuristic of old found) is in a ``ModelName`` field,
    the tokenizer of ReClor's Table 2 included."""
    from dataclasses import asdict

    from rcstudy.chapters import config_class, toc_chapters
    from rcstudy.models.registry import model_references

    def model_names(params: dict) -> list[str]:
        """The key-name heuristic of old: values under a key containing "model", at any depth."""
        names: list = []

        def walk(node):
            for key, value in node.items():
                if "model" in key:
                    names.extend(value if isinstance(value, (list, tuple, dict)) else [value])
                elif isinstance(value, dict):
                    walk(value)
        walk(params)
        return [n for n in names if isinstance(n, str)]

    for chapter in toc_chapters():
        cls = config_class(chapter)
        if cls is None:
            continue
        for profile in ("quick", "full"):
            cfg = cls.load(profile)
            typed = set(model_references(cfg))
            pins = {s for s in _strings(asdict(cfg)) if "@" in s}
            assert set(model_names(asdict(cfg))) | pins <= typed, (chapter, profile)
    assert "bert-base-uncased@86b5e0934494bd15c9632b12f734a8a67f723594" in model_references(reclor.Config.load("full"))


def test_the_run_checks_every_hub_reference_before_it_starts(monkeypatch):
    """The pre-run check asks the local Hub cache for every Hub id by type, tokenizers too: offline,
    the full profile of ReClor stops before its first cell on the tokenizer as on the models."""
    from rcstudy import preflight

    asked = []
    monkeypatch.setattr(preflight, "model_problems", lambda names, online: asked.extend(names) or [])
    monkeypatch.setattr(preflight, "data_problems", lambda *a, **k: [])
    preflight.chapter_problems(reclor.Config, reclor.Config.load("full"), online=False)
    assert "bert-base-uncased@86b5e0934494bd15c9632b12f734a8a67f723594" in asked
    assert "xlnet-large-cased@37658b4f179eaf971d127d16bfbd9ca676a93034" in asked
    assert not {"fastText", "Bi-LSTM"} & set(asked)
