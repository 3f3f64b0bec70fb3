"""MetaLogic predictors: rules, the feature model, the seq2seq engine (tiny model) and the pipeline."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from rcstudy import cache, runtime, serialize
from rcstudy.baselines import metalogic_rules as rules
from rcstudy.data import metalogic as ml
from rcstudy.experiments import metalogic as ex
from rcstudy.metrics import metalogic as mm
from rcstudy.baselines import metagraph as gen
from rcstudy.models import seq2seq
from rcstudy.prompts import metalogic as prompts

DATA = Path(__file__).parent / "fixtures" / "data" / "metalogic"
TINY = seq2seq.Seq2SeqConfig(model="tiny-bert", max_src_len=96, max_tgt_len=48, gen_max_len=12, max_steps=8,
                             batch_size=2, lr=2e-3, warmup=0.0, eval_batch_size=4)


@pytest.fixture(scope="module")
def splits():
    return {s: ml.load_metagraphs(DATA / f"metalogic_{s}.json") for s in ml.SPLITS}


@pytest.fixture(scope="module")
def rt():
    return runtime.setup("cpu", threads=1, precision="fp32")  # exact comparisons: fp32 on every machine


def graph(splits, gid):
    return next(g for s in splits.values() for g in s if g.id == gid)


# --- rules ---------------------------------------------------------------------------------------

def test_empty_and_trivial(splits):
    g = graph(splits, "train_4341")
    assert rules.empty_prediction(g) == ml.Prediction()
    p = rules.trivial_prediction(g)
    assert p.steps == (ml.Step("sent1", "->", "sent3"), ml.Step("sent2", "->", "sent3"), ml.Step("sent4", "->", "sent3"))
    assert p.degrees == dict.fromkeys(g.sids, 2) and not p.triples


def test_indicator_words():
    assert rules.words("it doesn ' t rain , ever .") == ("it", "doesn't", "rain", "ever")
    assert rules.unary_operators("it doesn ' t rain") == (ml.NEG,)
    assert ml.degree_of(rules.unary_operators("it may not rain")) == 1  # ◇¬ = ¬□: unnecessary
    assert ml.degree_of(rules.unary_operators("it must not rain")) == 0  # □¬ = ¬◇: impossible
    assert rules.unary_operators("surely it will perhaps rain", window=2) == (ml.BOX,)


def test_connectives_link_neighbouring_spans(splits):
    fig1 = graph(splits, "train_1300")
    # "most people will not be able to afford ... since the majority ... will not cover the new drugs"
    assert rules.connective_pairs(fig1.nodes["sent5"]) == [("since", "v1", "v3")]
    assert rules.leading_connective(("as", "a", "result", "of")) == "as a result"
    p = rules.rule_prediction(fig1, rules.RuleConfig(window=None))
    assert p.triples["sent5"][0].variables == ("v3", "v1")  # "A since B" is B → A
    uranus = graph(splits, "train_4341")
    assert rules.conclusion_of(uranus) == "sent3"  # opens with "therefore"
    assert all(s.con == "sent3" for s in rules.rule_prediction(uranus).steps)


def test_feature_model_learns_and_is_deterministic(splits):
    train, test = splits["train"], splits["test"]
    a = rules.FeatureModel(0).fit(train)
    b = rules.FeatureModel(0).fit(train)
    for g in test:
        pa, pb = a.predict(g), b.predict(g)
        assert pa == pb
        assert set(pa.degrees) == set(g.sids) and pa.steps
    fitted = mm.evaluate(train, {g.id: a.predict(g) for g in train})
    assert fitted["cert_acc"] > mm.evaluate(train, {})["cert_acc"]
    with pytest.raises(RuntimeError):
        rules.FeatureModel().predict(test[0])


def test_feature_model_is_cached_as_data_and_predicts_bit_for_bit(splits, isolated_cache):
    """A fitted model goes through the results cache as its parameters; the rebuilt regressions
    give the fitted ones' probabilities exactly, and so the same predictions."""
    train, test = splits["train"], splits["test"]
    fitted = rules.FeatureModel(0).fit(train)
    assert cache.cached("fm", {}, lambda: fitted) is fitted
    loaded = cache.cached("fm", {}, lambda: pytest.fail("recomputed"))
    assert type(loaded.models["step"]) is rules.LinearModel and not hasattr(loaded.models["step"], "_fitted")
    for g in [*train, *test]:
        assert loaded.predict(g) == fitted.predict(g)
    rows = [rules._indicator_features(n.text) for g in test for n in g.nodes.values()]
    for name in ("degree", "local"):
        (ca, pa), (cb, pb) = fitted.models[name].proba(rows), loaded.models[name].proba(rows)
        assert ca == cb and pa.dtype == pb.dtype and pa.tobytes() == pb.tobytes()
    constant = rules.LinearModel.fit([{"w=a": 1.0}, {"w=b": 1.0}], ["none", "none"], 0)
    again = serialize.loads(serialize.dumps(constant))
    assert again.constant == "none" and again.proba([{}, {}])[0] == ["none"]


# --- seq2seq engine ---------------------------------------------------------------------------

def test_tiny_seq2seq_trains_and_repeats(splits, rt, isolated_cache):
    src, tgt = prompts.once_pairs(splits["train"])
    first = seq2seq.train(src, tgt, TINY, rt)
    assert len(first.losses) == TINY.max_steps
    assert sum(first.losses[-3:]) < sum(first.losses[:3])  # the loss falls
    again = seq2seq.train(src, tgt, replace(TINY, eval_batch_size=3), rt, resume=False)  # retrained from scratch
    assert again.losses == pytest.approx(first.losses)
    out = seq2seq.generate(first, [ml.once_source(g) for g in splits["test"]], rt)
    assert len(out) == 3 and all(isinstance(t, str) for t in out)
    cached = seq2seq.train(src, tgt, TINY, rt)  # a finished run is loaded, not retrained
    assert cached.losses == first.losses


def test_decoder_only_examples_mask_the_source_out_of_the_loss():
    tok = seq2seq.load_seq2seq("tiny-llama")[1]
    source = "sent1:  v1: it rains .  sent2: v1: so it is wet . "
    target = "$tree$ sent1 -> sent2;  $degree$ sent1: contingent"
    ids, labels = seq2seq.causal_example(tok, source, target, max_src_len=64, max_tgt_len=64)
    prompt = seq2seq.causal_prompt(tok, source, 64)
    assert prompt == "sent1: v1: it rains . sent2: v1: so it is wet .\nOutput:"  # whitespace collapsed
    n_prompt = len(tok(prompt, add_special_tokens=False)["input_ids"])
    assert labels[:n_prompt] == [-100] * n_prompt  # no loss on the source
    assert labels[n_prompt:] == ids[n_prompt:] and ids[-1] == tok.eos_token_id
    assert tok.decode(ids[n_prompt:-1]) == " $tree$ sent1 -> sent2; $degree$ sent1: contingent"
    short_ids, short_labels = seq2seq.causal_example(tok, source, target, max_src_len=3, max_tgt_len=2)
    assert sum(x != -100 for x in short_labels) == 3  # two target tokens and EOS
    assert tok.decode(short_ids).endswith("\nOutput:" + tok.decode(short_labels[-3:-1]) + tok.eos_token)


def test_tiny_decoder_only_trains_and_repeats(splits, rt, isolated_cache):
    src, tgt = prompts.once_pairs(splits["train"])
    cfg = replace(TINY, model="tiny-llama", max_steps=10, lr=3e-3)
    first = seq2seq.train(src, tgt, cfg, rt)
    assert sum(first.losses[-3:]) < sum(first.losses[:3])  # the loss falls
    again = seq2seq.train(src, tgt, cfg, rt, resume=False)  # retrained from scratch, same seed
    assert again.losses == pytest.approx(first.losses)
    other = seq2seq.train(src, tgt, replace(cfg, seed=1), rt)
    assert other.losses != pytest.approx(first.losses)  # the seed sets the batch order
    out = seq2seq.generate(first, [ml.once_source(g) for g in splits["test"]], rt)
    assert len(out) == 3 and all(isinstance(t, str) and "\n" not in t for t in out)


def test_dev_selection_keeps_the_best_checkpoint(splits, rt, isolated_cache):
    src, tgt = prompts.once_pairs(splits["train"])
    cfg = replace(TINY, model="tiny-llama", max_steps=6, evaluations=3, train_layers=1)
    scores, seen = iter([0.5, 0.9, 0.1]), []

    def select(candidate):
        seen.append({k: v.clone() for k, v in candidate.model.state_dict().items()})
        return next(scores)

    kept = seq2seq.train(src, tgt, cfg, rt, select=select, select_key="three fixed scores")
    assert kept.selection == [(2, 0.5), (4, 0.9), (6, 0.1)] and kept.best_step == 4
    for name, value in kept.model.state_dict().items():
        assert torch.equal(value, seen[1][name]), name
    bottom, top = "model.layers.0.mlp.up_proj.weight", "model.layers.1.mlp.up_proj.weight"
    assert torch.equal(seen[0][bottom], seen[1][bottom]) and not torch.equal(seen[0][top], seen[1][top])  # train_layers=1
    plain = seq2seq.train(src, tgt, cfg, rt)  # no selection: the last weights, and the same training
    assert plain.losses == pytest.approx(kept.losses) and plain.best_step is None
    again = seq2seq.train(src, tgt, cfg, rt, select=select, select_key="three fixed scores")  # from the cache
    assert again.best_step == 4 and again.selection == kept.selection


def test_checkpoint_resume_equals_uninterrupted(splits, rt, tmp_path, monkeypatch):
    src, tgt = prompts.once_pairs(splits["train"])
    cfg = replace(TINY, max_steps=5, checkpoint_every=2)
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "a"))
    whole = seq2seq.train(src, tgt, cfg, rt)
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "b"))
    with pytest.raises(seq2seq.TrainingInterrupted, match="step 1/5"):
        seq2seq.train(src, tgt, cfg, rt, stop_after_minutes=0)
    assert seq2seq.checkpoint_path(cfg, src, tgt).exists()
    resumed = seq2seq.train(src, tgt, cfg, rt)
    assert resumed.losses == pytest.approx(whole.losses)
    for (name, a), b in zip(whole.model.state_dict().items(), resumed.model.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-6), name


def test_truncation_rate():
    tok = seq2seq.load_seq2seq("tiny-bert")[1]
    assert seq2seq.truncation_rate(tok, ["a b c d e f", "a"], 5) == 0.5


# --- pipeline -----------------------------------------------------------------------------------

def test_multitask_pipeline_parses_every_node(splits, rt, isolated_cache, monkeypatch):
    monkeypatch.setenv("RCSTUDY_DATA", str(DATA.parent))  # outputs are cached under the data's checksums
    out = gen.seq2seq_outputs("multitask", replace(TINY, max_steps=2), splits["train"], {"test": splits["test"]}, rt)
    assert len(out["losses"]) == 2
    preds = gen.parse_outputs("multitask", out["test"])
    for g in splits["test"]:
        assert set(out["test"][g.id]["degree"]) == set(g.sids)
        assert set(preds[g.id].degrees) == set(g.sids)
    again = gen.seq2seq_outputs("multitask", replace(TINY, max_steps=2), splits["train"], {"test": splits["test"]}, rt)
    assert again["test"] == out["test"]  # from the cache


def test_fewshot_prompt(splits):
    shots = ex.fewshot_shots(splits["train"], 1)
    assert [g.id for g in shots] == ["train_9004"]  # the shortest input among passages with a rebut and a formula
    prompt = prompts.fewshot_prompt(shots, splits["test"][0])
    assert prompt.endswith("Metagraph:") and "  " not in prompt
    assert ml.once_target(shots[0]).split()[0] in prompt and prompt.count("Passage:") == 2


def test_subsamples_nest(splits):
    train = splits["train"]
    subsets = ex.ratio_subsets(train, [0.5, 1.0], seed=3)
    assert set(g.id for g in subsets[0.5]) <= set(g.id for g in subsets[1.0])
    assert len(subsets[0.5]) == 3 and subsets[1.0] == train


def test_fewshot_facts_count_steps_not_just_the_tree_slot():
    # Answers SmolLM2 wrote with one solved example: a `$tree$` slot followed by sentence ids is not a step.
    texts = {"a": " $tree$ sent5: sent4: sent3: sent1; sent2: sent3; sent4: sent5;",
             "b": " sent4: sent3: sent1: sent2: sent3: sent4; sent4: sent3: sent1;",
             "c": " $tree$ sent1 -> sent2; $formulae$ $degree$ sent1: contingent | sent2: contingent",
             "d": " sent1: sent2: sent3: sent4:"}
    facts = ex.fewshot_facts(texts, gen.parse_outputs("fewshot", texts))
    assert facts["metalogic_fewshot_n"] == 4 and facts["metalogic_fewshot_tree_count"] == 2
    assert facts["metalogic_fewshot_parsed"] == 50.0
    assert facts["metalogic_fewshot_steps_count"] == 1 and facts["metalogic_fewshot_steps"] == 25.0
    assert facts["metalogic_fewshot_parsed_ci"] == "[7, 93] %"  # exact binomial, 2 of 4
    assert facts["metalogic_fewshot_example"].startswith("$tree$ sent5: sent4:")


def test_fewshot_facts_none_of_eight_is_compatible_with_several():
    texts = {f"p{i}": " sent1: sent2: sent3;" for i in range(8)}
    facts = ex.fewshot_facts(texts, gen.parse_outputs("fewshot", texts))
    assert facts["metalogic_fewshot_parsed"] == 0.0 and facts["metalogic_fewshot_parsed_ci"] == "[0, 37] %"
    empty = ex.fewshot_facts({}, {})
    assert empty["metalogic_fewshot_n"] == 0 and empty["metalogic_fewshot_parsed_ci"] == "no interval (not run)"
