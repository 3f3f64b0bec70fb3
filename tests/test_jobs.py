"""A chapter's jobs: their enumeration matches what the chapter computes, the GPU-hour plan's
arithmetic, and the plan command's errors."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from rcstudy import bench, cache, cli, cluster, plan, runtime
from rcstudy.jobs import Job, Tokens, causal_option_tokens, generation_tokens, option_tokens, seq2seq_tokens

BERT_BASE_PARAMS = 12 * (4 * 768 * 768 + 2 * 768 * 3072)  # 84,934,656 matmul parameters


@pytest.fixture
def no_gpu_results(tmp_path):
    """A results folder without a CUDA benchmark: the assumed utilisation applies."""
    return tmp_path / "results"


def test_flops_are_6_n_tokens_to_train_and_2_n_tokens_to_score(no_gpu_results):
    job = Job("demo", "train", "one run", "bert-base-uncased@abc", train_tokens=1_000_000, score_tokens=500_000)
    table = plan.plan_table([job], "a100", no_gpu_results)
    flops = 6 * 84_934_656 * 1_000_000 + 2 * 84_934_656 * 500_000  # 5.94542592e14
    assert plan.model_size("bert-base-uncased").params == BERT_BASE_PARAMS
    assert table.loc["one run", "PFLOPs"] == pytest.approx(0.594542592)
    assert table.loc["one run", "GPU hours"] == pytest.approx(flops / (312e12 * 0.30 * 3600))  # ≈ 0.00176
    assert table.loc["one run", "model"] == "bert-base-uncased"  # shown without its pin
    assert table.attrs["utilisation"] == plan.ASSUMED_UTILISATION
    assert "assumed 30%" in plan.describe_plan(table)


def test_a_measured_gpu_utilisation_replaces_the_assumption(no_gpu_results):
    """A record of the training stage alone (no utilisation table) measured training at base size:
    it replaces the assumption for training there, not for scoring, which says it is assumed."""
    no_gpu_results.mkdir()
    (no_gpu_results / "cuda.json").write_text(json.dumps({"flops": {"ours": {"fraction_of_peak": 0.6}},
                                                           "config": {"mc_model": "roberta-base"}}))
    jobs = [Job("demo", "train", "training", "bert-base-uncased", train_tokens=10**9),
            Job("demo", "score", "scoring", "bert-base-uncased", score_tokens=10**9)]
    table = plan.plan_table(jobs, "h100", no_gpu_results)
    assert table.attrs["utilisation"] == 0.6
    assert table.attrs["utilisation_source"] == "measured by the benchmark on CUDA (cuda.json: 60% of peak with roberta-base)"
    assert table.loc["training", "GPU hours"] == pytest.approx(6 * BERT_BASE_PARAMS * 1e9 / (989e12 * 0.6 * 3600))
    assert table.loc["scoring", "GPU hours"] == pytest.approx(2 * BERT_BASE_PARAMS * 1e9 / (989e12 * 0.3 * 3600))
    assert table.attrs["utilisations"]["score, base"] == "assumed 30% of peak"
    assert "score, base: assumed 30% of peak" in plan.describe_plan(table)


def test_the_utilisation_table_is_read_by_engine_and_model_size(no_gpu_results):
    """The gpu preset's table: each (engine, size class) it measured, the assumption elsewhere."""
    no_gpu_results.mkdir()
    (no_gpu_results / "cuda-check.json").write_text(json.dumps({"hardware": {"gpu": "NVIDIA H100 80GB HBM3"}, "utilisation": {
        "train": {"large": {"share": 0.45, "model": "roberta-large replica"}},
        "score": {"billions": {"share": 0.5, "model": "Llama-2-7b replica"}},
        "generate": {"billions": {"share": 0.7, "model": "Llama-2-7b replica"}}}}))
    u = lambda engine, model: plan.engine_utilisation(engine, plan.model_size(model).params, no_gpu_results)  # noqa: E731
    assert (u("train", "roberta-large").share, u("train", "roberta-large").measured) == (0.45, True)
    assert u("train", "roberta-large").source == ("measured 45% of bf16 peak with roberta-large replica on "
                                                 "NVIDIA H100 80GB HBM3 (cuda-check.json)")
    assert (u("train", "roberta-base").share, u("train", "roberta-base").measured) == (0.3, False)  # not measured at base
    assert u("score", "meta-llama/Llama-2-7b-hf").share == 0.5
    assert u("generate", "meta-llama/Llama-2-7b-hf").share == 0.7
    assert u("generate", "gpt2").share == plan.ASSUMED_BANDWIDTH_SHARE
    assert [plan.size_class(n) for n in (22e6, 85e6, 302e6, 6.5e9)] == ["small", "base", "large", "billions"]


def test_a_prompt_counts_once_where_its_cache_serves_its_options(no_gpu_results):
    """CausalLM.loglik runs a prompt once per batch of its options and then each option's tokens
    but its last: 400 characters of prompt are 100 tokens and a start token, each 8-character
    option 2 tokens, of which 1 runs: 101 + 4 × 1 = 105, where k × (prompt + option) counted
    4 × (⌈409 / 4⌉ + 3) = 424, four times as many."""
    prompt, options = "x" * 400, ["a" * 8] * 4
    assert causal_option_tokens([prompt], [options]) == Tokens(forward=105)
    assert option_tokens([f"{prompt} {o}" for o in options]) == 424
    assert causal_option_tokens([prompt], [options], batch_size=2) == Tokens(forward=2 * 101 + 4)  # two batches
    assert causal_option_tokens([prompt, prompt], [options, options]) == Tokens(forward=105)  # a repeated ask: once
    assert causal_option_tokens([prompt], [options], max_length=64) == Tokens(forward=64 + 4)
    llama = plan.model_size("meta-llama/Llama-2-7b-hf").params
    assert llama == 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008) == 6_476_005_376
    job = Job("demo", "score", "options", "meta-llama/Llama-2-7b-hf", tokens=causal_option_tokens([prompt], [options]))
    assert plan.plan_table([job], "h100", no_gpu_results).loc["options", "PFLOPs"] == pytest.approx(2 * llama * 105 / 1e15)


def test_an_encoder_decoder_model_charges_each_stack_its_own_tokens(no_gpu_results):
    """T5-Large: encoder 24 · (4·1024² + 2·1024·4096) = 301,989,888; decoder 24 · (6·1024² + 2·1024·4096)
    = 352,321,536 (self-attention, cross-attention query and output, feed-forward); the
    cross-attention's keys and values 24 · 2·1024² = 50,331,648, run over the source once per target."""
    t5 = plan.model_size("t5-large")
    assert (t5.encoder, t5.decoder, t5.cross_kv) == (301_989_888, 352_321_536, 50_331_648)
    assert t5.params == 704_643_072
    # scoring 4 options of one 400-character source: 101 source tokens once, 4 × (2 + 1) target tokens,
    # the cross-attention's projections over 4 × 101 source tokens
    tokens = seq2seq_tokens(["x" * 400], [["y" * 8] * 4])
    assert tokens == Tokens(forward=101, forward_target=12, cross=404)
    flops = 2 * (301_989_888 * 101 + 352_321_536 * 12 + 50_331_648 * 404)  # ≈ 1.101 × 10¹¹
    job = Job("demo", "score", "t5 options", "t5-large", tokens=tokens)
    assert plan.job_flops(job) == pytest.approx(flops)
    # the published total for every token of every (source, option) row, as the plan counted before:
    # 2 · 770M · (4 · 101 + 12) ≈ 6.41 × 10¹¹, 5.8 times as much
    assert 2 * 770e6 * (4 * 101 + 12) / flops == pytest.approx(5.82, abs=0.01)
    trained = seq2seq_tokens(["x" * 400], [["y" * 8]], train=True)
    assert trained == Tokens(train=101, train_target=3)
    assert plan.job_flops(Job("demo", "train", "t5", "t5-large", tokens=trained)) == pytest.approx(
        6 * (301_989_888 * 101 + 352_321_536 * 3 + 50_331_648 * 101))
    # a job that does not tell its tokens apart: all against the encoder (and the cross-attention), said so
    legacy = Job("demo", "train", "legacy t5", "t5-large", train_tokens=104)
    assert plan.job_flops(legacy) == pytest.approx(6 * (301_989_888 + 50_331_648) * 104)
    assert "not told apart" in plan.plan_table([legacy], "h100", no_gpu_results).loc["legacy t5", "note"]


def test_generation_is_memory_bound(no_gpu_results):
    """8 prompts of 40 characters (11 tokens each with the start token), 16 new tokens, 4 a batch:
    88 prompt tokens forward, then 2 batches × 16 = 32 decoding steps, each reading Llama-2-7B's
    6,476,005,376 weights as bf16 (2 bytes) at half of an H100's 3.35 TB/s: 7.7325 ms a step,
    where its 4 tokens' FLOPs at 30% of 989 TFLOP/s would take 0.175 ms."""
    tokens = generation_tokens(["x" * 40] * 8, max_new_tokens=16, batch_size=4)
    assert tokens == Tokens(forward=88, generated=128, decode_steps=32)
    n, h100 = 6_476_005_376, plan.GPUS["h100"]
    assert h100.bandwidth == 3.35e12
    step = 2 * n / (3.35e12 * 0.5)
    assert step == pytest.approx(7.7325e-3, rel=1e-4)
    cost = plan.work_cost(plan.model_size("meta-llama/Llama-2-7b-hf"), tokens, h100, no_gpu_results)
    assert cost.generate_seconds == pytest.approx(32 * step)
    assert cost.seconds == pytest.approx(32 * step + 2 * n * 88 / (989e12 * 0.3))
    # 4,096 sequences a batch: each step's FLOPs (2 · N · 4,096 at 30% of peak: 0.179 s) outweigh reading the weights
    big = Tokens(generated=4096 * 16, decode_steps=16)
    cost = plan.work_cost(plan.model_size("meta-llama/Llama-2-7b-hf"), big, h100, no_gpu_results)
    assert cost.generate_seconds == pytest.approx(16 * 2 * n * 4096 / (989e12 * 0.3))


@pytest.mark.parametrize("device, key", [("NVIDIA H100 80GB HBM3", "h100"), ("NVIDIA H200", "h200"),
                                         ("NVIDIA A100-SXM4-80GB", "a100"), ("NVIDIA L40S", "l40s"),
                                         ("NVIDIA L4", "l4"), ("Tesla T4", None)])
def test_a_cuda_device_name_finds_its_gpu(device, key):
    assert plan.gpu_of_device(device) == key


def test_a_gpu_benchmark_of_a_small_model_does_not_replace_the_assumption(no_gpu_results):
    no_gpu_results.mkdir()
    (no_gpu_results / "cuda.json").write_text(json.dumps({"flops": {"ours": {"fraction_of_peak": 0.005}},
                                                           "config": {"mc_model": "minilm-l6"}}))
    share, how = plan.utilisation(no_gpu_results)
    assert share == plan.ASSUMED_UTILISATION
    assert how == "assumed 30% of peak (the GPU benchmark measured 0.5% with minilm-l6, a model too small to keep a GPU busy)"


def test_parameter_counts_are_the_benchmarks_matmul_count():
    """6·N per token is the benchmark's training count less its attention-score term (~3% at 128 tokens)."""
    config = SimpleNamespace(hidden_size=768, intermediate_size=3072, num_hidden_layers=12)
    counted = bench.encoder_flops(config, sequences=10, length=128)
    assert 6 * plan.model_size("roberta-base").params * 10 * 128 == pytest.approx(counted, rel=0.04)


def test_work_of_unknown_size_is_not_counted(no_gpu_results):
    jobs = [Job("demo", "train", "a reader", "sar", items=10, epochs=2),
            Job("demo", "train", "known", "minilm-l6", train_tokens=1000)]
    table = plan.plan_table(jobs, "h100", no_gpu_results)
    assert math.isnan(table.loc["a reader", "PFLOPs"])
    assert table["PFLOPs"].sum() == pytest.approx(6 * plan.model_size("minilm-l6").params * 1000 / 1e15)


def test_every_model_of_the_full_profiles_has_a_size(fixture_data):
    unknown = {job.model for chapter in plan.planned_chapters() for job in plan.chapter_jobs(chapter, "full")
               if plan.model_size(job.model) is None}
    assert unknown <= {"sar", "ga", "comatch", "fastText", "Bi-LSTM", "ASReader", "DocQA-lite", "features"}  # from scratch


def test_plan_totals_cover_every_chapter(fixture_data, no_gpu_results):
    chapters = plan.planned_chapters()
    totals = plan.plan_totals(chapters, "full", "h100", no_gpu_results)
    assert list(totals.index) == [*chapters, "total"]
    assert {"reclor", "record", "logiqa", "metalogic", "rule"} <= set(chapters)
    hours = totals["GPU hours"]
    assert all(math.isfinite(h) and h > 0 for h in hours), hours  # every chapter is split and estimated
    assert hours["total"] == pytest.approx(hours[chapters].sum())


@pytest.mark.parametrize("argv, message", [
    (["plan", "reclr"], "unknown chapter 'reclr'; did you mean 'reclor'?"),
    (["plan", "logiqa", "--gpu", "h10"], "unknown GPU 'h10'; did you mean 'h100'?"),
    (["plan", "logiqa", "-p", "encoder.seedz=[1]"], "did you mean 'encoder.seeds'?"),
])
def test_plan_mistakes_are_one_line_naming_the_closest_choice(argv, message, capsys, fixture_data):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_plan_prints_the_jobs_and_the_totals(capsys, fixture_data):
    assert cli.main(["plan", "logiqa", "--profile", "smoke", "--gpu", "a100"]) == 0
    out = capsys.readouterr().out
    assert "encoder tiny-bert seed 0" in out and "transfer ReClor → LogiQA seed 0" in out
    assert "total: 10 jobs" in out and "GPU hours on a100" in out and "train, small: assumed 30% of peak" in out


@pytest.mark.parametrize("chapter", ["reclor", "logiqa", "rule", "metalogic", "record"])
def test_every_chapters_full_plan_runs_with_its_tokens_told_apart(chapter, capsys, fixture_data):
    """Each chapter's full-profile plan on the fixtures: no job of an encoder-decoder model or a
    generation falls back to totals the plan cannot split."""
    assert cli.main(["plan", chapter, "--profile", "full", "--gpu", "h100"]) == 0
    out = capsys.readouterr().out
    assert "GPU hours on h100" in out and "not told apart" not in out


def test_logiqa_jobs_are_every_run_of_the_chapter(fixture_data):
    cfg = plan.chapter_config("logiqa", "smoke")
    jobs = {j.name: j for j in plan.chapter_module("logiqa").jobs(cfg)}
    assert sorted(jobs) == sorted(
        [f"reader {r} seed 0" for r in cfg.readers.names] + ["encoder tiny-bert seed 0"]
        + [f"ablation {a} seed 0" for a in cfg.ablations]
        + ["transfer ReClor seed 0", "transfer ReClor → LogiQA seed 0", "zero-shot tiny-llama"])
    assert jobs["transfer ReClor → LogiQA seed 0"].after == ("transfer ReClor seed 0",)  # continues its model
    assert jobs["ablation options only seed 0"].input == "A"
    assert all(j.step for j in jobs.values())


def test_reclor_jobs_are_every_fine_tuning_with_its_folds(fixture_data):
    cfg = plan.chapter_config("reclor", "smoke", {"encoder.option_only_mode": "finetune"})
    jobs = plan.chapter_module("reclor").jobs(cfg)
    runnable = [j for j in jobs if j.step]
    option_only = len(cfg.seeds) * (1 + cfg.crossfit.folds)
    table7 = sum(len(cfg.seeds_of(m)) for m, _ in cfg.table7_runs() if cfg.finetunes(m))
    assert len(runnable) == option_only + table7
    assert {j.fold for j in runnable if j.step == "cross_fit_job"} == set(range(cfg.crossfit.folds))
    assert {j.model for j in jobs if not j.step} == {"fastText", "Bi-LSTM"}  # trained from scratch, in the notebook


def test_rule_jobs_are_every_fine_tuning_and_lm_pass(fixture_data):
    cfg = plan.chapter_config("rule", "smoke")
    jobs = {j.name: j for j in plan.chapter_module("rule").jobs(cfg)}
    passes = ([f"tiny-llama {s}" for s in cfg.lm.settings]
              + [f"tiny-llama rationales {s}" for s in cfg.analyses.rationale_settings]
              + [f"tiny-llama context ablation {s}" for s in cfg.analyses.ablation_settings] + ["tiny-llama alignment"])
    assert sorted(jobs) == sorted(["tiny-bert seed 0", "tiny-bert text to text seed 0", *passes])
    assert jobs["tiny-bert seed 0"].tokens.train > 0 and jobs["tiny-llama alignment"].tokens.forward > 0
    assert jobs["tiny-llama 0:zero_shot_cot:generate"].kind == "generate"
    # its run with the context is the setting's cache entry: it waits for it, and costs only the run without
    ablation, setting = jobs["tiny-llama context ablation 5:subq:letter"], jobs["tiny-llama 5:subq:letter"]
    assert ablation.after == (setting.name,) and ablation.tokens.total < setting.tokens.total
    assert all(j.step and j.tokens.total > 0 for j in jobs.values())
    cot = jobs["tiny-llama 0:zero_shot_cot:generate"]  # each distinct prompt generates cot_max_new_tokens
    prompts = cot.tokens.generated // cfg.lm.cot_max_new_tokens
    assert 0 < prompts <= cot.items and cot.tokens.generated == prompts * cfg.lm.cot_max_new_tokens
    assert cot.tokens.decode_steps == cfg.lm.cot_max_new_tokens * math.ceil(prompts / 4)  # 4 prompts a batch


def test_rule_scores_the_shared_reclor_model_without_training_it(fixture_data):
    cfg = plan.chapter_config("rule", "quick")
    (encoder,) = [j for j in plan.chapter_module("rule").jobs(cfg) if j.step == "trained_job"]
    assert encoder.kind == "score" and encoder.tokens.train == 0 and "ReClor chapter" in encoder.note
    assert encoder.tokens.forward > 0


def test_record_jobs_are_every_reader_per_seed_and_the_lm(fixture_data):
    cfg = plan.chapter_config("record", "smoke", {"seeds": [0, 1]})
    jobs = {j.name: j for j in plan.chapter_module("record").jobs(cfg)}
    per_seed = ["encoder ranker", "ASReader", "DocQA-lite w/o ELMo", "DocQA-lite w/ ELMo", "span extractor"]
    assert sorted(jobs) == sorted(["LM tiny-llama", *(f"{r} seed {s}" for r in per_seed for s in (0, 1))])
    assert jobs["DocQA-lite w/ ELMo seed 1"].model == cfg.docqa.elmo_model  # its frozen features are counted
    assert plan.model_size(jobs["ASReader seed 0"].model) is None  # trained from scratch


def test_metalogic_jobs_are_every_fine_tuning_scale_run_and_few_shot(fixture_data):
    cfg = plan.chapter_config("metalogic", "smoke")
    jobs = {j.name: j for j in plan.chapter_module("metalogic").jobs(cfg)}
    assert sorted(jobs) == sorted(["All-at-Once seed 0", "Multitask seed 0", "All-at-Once seed 0, 50% of train",
                                   "All-at-Once seed 1, 50% of train", "All-at-Once seed 1, 100% of train",
                                   "few-shot tiny-llama", "feature model"])  # seed 0 on all of train: its main run
    assert jobs["All-at-Once seed 1, 100% of train"].arguments == {"method": "once", "seed": 1, "ratio": 1.0}
    assert jobs["few-shot tiny-llama"].kind == "generate" and jobs["Multitask seed 0"].tokens.train > 0


def chapter_misses(chapter: str, overrides: dict) -> dict[str, int]:
    """Run the chapter's jobs, then the chapter: what the chapter still computed, by cache entry name."""
    cfg = plan.chapter_config(chapter, "smoke", overrides)
    module = plan.chapter_module(chapter)
    cluster.run_jobs(module.jobs(cfg), cfg)
    cache.misses.clear()
    module.run(cfg, runtime.setup())
    return dict(cache.misses)


@pytest.mark.slow
def test_after_its_jobs_logiqa_computes_nothing(fixture_data, isolated_cache, monkeypatch):
    monkeypatch.setenv("RCSTUDY_PROGRESS", "off")
    assert chapter_misses("logiqa", {"readers.names": ["sar"], "ablations": ["options only"]}) == {}


@pytest.mark.slow
def test_after_its_jobs_reclor_fine_tunes_nothing(fixture_data, isolated_cache, monkeypatch):
    monkeypatch.setenv("RCSTUDY_PROGRESS", "off")
    misses = chapter_misses("reclor", {"encoder.option_only_mode": "finetune", "seeds": [1],
                                       "main_models": ["tiny-bert"]})
    assert not {name for name in misses if name.startswith("mc_")}  # fastText and the Bi-LSTM stay in the notebook


@pytest.mark.slow
def test_after_its_jobs_rule_computes_nothing(fixture_data, isolated_cache, monkeypatch):
    monkeypatch.setenv("RCSTUDY_PROGRESS", "off")
    assert chapter_misses("rule", {}) == {}


@pytest.mark.slow
def test_after_its_jobs_record_computes_only_its_statistics(fixture_data, isolated_cache, monkeypatch):
    monkeypatch.setenv("RCSTUDY_PROGRESS", "off")
    assert set(chapter_misses("record", {})) <= {"record_table1", "record_checks"}  # counts, no model


@pytest.mark.slow
def test_after_its_jobs_metalogic_computes_nothing(fixture_data, isolated_cache, monkeypatch):
    monkeypatch.setenv("RCSTUDY_PROGRESS", "off")
    assert chapter_misses("metalogic", {}) == {}


def test_a_transfer_row_counts_only_the_stage_it_trains(fixture_data):
    """ReClor → LogiQA continues the ReClor-only row's cached model: its tokens are LogiQA's alone."""
    from rcstudy.experiments import logiqa

    cfg = logiqa.Config.load("smoke", {"transfer.then_logiqa": True})
    jobs = {j.name: j for j in logiqa.jobs(cfg)}
    seed = cfg.encoder.seeds[0]
    then = jobs[f"transfer ReClor → LogiQA seed {seed}"]
    own = next(j for j in jobs.values() if j.name.startswith("encoder ") and j.seed == seed)
    assert then.after == (f"transfer ReClor seed {seed}",)
    assert then.train_tokens == own.train_tokens > 0 and then.items == own.items and then.epochs == own.epochs


def test_a_rows_full_profile_need_is_its_jobs_gpu_hours(fixture_data, no_gpu_results):
    """A row's full-profile jobs by step and arguments: their GPU hours summed; a row with no one
    counterpart there names its step's jobs; one trained from scratch says the plan has no hours."""
    table = plan.plan("logiqa", "full", "h100", results_dir=no_gpu_results)
    needs = plan.row_needs("logiqa", {"main": {"step": "encoder_job", "arguments": {"model": "roberta-base@e2da8e2f811d1448a5b465c236feacd80ffbac7b"}},
                                      "any encoder": {"step": "encoder_job"},
                                      "reader": {"step": "reader_job", "arguments": {"name": "sar"}},
                                      "none": {"step": "encoder_job", "arguments": {"model": "gpt2"}}},
                           results_dir=no_gpu_results)
    main = [f"encoder roberta-base seed {s}" for s in (0, 1, 2)]
    assert needs["main"] == f"{table.loc[main, 'GPU hours'].sum():.3g} GPU hours on one H100 (3 jobs: {', '.join(main)})"
    assert needs["any encoder"].startswith(f"{table.loc[table.index.str.startswith('encoder '), 'GPU hours'].sum():.3g} "
                                           "GPU hours on one H100 (all its encoder_job jobs, having no one counterpart "
                                           "there: encoder roberta-base seed 0, encoder roberta-base seed 1, encoder "
                                           "roberta-base seed 2 and 3 more)")
    assert needs["reader"].endswith("of a model trained from scratch, whose GPU hours the plan does not estimate")
    assert "none" not in needs


def test_a_chapter_executes_its_jobs_and_finds_each_output_by_step_and_arguments():
    import types

    from rcstudy.jobs import Job, execute

    calls = []
    module = types.SimpleNamespace(train=lambda cfg, rt, seed: calls.append(seed) or f"model {seed} of {cfg}",
                                   score=lambda cfg, rt: "scores")
    listed = [Job("toy", "train", "seed 1", "m", step="train", arguments={"seed": 1}),
              Job("toy", "train", "seed 2", "m", step="train", arguments={"seed": 2}),
              Job("toy", "score", "in the notebook", "m"),
              Job("toy", "score", "scores", "m", step="score")]
    module.jobs = lambda cfg: listed if cfg == "cfg" else []  # the module's own listing, for this config
    out = execute(module, "cfg", None)
    assert calls == [1, 2]
    assert out.of("train", seed=2) == "model 2 of cfg" and out.of("score") == "scores"
    assert [job.name for job, _ in out.each("train")] == ["seed 1", "seed 2"]
    with pytest.raises(KeyError, match="0 jobs with step 'train' and arguments {'seed': 3}"):
        out.of("train", seed=3)


#: A chapter's jobs module of a test's own: a step that caches what process and runtime computed
#: it (and counts its computations in a file), a step that fails, one whose process dies, and
#: work the notebook does itself.
TOY_JOBS = """
import os
import torch
from rcstudy.cache import cached
from rcstudy.jobs import Job

def jobs(cfg):
    return [Job("toy", "train", "seed 1", "m", step="train", arguments={"seed": 1}),
            Job("toy", "train", "in the notebook", "m", notebook_step="here")] + [
            Job("toy", "train", name, "m", step=name) for name in cfg]

def train(cfg, rt, seed):
    def compute():
        with open(os.environ["TOY_COUNT"], "a") as f:
            f.write("computed\\n")
        return {"pid": os.getpid(), "threads": torch.get_num_threads(), "device": str(rt.device)}
    return cached("toy_train", {"seed": seed}, compute)

def here(cfg, rt):
    return os.getpid()

def fails(cfg, rt):
    raise ValueError("seed 1 has no training items")

def dies(cfg, rt):
    return cached("toy_dies", {}, lambda: os._exit(9))
"""


@pytest.fixture
def toy_jobs(tmp_path, monkeypatch):
    """The module above, importable by a job's own process, its cache and count in ``tmp_path``,
    and jobs sent to processes of their own (:data:`rcstudy.jobs.SEPARATE_ENV`)."""
    import importlib

    from rcstudy.jobs import SEPARATE_ENV

    (tmp_path / "toy_chapter_jobs.py").write_text(TOY_JOBS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TOY_COUNT", str(tmp_path / "count"))
    monkeypatch.setenv(SEPARATE_ENV, "1")
    return importlib.import_module("toy_chapter_jobs")


def test_a_job_runs_in_a_process_of_its_own_on_the_chapters_runtime_and_the_chapter_reads_its_result(
        toy_jobs, tmp_path, monkeypatch):
    """The runner's kernels send each job with a step to a new process, which gives its memory
    back when it ends; the chapter reads the job's result from the cache, computed once (a
    refresh too), and does its notebook's own work itself. A job done before starts no process."""
    import os

    from rcstudy.jobs import execute

    rt = runtime.setup("cpu", threads=1)
    out = execute(toy_jobs, [], rt)
    trained = out.of("train", seed=1)
    assert trained["pid"] != os.getpid() and trained["threads"] == 1 and trained["device"] == "cpu"
    assert out.of("here") == os.getpid()
    assert (tmp_path / "count").read_text() == "computed\n"
    import rcstudy.jobs

    with monkeypatch.context() as no_process:  # done before: read at once, no process started
        no_process.setattr(rcstudy.jobs, "run_apart", lambda *a: pytest.fail("a process for a job done before"))
        assert execute(toy_jobs, [], rt).of("train", seed=1) == trained
    monkeypatch.setenv("RCSTUDY_REFRESH", "1")
    refreshed = execute(toy_jobs, [], rt).of("train", seed=1)
    assert refreshed["pid"] not in (os.getpid(), trained["pid"])
    assert (tmp_path / "count").read_text() == "computed\n" * 2  # by its process, not again by the chapter
    assert os.environ["RCSTUDY_REFRESH"] == "1"


def test_a_job_that_fails_or_dies_in_its_own_process_stops_the_chapter_saying_which(toy_jobs):
    from rcstudy.jobs import JobProcessDied, execute

    rt = runtime.setup("cpu", threads=1)
    with pytest.raises(ValueError, match="seed 1 has no training items"):
        execute(toy_jobs, ["fails"], rt)
    with pytest.raises(JobProcessDied, match="toy: the process running job 'dies' ended before it finished"):
        execute(toy_jobs, ["dies"], rt)


def test_work_the_notebook_does_runs_in_the_chapter_and_on_no_worker(monkeypatch):
    """A job without a step whose notebook step names its function: the chapter's execute runs it
    and finds its output by that name; the cluster's sequential reference skips it, and the plan
    still counts it as work in the notebook."""
    import types

    from rcstudy.jobs import execute

    local = Job("toy", "train", "fastText in the notebook", "fastText", notebook_step="scratch",
                arguments={"family": "fastText"})
    module = types.SimpleNamespace(scratch=lambda cfg, rt, family: f"{family} trained here", jobs=lambda cfg: [local])
    assert execute(module, "cfg", None).of("scratch", family="fastText") == "fastText trained here"
    ran = []
    monkeypatch.setattr(cluster, "run_job", lambda job, *args: ran.append(job.name))
    cluster.run_jobs([local], SimpleNamespace())
    assert ran == [] and local.step is None
