"""The RULE pipeline on the fixtures: evaluation units, baselines, prompting (with a stand-in LM
whose answers are known), the encoder on a tiny random model, and the EASY/HARD extension."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rcstudy import exports, papers, runtime
from rcstudy.claims import by_id
from rcstudy.data.records import MCItem
from rcstudy.data.rule import load_prompts, load_rule, question_block
from rcstudy.experiments import rule as ex
from rcstudy.experiments import shared
from rcstudy.models.mc import MCConfig
from rcstudy.models.rule_lm import LazyLM, parse_answer
from rcstudy.models.seq2seq import Seq2SeqConfig
from rcstudy.papers.rule import T5_COLUMNS
from rcstudy.prompts import rule as rp
from rcstudy.prompts.rule import ZERO_SHOT_COT
from rcstudy.report import md_text

GOOD = Path(__file__).parent / "fixtures" / "data" / "rule"


@pytest.fixture(scope="module")
def data():
    return load_rule(GOOD)


@pytest.fixture(scope="module")
def prompts():
    return load_prompts(GOOD)


class FakeLM:
    """Always prefers the option at ``favourite``; counts how often it is asked."""

    def __init__(self, favourite: int = 3):
        self.favourite, self.calls = favourite, 0

    def next_token_logprobs(self, prompts, candidates):
        self.calls += 1
        out = np.full((len(prompts), len(candidates)), -5.0)
        out[:, self.favourite] = -0.1
        return out

    def loglik(self, contexts, continuations, return_counts=False):
        self.calls += 1
        counts = np.array([max(1, len(c.split())) for c in continuations])
        scores = np.array([-1.0 if "None of the above" in c else -30.0 * n for c, n in zip(continuations, counts)])
        return (scores, counts) if return_counts else scores

    def generate(self, prompts, max_new_tokens, stop=None):
        self.calls += 1
        return [" It follows. Therefore the answer is Option1", " no idea"][: 1] * len(prompts)


def fake_lazy(fake: FakeLM, name: str = "fake-lm") -> LazyLM:
    lazy = LazyLM(name, runtime.setup(threads=1))
    lazy.lm = fake  # what cached_property would load
    return lazy


def test_pooled_takes_the_split_holding_most_subquestions(data):
    # train_1 has subquestions in splits 1 (two), 2 (one) and 5 (one)
    evals = [ex.Evaluation(1, {"train_1": 0}, {"train_1_sub1": 0, "train_1_sub2": 1}),
             ex.Evaluation(2, {"train_1": 2}, {"train_1_sub3": 2}),
             ex.Evaluation(5, {"train_1": 1}, {"train_1_sub4": 0})]
    p = ex.pooled(data, evals)
    assert p.main_pred == {"train_1": 0}
    assert len(p.sub_pred) == 4
    system = ex.System("s", "zero-shot", evals, data.subset(["train_1"]))
    pooled = ex.system_scores(system, "pooled")
    assert pooled["MainQ"] == 100 and pooled["SubQ"] == 75 and pooled["Consistency"] == 0
    per_split = ex.system_scores(system, "per_split_mean")
    assert per_split["MainQ"].mean == pytest.approx(100 / 3)
    assert per_split["Consistency"].mean == pytest.approx(100 / 3)  # split 1 is consistent on its own
    with pytest.raises(ValueError, match="aggregation"):
        ex.system_scores(system, "median")


def test_a_sample_without_subquestions_scores_n_a_and_ranks_last(data):
    # a language-model sample of main questions none of which has subquestions (a small -p lm.items)
    system = ex.System("s", "zero-shot", [ex.Evaluation(1, {"train_1": 0}, {}), ex.Evaluation(2, {"train_1": 2}, {})],
                       data.subset(["train_1"]))
    scores = ex.system_scores(system, "per_split_mean")
    assert np.isnan(scores["SubQ"]) and scores["MainQ"].mean == pytest.approx(50)
    rows = {"a": scores, "b": {**scores, "MainQ": 80.0}, "c": {**scores, "SubQ": 10.0}}
    assert ex.best_by_subq(rows) == "c"  # any SubQ beats none
    assert ex.best_by_subq({"a": rows["a"], "b": rows["b"]}) == "b"  # no SubQ anywhere: MainQ decides


def test_position_baseline_and_none(data):
    last = ex.position_baseline(data, 3)
    scores = ex.system_scores(last)
    assert scores["SubQ"] == pytest.approx(100 * 4 / 14)  # labels: 3 subquestions have label 3 ...
    table = ex.none_table(last)
    assert table.loc["all", "None is the answer"] == 100  # ... and None always sits at Option3
    longest = ex.length_baseline(data, True)
    assert longest.evals[0].main_pred["train_1"] == 2  # "Every animal in the park sings." has 6 words


def test_claim_intervals_match_the_table_metrics(data):
    last = ex.position_baseline(data, 3)
    scores = ex.system_scores(last)
    gap = ex.selective_gap(last, seed=0)  # one unit: the pooled gap is the table's
    # the interval resamples main questions (a main question's subquestions together): n counts them
    assert gap.estimate == pytest.approx(scores["Selective"] - scores["Eliminative"])
    assert gap.n == len({s.meta["main_id"] for s in data.subs})
    assert gap.low <= gap.estimate <= gap.high
    excess = ex.consistency_excess([last, last], seed=0)  # a system repeated: the same mean
    assert excess.estimate == pytest.approx(scores["Consistency"] - scores["MainQ"] / 2) and excess.n == 12
    frame = pd.DataFrame({"main_id": ["m1", "m1", "m2", "m2", "m3"], "selective": [True, True, True, False, False],
                          "right": [True, True, False, False, True]})
    align = ex.alignment_gap(frame, seed=0)  # the options of one main question are drawn together
    assert align.estimate == pytest.approx(100 * (2 / 3 - 1 / 2)) and align.n == 3


def test_a_fine_tuned_model_is_judged_by_its_held_out_loss_on_the_main_questions(data):
    """Each seed keeps its logits on the main questions: the model's held-out loss is their
    cross-entropy at the gold option, against ln 4 (seeds, then main questions, resampled)."""
    from rcstudy.experiments.rule.fine_tuned import logits_system
    from rcstudy.experiments.rule.gates import loss_checks
    from rcstudy.experiments.rule.units import Trained

    gold = np.array([m.label for m in data.mains])
    sure = np.where(np.arange(4) == gold[:, None], 3.0, 0.0)  # each question: −ln(e³ / (e³ + 3))
    even = np.where(np.arange(4) == (gold[:, None] + 1) % 4, 1e-9, 0.0)  # a wrong pick, at even odds

    def seeds(main: np.ndarray) -> list:
        return [logits_system("m", seed, {"main": main, "sub": np.zeros((len(data.subs), 4)), "train questions": 8,
                                          "losses": [1.4, 0.3]}, data) for seed in (0, 1)]

    checks = loss_checks(Trained("enc", {}, {"enc": seeds(sure), "t2t": seeds(even)}, []), seed=0)
    assert checks["enc"].heldout_loss.estimate == pytest.approx(np.log(1 + 3 * np.exp(-3)))
    assert checks["enc"].learned and checks["enc"].first == pytest.approx(1.4)
    assert checks["t2t"].heldout_loss.estimate == pytest.approx(np.log(4)) and not checks["t2t"].learned
    assert checks["t2t"].first is None and "nor its loss there, 1.386" in checks["t2t"].warning()


def test_a_claim_rests_on_the_gate_of_each_setting_on_the_task_it_reads(data):
    """The claims on prompted settings name the rows of their gates as the learned table has them
    (a setting on its subquestions, a Table 5 setting on its main questions), and each gate is
    named as the setting it judges, as the claim quotes it."""
    from rcstudy.experiments.rule.gates import gates_of
    from rcstudy.experiments.rule.prompting import eliminative_claim, prompted_gates
    from rcstudy.experiments.rule.rationales import Rationales, rationales_claim
    from rcstudy.experiments.rule.units import Prompted, Trained

    name = "fake-lm, zero-shot (letter prob.)"
    setting = ex.System(name, "zero-shot", ex.position_baseline(data, 3).evals, data)
    prompted = Prompted({name: setting}, {}, [], ("fake-lm",), {name: ("fake-lm", "0:vanilla:letter")})
    runs = {name: {variant: setting for variant in ex.RATIONALE_VARIANTS}}
    rationales = Rationales(runs=runs, asked=ex.rationale_table(runs), origins={})
    checks = gates_of(Trained("enc", {}, {}, []), prompted_gates(prompted, seed=0), rationales, seed=0)
    sub = eliminative_claim(prompted, {name: ex.system_scores(setting)}, seed=0)
    main = rationales_claim(rationales.with_context, runs, seed=0)
    assert sub.rests_on == (f"{name} (subquestions)",) and main.rests_on == (f"{name} (main questions)",)
    assert {checks[row].name for row in (*sub.rests_on, *main.rests_on)} == {name}


def test_consistency_is_judged_on_the_settings_that_meet_its_premise(data):
    """"Consistency far below humans', although they answer the main questions above chance": a
    prompted setting at chance on its main questions is set aside and named, not counted against
    the claim; with every setting at chance, the claim rests on their main-question gates."""
    from rcstudy.experiments.rule.follow_ups import consistency_claim
    from rcstudy.experiments.rule.prompting import prompted_gates
    from rcstudy.experiments.rule.units import Evaluation, Prompted, Trained

    gold = ex.System("oracle", "zero-shot", [Evaluation(None, {m.id: m.label for m in data.mains},
                                                        {s.id: (s.label + 1) % 4 for s in data.subs})], data)
    wrong = ex.System("contrarian", "zero-shot", [Evaluation(None, {m.id: (m.label + 1) % 4 for m in data.mains},
                                                             {s.id: s.label for s in data.subs})], data)
    origins = {"oracle": ("lm", "0:vanilla:letter"), "contrarian": ("lm", "0:vanilla:letter")}
    no_training = Trained("enc", {}, {}, [])
    prompted = Prompted({"oracle": gold, "contrarian": wrong}, {}, [], ("lm",), origins)
    both = consistency_claim(no_training, prompted, prompted_gates(prompted, 0), 0)
    assert set(both.evidence["mainq"]) == {"oracle"} and both.rests_on == ()
    assert "set aside, at chance on their main questions (the claim's premise): contrarian" in both.text
    spec = by_id(papers.claims("rule"))["consistency-below-human"]
    assert spec.judge(both.evidence) is True  # the oracle: every main question right, none consistent
    prompted = Prompted({"contrarian": wrong}, {}, [], ("lm",), origins)
    alone = consistency_claim(no_training, prompted, prompted_gates(prompted, 0), 0)
    assert set(alone.evidence["mainq"]) == {"contrarian"} and alone.rests_on == ("contrarian (all its main questions)",)


def test_chance_row_is_exact(data):
    c = ex.chance_row(data)
    assert c["SubQ"] == 25 and c["Consistency"] < 25


def test_prompt(prompts, data):
    item = data.main("train_35")
    block = question_block(item.context, item.question, item.options)
    assert rp.prompt(prompts, ex.PromptSetting(0), 0, item) == prompts.instruction + block
    few = rp.prompt(prompts, ex.PromptSetting(5, "subq"), 1, item)
    assert few == prompts.get(5, "subq", 1).text + " " + block
    cot = rp.prompt(prompts, ex.PromptSetting(0, ZERO_SHOT_COT, "generate"), 0, item)
    assert cot.endswith("Answer: Let's think step by step.")
    assert ex.PromptSetting.parse("1:subq:option") == ex.PromptSetting(1, "subq", "option")
    assert ex.PromptSetting.parse("1:subq:option").label == "one-shot, RULE exemplars (option LL)"
    with pytest.raises(ValueError, match="generated text"):
        ex.PromptSetting(5, "cot_step_random", "letter")


@pytest.mark.parametrize("text, expected", [
    (" Because X. Therefore the answer is Option2 \n", 2),
    ("The answer is option 3", 3),
    ("Option1 looks good but the answer is Option0", 0),
    ("I pick Option1.", 1),
    ("no idea", -1),
])
def test_parse_answer(text, expected):
    assert parse_answer(text) == expected


def test_prompting_leaves_out_exemplar_questions(data, prompts, isolated_cache):
    fake = FakeLM(favourite=3)
    system = ex.prompting_system(fake_lazy(fake), prompts, ex.PromptSetting(5, "vanilla"), data)
    # batch 0 (splits 1, 3, 5) holds train_1, 17, 35, 48, 61; batch 1 (splits 2, 4) train_17 ... train_90
    assert system.info["excluded mains"] == 1 + 1 + 2 + 2 + 2
    assert [ev.split for ev in system.evals] == [1, 2, 5]  # splits 3 and 4 lose every main question
    assert all(p == 3 for ev in system.evals for p in [*ev.main_pred.values(), *ev.sub_pred.values()])
    assert "train_1" not in system.evals[0].main_pred and "train_90_sub1" in system.evals[0].sub_pred
    kept = ex.prompting_system(fake_lazy(FakeLM()), prompts, ex.PromptSetting(5, "vanilla"), data,
                               exclude_exemplar_items=False)
    assert kept.info["excluded mains"] == 0 and len(kept.evals) == 5
    subq = ex.prompting_system(fake_lazy(FakeLM()), prompts, ex.PromptSetting(5, "subq"), data)
    assert subq.info["none exemplar by split"] == {1: False, 2: True, 3: False, 4: True, 5: False}


def test_lm_predictions_are_cached(data, prompts, isolated_cache):
    fake = FakeLM(favourite=0)
    first = ex.prompting_system(fake_lazy(fake), prompts, ex.PromptSetting(0), data)
    calls = fake.calls
    again = ex.prompting_system(fake_lazy(fake), prompts, ex.PromptSetting(0), data)
    assert fake.calls == calls and [e.sub_pred for e in first.evals] == [e.sub_pred for e in again.evals]
    # zero-shot: a main question in two splits has the same prompt, asked once
    assert calls == 1


def test_option_and_generated_scoring(data, prompts, isolated_cache):
    option = ex.prompting_system(fake_lazy(FakeLM()), prompts, ex.PromptSetting(0, "vanilla", "option"), data)
    preds = {s: p for ev in option.evals for s, p in ev.sub_pred.items()}
    assert preds["train_17_sub3"] == 3 and preds["train_1_sub1"] == 0  # None wins where offered, else first
    gen = ex.prompting_system(fake_lazy(FakeLM()), prompts, ex.PromptSetting(0, ZERO_SHOT_COT, "generate"), data)
    assert gen.info["unparsed answers"] == 0
    assert all(p == 1 for ev in gen.evals for p in ev.sub_pred.values())


def test_alignment_items(data):
    items = ex.alignment_items(data)
    assert len(items) == len(data.subs)
    it = items[0]
    assert "Answer option: Tweety sings at dawn." in it.question and it.label == data.subs[0].label
    frame = ex.lm_alignment(fake_lazy(FakeLM(favourite=1)), load_prompts(GOOD), data)
    assert frame["right"].sum() == sum(s.label == 1 for s in data.subs)


def test_unifiedqa_source_fits_and_keeps_the_options():
    from rcstudy.models.loading import load_tokenizer
    from rcstudy.models.seq2seq import unifiedqa_source

    tok = load_tokenizer("tiny-bert")
    item = MCItem("q1", "Birds Sing. " * 100, "Which One Follows?", ("Tweety sings", "Nothing", "Cats sing"), 0)
    short = unifiedqa_source(tok, item, 512)
    assert short.startswith("which one follows? \\n (a) tweety sings (b) nothing (c) cats sing \\n birds sing.")
    cut = unifiedqa_source(tok, item, 48)
    assert len(tok(cut)["input_ids"]) <= 48 and cut.startswith(short[:60]) and len(cut) < len(short)
    assert unifiedqa_source(tok, MCItem("q2", "", "Q?", ("x", "y"), 1), 48) == "q? \\n (a) x (b) y"


@pytest.fixture
def reclor_train(data):
    """A stand-in "ReClor train": the RULE main questions plus four other questions."""
    extra = [MCItem(f"train_{900 + i}", f"Context {i} about apples.", "Which is right?",
                    ("apples", "pears", "plums", "figs"), i % 4) for i in range(4)]
    return [*data.mains, *extra]


@pytest.mark.parametrize("cfg", [MCConfig(model="tiny-bert", max_length=64, epochs=2, batch_size=2, lr=1e-3),
                                 Seq2SeqConfig(model="tiny-bert", max_src_len=64, max_tgt_len=16, epochs=2,
                                               batch_size=2, lr=1e-3, eval_batch_size=4)],
                         ids=["multiple-choice encoder", "text to text"])
def test_models_fine_tuned_on_reclor(cfg, data, reclor_train, isolated_cache, monkeypatch):
    rt = runtime.setup(threads=1)
    held = {m.id for m in data.mains}
    assert [it.id for it in shared.reclor_training_questions(reclor_train, held)] == [it.id for it in reclor_train[6:]]
    setup = ex.EncoderSetup(cfg)
    first = ex.encoder_system("tiny", setup, reclor_train, data, data, rt, alignment=data)
    assert first.info["train questions"] == 4 and len(first.info["losses"]) == 4  # 2 epochs of 2 steps
    assert len(first.evals[0].main_pred) == 6 and len(first.evals[0].sub_pred) == 14
    assert len(first.info["alignment"]) == 14
    assert all(0 <= p < 4 for p in first.evals[0].sub_pred.values())
    # the context ablation reuses the trained weights: only new predictions are computed
    ablated = ex.encoder_system("tiny, no context", setup, reclor_train, data, data.without_context(), rt)
    assert set(ablated.evals[0].sub_pred) == set(first.evals[0].sub_pred)
    monkeypatch.setenv("RCSTUDY_REFRESH", "1")  # retrain: the same seed gives the same model and predictions
    again = ex.encoder_system("tiny", setup, reclor_train, data, data, rt)
    assert again.evals[0] == first.evals[0]
    np.testing.assert_allclose(again.info["losses"], first.info["losses"], rtol=1e-5)
    with pytest.raises(TypeError, match="MCConfig or a Seq2SeqConfig"):
        ex.encoder_system("x", ex.EncoderSetup({"model": "tiny-bert"}), reclor_train, data, data, rt)


def test_sample_mains_is_nested(data):
    small, large = ex.sample_mains(data, 2, 0), ex.sample_mains(data, 4, 0)
    assert {m.id for m in small.mains} <= {m.id for m in large.mains}
    assert ex.sample_mains(data, None, 0) is data
    assert all(s.meta["main_id"] in {m.id for m in small.mains} for s in small.subs)


def test_easy_hard(data, tmp_path):
    assert exports.read_easy_hard(tmp_path / "missing.csv") is None
    path = tmp_path / "reclor_easy_hard.csv"
    pd.DataFrame({"id_string": ["train_1", "train_17", "train_35", "train_48", "val_3"],
                  "split": ["train"] * 4 + ["val"], "subset": ["HARD", "EASY", "HARD", "EASY", "EASY"]}).to_csv(path)
    labels = exports.read_easy_hard(path)
    assert labels["train_1"] == "HARD" and len(labels) == 5
    # a system right on every HARD question's subquestions and wrong on the EASY ones
    truth = {s.id: (s.label if labels.get(s.meta["main_id"]) == "HARD" else (s.label + 1) % 4) for s in data.subs}
    system = ex.System("oracle on HARD", "x", [ex.Evaluation(None, {m.id: m.label for m in data.mains}, truth)], data)
    table = ex.easy_hard_table({"s": system}, labels)
    row = table.loc["s"]
    assert (row["EASY mains"], row["HARD mains"]) == (2, 2)
    assert row["MainQ-wise SubQ HARD"] == 100 and row["MainQ-wise SubQ EASY"] == 0
    assert row["SubQ: HARD − EASY"].estimate == 100
    pd.DataFrame({"id": ["train_1"], "label": ["HARD"]}).to_csv(path)
    with pytest.raises(ValueError, match="id_string"):
        exports.read_easy_hard(path)


def test_tables(data, prompts):
    assert ex.split_table(data)["subquestions"].sum() == 14
    neg = ex.negation_table(data)
    assert neg.loc["eliminative", "with a negation"] == 8
    lengths = ex.length_table(data, {"words": ex.whitespace_tokens})
    assert lengths.loc[("main question", "option"), "words"] == pytest.approx(
        np.mean([len(o.split()) for m in data.mains for o in m.options]))
    table = ex.prompt_table(prompts, data)
    assert table.loc[(5, "subq", 1), "None-answer exemplar"]
    counts = ex.by_subquestion_count(ex.position_baseline(data, 0))
    assert counts["main questions"].sum() == 6
    positions = ex.position_table({"last": ex.position_baseline(data, 3)}, data)
    assert positions.loc["last", "Option3"] == 100 and positions.loc["last"].sum() == pytest.approx(100)
    assert positions.loc["gold answers", "Option3"] == pytest.approx(100 * 4 / 20)  # 4 of the 14 subquestions


class RationaleCountingLM(FakeLM):
    """Picks the option numbered by how many ``Rationale:`` lines the question has (mod 4)."""

    def next_token_logprobs(self, prompts, candidates):
        self.calls += 1
        out = np.full((len(prompts), len(candidates)), -5.0)
        for row, p in enumerate(prompts):
            out[row, p.count("Rationale: ") % len(candidates)] = -0.1
        return out


def test_main_rationales(data):
    rationale = {s: data.sub(s).options[data.sub(s).label] for s in ("train_1_sub1", "train_1_sub2", "train_1_sub3",
                                                                      "train_1_sub4", "train_17_sub1", "train_17_sub2")}
    assert ex.main_rationales(data, "train_1", False, False) == ()
    assert ex.main_rationales(data, "train_1", True, False) == (rationale["train_1_sub1"],)
    assert ex.main_rationales(data, "train_1", False, True) == tuple(rationale[f"train_1_sub{k}"] for k in (2, 3, 4))
    # in the order of the main options: train_17's eliminative option 0 comes before its selective option 1
    assert ex.main_rationales(data, "train_17", True, True) == (rationale["train_17_sub2"], rationale["train_17_sub1"])
    # train_17_sub3's answer is "None of the above choices": not a rationale
    assert ex.main_rationales(data, "train_17", False, True) == (rationale["train_17_sub2"],)
    assert ex.main_rationales(data, "train_90", False, True) == ()
    mains = ex.rationale_mains(data)
    assert [m.id for m in mains.mains] == ["train_1", "train_17", "train_35", "train_61"] and mains.subs == ()
    assert tuple(ex.RATIONALE_VARIANTS) == T5_COLUMNS


def test_rationale_prompts(data, prompts, isolated_cache):
    item = data.main("train_35")
    text = rp.prompt(prompts, ex.PromptSetting(0), 0, item, ("Because A.", "Because B."))
    assert text.endswith(f"Option3: {item.options[3]} \n Rationale: Because A. \n Rationale: Because B. \n Answer:")
    assert text.startswith(prompts.instruction + "Context: ")
    runs = ex.rationale_systems(fake_lazy(RationaleCountingLM()), prompts, ex.PromptSetting(0), data)
    assert list(runs) == list(ex.RATIONALE_VARIANTS)
    picks = {v: s.evals[0].main_pred for v, s in runs.items()}
    assert picks["no rationale"] == {"train_1": 0, "train_17": 0, "train_35": 0, "train_61": 0}
    assert picks["+ selective"] == {"train_1": 1, "train_17": 1, "train_35": 1, "train_61": 1}
    assert picks["+ eliminative"] == {"train_1": 3, "train_17": 1, "train_35": 1, "train_61": 1}
    assert picks["+ selective and eliminative"] == {"train_1": 0, "train_17": 2, "train_35": 2, "train_61": 2}
    table = ex.rationale_table({"fake": runs})
    # main labels: train_1 0, train_17 1, train_35 1, train_61 0
    assert table.loc["fake", "no rationale"] == 50 and table.loc["fake", "+ selective"] == 50
    assert table.loc["fake", "+ eliminative"] == 50 and table.loc["fake", "+ selective and eliminative"] == 25
    assert table.loc["fake", "main questions"] == 4
    # one-shot: train_48 is batch 0's exemplar, but it is not among the four main questions anyway
    one = ex.rationale_systems(fake_lazy(RationaleCountingLM()), prompts, ex.PromptSetting(1), data)
    assert one["+ selective"].info["excluded mains"] == 0 and len(one["+ selective"].evals[0].main_pred) == 4


def test_context_ablated_prompting_still_leaves_out_exemplars(data, prompts, isolated_cache):
    fake = FakeLM(favourite=3)
    bare = ex.prompting_system(fake_lazy(fake), prompts.without_context(), ex.PromptSetting(5, "vanilla"),
                               data.without_context())
    assert bare.info["excluded mains"] == 1 + 1 + 2 + 2 + 2  # as with the context
    zero = rp.prompt(prompts, ex.PromptSetting(0), 0, data.without_context().main("train_1"))
    assert "Context:" not in zero and zero.startswith(prompts.instruction + "Question: ")


@pytest.mark.parametrize("question, expected", [
    ("Which one of the following most weakens Lena's argument?", "Weaken"),
    ("The reasoning above is flawed because it", "Identify a Flaw"),
    ("The argument is most vulnerable to criticism on the grounds that it", "Identify a Flaw"),
    ("The flawed pattern of reasoning above is most similar to that in which one of the following?", "Match Flaws"),
    ("Which one of the following is most similar in its flawed reasoning to the argument above?", "Match Flaws"),
    ("Which one of the following arguments is most similar in its reasoning to the argument above?",
     "Match the Structure"),
    ("Which one of the following, if assumed, enables the conclusion to be properly drawn?", "Sufficient Assumptions"),
    ("The officials' argument assumes which one of the following?", "Necessary Assumptions"),
    ("Which one of the following, if true, most helps to resolve the apparent discrepancy?", "Explain or Resolve"),
    ("Which one of the following most accurately expresses the main conclusion of the argument?",
     "Conclusion/Main Point"),
    ("The statements above, if true, most strongly support which one of the following?", "Most Strongly Supported"),
    ("If the statements above are true, which one of the following must also be true?", "Implication"),
    ("Which one of the following, if true, most strengthens the claim that the bakers caused it?", "Strengthen"),
    ("Which one of the following principles most helps to justify the reasoning above?", "Principle"),
    ("The claim that taxes rose plays which one of the following roles in the argument?", "Role"),
    ("Sam and Kim disagree over whether", "Dispute"),
    ("The argument proceeds by", "Technique"),
    ("Which one of the following would be most useful to know in order to evaluate the argument?", "Evaluation"),
    ("What does the passage say about pest control?", "Others"),  # "control" is not "role"
])
def test_question_type(question, expected):
    assert ex.question_type(question) == expected


def test_accuracy_by_length(data):
    right_mains = {m.id: m.label for m in data.mains}
    wrong_subs = {s.id: (s.label + 1) % 4 for s in data.subs}
    seed0 = ex.System("s", "x", [ex.Evaluation(None, right_mains, wrong_subs)], data)
    seed1 = ex.System("s", "x", [ex.Evaluation(None, {**right_mains, "train_1": 1}, wrong_subs)], data)
    frame = ex.question_frame([seed0, seed1]).set_index(["kind", "id"])
    assert len(frame) == 6 + 14
    assert frame.loc[("main question", "train_1"), "right"] == 0.5  # right under one seed of two
    assert frame.loc[("main question", "train_17"), "right"] == 1
    assert frame.loc[("subquestion", "train_90_sub1"), "right"] == 0
    assert frame.loc[("main question", "train_1"), "question words"] == 8  # "Which one of the following must be true?"
    sub = data.sub("train_90_sub1")  # its None option is left out of the mean option length
    assert frame.loc[("subquestion", "train_90_sub1"), "option words"] == pytest.approx(
        np.mean([len(o.split()) for o in sub.options[:3]]))
    curve = ex.accuracy_by_length(frame.reset_index(), "question words", bins=2)
    mains, subs = curve[curve["kind"] == "main question"], curve[curve["kind"] == "subquestion"]
    assert mains["questions"].sum() == 6 and subs["questions"].sum() == 14 and len(mains) == 2
    assert (subs["accuracy"] == 0).all() and mains["length"].is_monotonic_increasing
    hand = pd.DataFrame({"kind": ["main question"] * 4, "id": list("abcd"), "question words": [1, 2, 10, 20],
                         "option words": 1.0, "right": [1.0, 1.0, 0.0, 0.5]})
    got = ex.accuracy_by_length(hand, "question words", bins=2)
    assert got["length"].tolist() == [1.5, 15.0] and got["accuracy"].tolist() == [100.0, 25.0]


def test_by_type(data):
    types = {m.id: ("Implication" if m.id in ("train_1", "train_35") else "Weaken") for m in data.mains}
    truth = {s.id: (s.label if types[s.meta["main_id"]] == "Implication" else (s.label + 1) % 4) for s in data.subs}
    system = ex.System("s", "x", [ex.Evaluation(None, {m.id: m.label for m in data.mains}, truth)], data)
    table = ex.by_type_table([system], types)
    assert table.loc["Implication", "main questions"] == 2 and table.loc["Implication", "subquestions"] == 6
    assert table.loc["Implication", "SubQ"] == 100 and table.loc["Weaken", "SubQ"] == 0
    assert table.loc["Weaken", "MainQ"] == 100 and table.loc["Weaken", "Consistency"] == 0
    p, groups = ex.type_independence(system, types, min_subquestions=1)
    assert groups == 2 and p < 0.01
    # Implication (6 subquestions) joins the pooled small types
    assert ex.type_independence(system, types, min_subquestions=7)[1] == 2
    all_right = ex.System("s", "x", [ex.Evaluation(None, {}, {s.id: s.label for s in data.subs})], data)
    assert np.isnan(ex.type_independence(all_right, types)[0])


def test_config_sections_build_the_engines():
    cfg = ex.Config.load("smoke")
    mc = cfg.encoder.mc_config(3)
    assert (mc.model, mc.fields, mc.lr, mc.batch_size, mc.max_length, mc.epochs, mc.seed) == (
        "tiny-bert", "CQA", 0.001, 4, 128, 1, 3)
    s2s = cfg.seq2seq.seq2seq_config("tiny-bert", 1)
    assert (s2s.max_src_len, s2s.max_tgt_len, s2s.optimizer, s2s.lr, s2s.batch_size, s2s.seed) == (
        128, 128, "adafactor", 0.001, 4, 1)
    name, setups = ex.trained_setups(cfg)
    assert name == "tiny-bert, fine-tuned on ReClor" and list(setups) == [name, f"{name} (text to text)"]
    assert all(s.train_questions is None and s.subsample_seed == cfg.sample_seed for v in setups.values() for s in v)
    quick = ex.Config.load("quick")
    assert quick == ex.Config() and quick.encoder.train_questions is None and quick.lm.sample_mains == 100
    with pytest.raises(ValueError, match="shots:family:scoring"):
        ex.Config.load("quick", {"lm.settings": ["0:vanilla"]})
    with pytest.raises(ValueError, match="at least one seed"):
        ex.Config.load("quick", {"seeds": []})


def test_run_on_the_smoke_config(isolated_cache, monkeypatch, tmp_path):
    monkeypatch.setenv("RCSTUDY_DATA", str(GOOD.parent))
    monkeypatch.setenv("RCSTUDY_EXPORTS", str(tmp_path))
    pd.DataFrame({"id_string": ["train_1", "train_17", "train_35", "train_48"],
                  "subset": ["HARD", "EASY", "HARD", "EASY"]}).to_csv(tmp_path / exports.EASY_HARD, index=False)
    asked = {}

    def full_profile(rows: dict) -> dict:  # what plan.row_needs says, given each stuck row's jobs
        asked.update(rows)
        return {row: f"N GPU hours for {row}" for row in rows}

    res = ex.run(ex.Config.load("smoke"), runtime.setup(device="cpu", threads=1), full_profile=full_profile)
    assert {"rule_counts", "rule_splits", "rule_table2_trained", "rule_table2_prompted", "rule_given_main_right",
            "rule_positions", "rule_none", "rule_table3", "rule_alignment", "rule_table5", "rule_context_ablation",
            "rule_by_type", "rule_by_count", "rule_easy_hard", "rule_table4"} <= set(res.tables)
    assert res.facts["rule_n_main"] == 6 and res.facts["rule_n_sub"] == 14 and res.facts["rule_enc_model"] == "tiny-bert"
    assert res.facts["rule_hard_text"].startswith("4 of the 6 RULE main questions have a label")
    assert set(res.bars.columns) == {"Selective", "Eliminative"} and len(res.points) == len(res.systems_rows)
    assert {group for group, _ in res.length_curves} == {"tiny-bert, fine-tuned on ReClor (mean over seeds)",
                                                         ex.best_by_subq({n: r for n, r in res.systems_rows.items()
                                                                          if n.startswith("tiny-llama")})}
    assert [c.id for c in res.claims.claims] == [s.id for s in papers.claims("rule")]
    # finetuned-subq-near-chance: both models trained; judged unless the encoder did not learn
    subq = res.claims.claims[2]
    stuck = "did not learn" in res.facts["rule_loss_warnings"].data
    assert subq.verdict == "model at chance" if stuck else subq.verdict != "not testable here"
    # every row at chance, and only those, says what the full profile would spend on it, by its jobs there
    learned = res.tables["rule_learned"]["learned"]
    assert set(asked) == set(learned.index[learned == "NO"]) and asked
    # the fine-tuned models (the encoder, the text-to-text model) show a held-out loss; prompted settings none
    fine_tuned = [row for row in res.tables["rule_learned"].index if "fine-tuned" in row or row == "tiny-bert"]
    held_out = res.tables["rule_learned"]["held-out loss"]
    assert fine_tuned and all(held_out[row] != "n/a" for row in fine_tuned), held_out.to_dict()
    assert asked["tiny-llama, zero-shot (letter prob.) (subquestions)"] == {
        "step": "lm_job", "arguments": {"analysis": "setting", "spec": "0:vanilla:letter"}}  # each full LM, that setting
    assert asked["tiny-llama, one-shot, ReClor exemplars (letter prob.) (main questions)"] == {
        "step": "lm_job", "arguments": {"analysis": "rationales"}}  # a setting the full profile does not run
    warnings = res.facts["rule_loss_warnings"].data + res.facts["rule_lm_warnings"].data
    assert all(md_text(f"N GPU hours for {row}") in warnings for row in asked)
    assert any("the full profile would need N GPU hours" in c.evidence for c in res.claims.claims
               if c.verdict == "model at chance")


def test_a_fine_tuned_row_at_chance_needs_the_full_profiles_jobs(fixture_data):
    """The encoder's counterpart is the full profile's encoder (each seed); a text-to-text model the
    full profile does not train has no one counterpart: every fine-tuning of the full profile."""
    from rcstudy import plan
    from rcstudy.experiments.rule.gates import full_profile_rows
    from rcstudy.experiments.rule.rationales import Rationales
    from rcstudy.experiments.rule.units import Prompted, Trained

    cfg = ex.Config.load("smoke")
    encoder, setups = ex.trained_setups(cfg)
    text_to_text = f"{encoder} (text to text)"
    rows = full_profile_rows(cfg, Trained(encoder, setups, {encoder: [], text_to_text: []}, []),
                             Prompted({}, {}, [], (), {}), Rationales(runs={}, asked=pd.DataFrame(), origins={}),
                             [encoder, text_to_text])
    full_encoder = ex.trained_setups(ex.Config.load("full"))[0]
    assert rows == {encoder: {"step": "trained_job", "arguments": {"name": full_encoder}},
                    text_to_text: {"step": "trained_job"}}
    needs = plan.row_needs("rule", rows)
    assert "GPU hours on one H100 (3 jobs: microsoft/deberta-v3-large seed 0" in needs[encoder]
    assert "having no one counterpart there" in needs[text_to_text]


def test_without_context_changes_only_the_context(data):
    bare = data.without_context()
    assert [m.id for m in bare.mains] == [m.id for m in data.mains]
    assert [s.id for s in bare.subs] == [s.id for s in data.subs]
    for before, after in zip(data.mains + data.subs, bare.mains + bare.subs):
        assert after.context == "" and (after.question, after.options, after.label, after.meta) == (
            before.question, before.options, before.label, before.meta)


def test_no_context_encoder_input_is_the_whole_question_and_option(data):
    from rcstudy.models.loading import load_tokenizer
    from rcstudy.models.mc import encode_items

    tok = load_tokenizer("tiny-bert")
    subs = list(data.subs[:6])
    with_context = encode_items(tok, subs, "CQA", 128)
    bare = encode_items(tok, [s for s in data.without_context().subs[:6]], "CQA", 128)
    checked = 0
    for it, w, b in zip(subs, with_context, bare):
        assert len(w) == len(b) == len(it.options)
        for k, (enc_w, enc_b) in enumerate(zip(w, b)):
            whole = tok(f"{it.question} {it.options[k]}".strip(), add_special_tokens=False)["input_ids"]
            # no context: [CLS] [SEP] question option [SEP], nothing cut; with it, the context is cut first
            if len(whole) + 3 <= 128:
                assert enc_b["input_ids"][2:-1] == whole and enc_w["input_ids"][-len(whole) - 1:-1] == whole
                checked += 1
    assert checked >= 12


def test_word_overlap_cue():
    sub = MCItem("s", "Cats purr. Dogs bark loudly at night.",
                 "Why is the option 'dogs bark at night' incorrect?",
                 ("Cats purr when content.", "Dogs bark at night, so the option is true.",
                  "Dogs bark loudly.", "None of the above choices"), 1)
    assert ex.overlap_choice(sub) == 1  # the rationale that restates the question's option
    assert ex.overlap_choice(sub, with_context=True) == 2  # the context's words pull elsewhere
    assert ex.content_words("The dog's bark, AND it") == {"dog's", "bark"}
    assert ex.overlap_choice(MCItem("e", "", "", ("", "x"), 0)) == 0  # no words: ties go to the first


def test_overlap_facts_on_the_fixtures(data):
    facts = ex.overlap_facts(data)
    assert facts["rule_overlap_subs"] == len(data.subs)
    for key in ("question", "context"):
        for metric in ("mainq", "subq", "selective", "eliminative"):
            v = facts[f"rule_overlap_{key}_{metric}"]
            assert np.isnan(v) or 0 <= v <= 100
    assert facts["rule_overlap_question_subq"] == ex.system_scores(ex.overlap_baseline(data))["SubQ"]


def test_the_full_profiles_plan_counts_each_prompt_once_as_its_engine_runs_it(fixture_data):
    """The full profile's LM jobs on one fixture main question (two prompts of four options each,
    ⌈characters / 4⌉ tokens each): a causal LM scoring options runs each prompt once (and a start
    token), then each option but its last token; Flan-T5 (an encoder-decoder model) encodes each
    prompt once (with its end token) and decodes each option and an end token against it; letter
    scoring runs each prompt and its answer cue once. The plan charges the model for those alone."""
    import math

    from rcstudy import plan
    from rcstudy.jobs import Tokens

    cfg = plan.chapter_config("rule", "full", {"lm.sample_mains": 1})
    jobs = {j.name: j for j in ex.jobs(cfg)}
    data, prompts, _ = ex.job_inputs()
    asked = ex.setting_prompts(prompts, ex.PromptSetting.parse("0:vanilla:option"), ex.samples(cfg, data)[1],
                               exclude_exemplar_items=cfg.lm.exclude_exemplar_items)
    assert len(set(asked.texts)) == 2 and [len(it.options) for it in asked.items] == [4, 4]
    prompt = sum(math.ceil(len(t) / 4) + 1 for t in asked.texts)
    options = [" " + o for it in asked.items for o in it.options]
    llama = jobs["meta-llama/Llama-2-7b-hf 0:vanilla:option"]
    assert llama.tokens == Tokens(forward=prompt + sum(math.ceil(len(o) / 4) - 1 for o in options))
    n = plan.model_size("meta-llama/Llama-2-7b-hf").params
    assert plan.plan_table([llama], "h100").loc[llama.name, "PFLOPs"] == pytest.approx(2 * n * llama.tokens.forward / 1e15)
    flan = jobs["google/flan-t5-xxl 0:vanilla:option"]
    assert flan.tokens == Tokens(forward=prompt, forward_target=sum(math.ceil(len(o) / 4) + 1 for o in options),
                                 cross=4 * prompt)
    letter = jobs["meta-llama/Llama-2-7b-hf 0:vanilla:letter"]
    assert letter.tokens == Tokens(forward=sum(math.ceil(len(rp.letter_prompt(t)) / 4) + 1 for t in asked.texts))
    # UnifiedQA is trained on its source and target and scores each option through its decoder
    uqa = jobs["allenai/unifiedqa-v2-t5-large-1363200 text to text seed 0"].tokens
    assert min(uqa.train, uqa.train_target, uqa.forward, uqa.forward_target) > 0 and uqa.cross > uqa.forward
