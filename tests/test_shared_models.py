"""The shared ReClor model: every chapter's defaults build the same model on the same questions."""

import warnings
from dataclasses import asdict, fields

import pytest

from rcstudy import runtime, sampling
from rcstudy.cache import fingerprint
from rcstudy.data import reclor as reclor_data
from rcstudy.data import rule as rule_data
from rcstudy.experiments import logiqa, metalogic, reclor, record, rule, shared
from rcstudy.experiments.metalogic.config import engine_config
from rcstudy.models.mc import MCConfig
from rcstudy.models.seq2seq import Seq2SeqConfig


def same_cache_key(cfg) -> bool:
    """The model's cache key is that of the shared model: equal settings *and* equal JSON (1 and
    1.0 are equal in Python but not in a key)."""
    return cfg == shared.RECLOR_ENCODER and fingerprint(asdict(cfg)) == fingerprint(asdict(shared.RECLOR_ENCODER))


@pytest.mark.parametrize("profile", [None, "quick"])  # the defaults, and the profile as the runner loads it
def test_every_chapter_builds_the_shared_reclor_model(profile):
    load = (lambda cls: cls()) if profile is None else (lambda cls: cls.load(profile))
    r = load(reclor.Config)
    assert same_cache_key(r.encoder.finetune.engine(r.headline, "CQA", r.seeds_of(r.headline)[0]))
    u = load(rule.Config)
    _, setups = rule.trained_setups(u)
    (encoder,) = setups[f"{u.encoder.model}, fine-tuned on ReClor"]
    assert same_cache_key(encoder.cfg) and encoder.train_questions is None
    q = load(logiqa.Config)
    assert same_cache_key(q.transfer.source_mc(q.encoder, q.encoder.seeds[0]))  # the transfer rows' source stage


def test_the_fine_tuning_section_gives_the_engine_every_setting():
    """No default of the engine's own decides a run: the book's section declares every setting of
    the engine but the model, the input and the seed, and passes each on."""
    assert {f.name for f in fields(shared.FineTuning)} == {f.name for f in fields(MCConfig)} - {"model", "fields", "seed"}
    settings = shared.FineTuning(lr=3e-5, epochs=2.0, weight_decay=0.1, warmup=0.2, max_length=99, batch_size=5,
                                 grad_accum=7, eval_batch_size=11)
    assert settings.engine("m", "QA", 4) == MCConfig(model="m", fields="QA", seed=4, **asdict(settings))


#: Every setting each chapter's fine-tuning gives the engine, by chapter, profile and run, written
#: out: the cache keys of the models the profiles train (a changed value retrains its model).
BOOK = {"max_length": 256, "epochs": 1.0, "lr": 1e-4, "batch_size": 16, "grad_accum": 1, "warmup": 0.1,
        "weight_decay": 0.01, "eval_batch_size": 32}
FULL = {**BOOK, "epochs": 10.0, "lr": 1e-5}
LOGIQA_SMOKE = {**BOOK, "max_length": 64, "lr": 1e-3, "batch_size": 4, "fields": "CQA", "seed": 0}
ENGINE_SETTINGS = {
    ("reclor", "smoke", "Table 7"): {**BOOK, "fields": "CQA", "seed": 0},
    ("reclor", "quick", "Table 7"): {**BOOK, "fields": "CQA", "seed": 0},
    # Table 9's RoBERTa_LARGE values (10 epochs, as the table gives them), its batch of 24 as 8 × 3
    ("reclor", "full", "Table 7"): {**BOOK, "epochs": 10, "lr": 1e-5, "batch_size": 8, "grad_accum": 3,
                                    "eval_batch_size": 64, "fields": "CQA", "seed": 1},
    ("logiqa", "smoke", "encoder"): LOGIQA_SMOKE,
    ("logiqa", "smoke", "transfer source"): LOGIQA_SMOKE,
    ("logiqa", "quick", "encoder"): {**BOOK, "batch_size": 8, "fields": "CQA", "seed": 0},
    ("logiqa", "quick", "transfer source"): {**BOOK, "fields": "CQA", "seed": 0},
    ("logiqa", "full", "encoder"): {**FULL, "fields": "CQA", "seed": 0},
    ("logiqa", "full", "transfer source"): {**FULL, "fields": "CQA", "seed": 0},
    ("record", "smoke", "ranker"): {**BOOK, "max_length": 64, "batch_size": 2, "fields": "QA", "seed": 0},
    ("record", "quick", "ranker"): {**BOOK, "max_length": 64, "epochs": 2.0, "lr": 4e-4, "batch_size": 8,
                                    "fields": "QA", "seed": 0},
    ("record", "full", "ranker"): {**BOOK, "max_length": 384, "lr": 2e-5, "batch_size": 8, "grad_accum": 4,
                                   "fields": "CQA", "seed": 0},
    ("rule", "smoke", "encoder"): {**BOOK, "max_length": 128, "lr": 1e-3, "batch_size": 4, "fields": "CQA", "seed": 0},
    ("rule", "quick", "encoder"): {**BOOK, "fields": "CQA", "seed": 0},
    ("rule", "full", "encoder"): {**FULL, "fields": "CQA", "seed": 0},
}


def fine_tunings(chapter: str, cfg) -> dict[str, MCConfig]:
    """The engine configuration of each fine-tuning run of a chapter, built as the chapter builds
    it, for its first seed."""
    if chapter == "reclor":
        return {"Table 7": cfg.encoder.finetune.engine(cfg.headline, "CQA", cfg.seeds_of(cfg.headline)[0])}
    if chapter == "logiqa":
        seed = cfg.encoder.seeds[0]
        return {"encoder": cfg.encoder.mc(seed), "transfer source": cfg.transfer.source_mc(cfg.encoder, seed)}
    if chapter == "record":
        return {"ranker": cfg.ranker.mc_config(cfg.model, cfg.seeds[0])}
    return {"encoder": cfg.encoder.mc_config(cfg.seeds[0])}


@pytest.mark.parametrize("profile", ["smoke", "quick", "full"])
@pytest.mark.parametrize("chapter, module, model", [
    ("reclor", reclor, lambda c: c.headline), ("logiqa", logiqa, lambda c: c.encoder.model),
    ("record", record, lambda c: c.model), ("rule", rule, lambda c: c.encoder.model)])
def test_every_chapters_fine_tuning_gives_the_engine_these_settings(chapter, module, model, profile):
    cfg = module.Config.load(profile)
    built = fine_tunings(chapter, cfg)
    assert set(built) == {run for c, p, run in ENGINE_SETTINGS if (c, p) == (chapter, profile)}
    for run, engine in built.items():
        expected = {**ENGINE_SETTINGS[chapter, profile, run], "model": model(cfg)}
        assert engine == MCConfig(**expected), run
        assert fingerprint(asdict(engine)) == fingerprint(expected), run  # 1 and 1.0 differ in a key


#: What a text-to-text run takes besides its training settings: decoding and checkpointing.
RUN_SETTINGS = {"model", "seed", "infer_max_src_len", "gen_max_len", "eval_batch_size", "checkpoint_every",
                "evaluations", "train_layers"}


def test_the_text_to_text_section_gives_the_engine_every_training_setting():
    assert {f.name for f in fields(shared.TextToTextTraining)} == {f.name for f in fields(Seq2SeqConfig)} - RUN_SETTINGS
    settings = shared.TextToTextTraining(epochs=2.0, max_steps=9, batch_size=3, grad_accum=2, lr=1e-5,
                                         optimizer="adafactor", warmup=0.2, weight_decay=0.1, max_src_len=99,
                                         max_tgt_len=33)
    assert settings.engine("m", 4, gen_max_len=7) == Seq2SeqConfig(model="m", seed=4, gen_max_len=7, **asdict(settings))


#: Every training setting each chapter's text-to-text fine-tuning gives the engine, by chapter and
#: profile, written out (a changed value retrains its model). RULE's epochs stay an int (its key).
S2S = {"warmup": 0.05, "weight_decay": 0.0, "grad_accum": 1, "max_steps": None}
RULE_S2S = {**S2S, "epochs": 1, "lr": 1e-4, "optimizer": "adafactor", "max_src_len": 512, "max_tgt_len": 128,
            "batch_size": 8}
TEXT_TO_TEXT = {
    ("metalogic", "smoke"): {**S2S, "epochs": 1.0, "max_steps": 3, "batch_size": 2, "lr": 1e-3, "optimizer": "adamw",
                             "max_src_len": 128, "max_tgt_len": 64},
    ("metalogic", "quick"): {**S2S, "epochs": 1.0, "max_steps": 20, "batch_size": 8, "lr": 3e-4, "optimizer": "adamw",
                             "max_src_len": 256, "max_tgt_len": 160},
    ("metalogic", "full"): {**S2S, "epochs": 300.0, "batch_size": 32, "lr": 1e-5, "optimizer": "adafactor",
                            "max_src_len": 512, "max_tgt_len": 256},
    ("rule", "smoke"): {**RULE_S2S, "lr": 1e-3, "batch_size": 4, "max_src_len": 128},
    ("rule", "quick"): RULE_S2S,
    ("rule", "full"): {**RULE_S2S, "epochs": 3, "batch_size": 16},
}


@pytest.mark.parametrize("chapter, profile", sorted(TEXT_TO_TEXT))
def test_every_chapters_text_to_text_training_gives_the_engine_these_settings(chapter, profile):
    if chapter == "metalogic":
        cfg = metalogic.Config.load(profile)
        engine = engine_config(cfg, cfg.seq2seq.seeds[0])
    else:
        cfg = rule.Config.load(profile)
        engine = cfg.seq2seq.seq2seq_config("some-model", cfg.seeds[0])
    training = {k: v for k, v in asdict(engine).items() if k not in RUN_SETTINGS}
    assert training == TEXT_TO_TEXT[chapter, profile]
    assert fingerprint(training) == fingerprint(TEXT_TO_TEXT[chapter, profile])  # 1 and 1.0 differ in a key


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
