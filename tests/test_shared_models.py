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


#: Full-profile Hub models whose commit could not be looked up offline (pinned when it can be).
UNPINNED = {"xlnet-large-cased", "allenai/unifiedqa-v2-t5-base-1363200",
            "allenai/unifiedqa-v2-t5-3b-1363200"}


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def test_full_profile_hub_models_are_pinned_to_a_commit():
    from rcstudy.experiments import metalogic, record
    from rcstudy.models.registry import OFFLINE_MODELS, split_revision

    pinned, unpinned = set(), set()
    for chapter in (reclor, logiqa, rule, metalogic, record):
        for s in _strings(asdict(chapter.Config.load("full"))):
            repo, revision = split_revision(s) if "@" in s else (s, None)
            if revision:
                assert len(revision) == 40 and all(c in "0123456789abcdef" for c in revision), s
                pinned.add(repo)
            elif s in UNPINNED or ("/" in s and s.count("/") == 1 and " " not in s and s not in OFFLINE_MODELS):
                unpinned.add(s)
    assert {"roberta-large", "roberta-base", "t5-large", "microsoft/deberta-v3-large", "Qwen/Qwen2.5-7B"} <= pinned
    assert unpinned == UNPINNED
