"""The shared ReClor model: every chapter's defaults build the same model on the same questions."""

import warnings

from rcstudy import runtime, sampling
from rcstudy.data import reclor as reclor_data
from rcstudy.data import rule as rule_data
from rcstudy.experiments import logiqa, reclor, rule, shared


def test_every_chapter_builds_the_shared_reclor_model():
    r = reclor.Config()
    assert r.encoder.finetune.mc(r.headline, "CQA", r.seeds_of(r.headline)[0]) == shared.RECLOR_ENCODER
    u = rule.Config()
    _, setups = rule.trained_setups(u)
    (encoder,) = setups[f"{u.encoder.model}, fine-tuned on ReClor"]
    assert encoder.cfg == shared.RECLOR_ENCODER and encoder.train_questions is None
    q = logiqa.Config()
    assert q.encoder.mc(q.encoder.seeds[0]) == shared.RECLOR_ENCODER  # the transfer rows' source stage


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
