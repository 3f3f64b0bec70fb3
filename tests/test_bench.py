"""The benchmark runs end to end in a tiny configuration and reports what it measured."""

import json
import shutil
import sys

import pytest
import torch
from conftest import FIXTURES
from torch.utils.flop_counter import FlopCounterMode

from rcstudy import bench, runtime
from rcstudy.models.loading import load_multiple_choice, model_config

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # the tiny splits are not the official sizes

WORDS = "every valid argument keeps its conclusion when a premise is added but a sound one also".split()


def _words(n: int, shift: int) -> str:
    return " ".join(WORDS[(shift + j) % len(WORDS)] for j in range(n))


@pytest.fixture
def tiny_data(tmp_path, monkeypatch):
    """ReClor train/val (JSON arrays) and LogiQA Test.txt (8-line blocks) in the official layouts."""
    data = tmp_path / "data"
    (data / "reclor").mkdir(parents=True)
    (data / "logiqa").mkdir()
    for split, n in (("train", 6), ("val", 4)):
        records = [{"context": _words(8 + 7 * i, i), "question": "Which one is most strongly supported?",
                    "answers": [_words(3 + k, i + k) for k in range(4)], "label": (i + 1) % 4,
                    "id_string": f"{split}_{i}"} for i in range(n)]
        (data / "reclor" / f"{split}.json").write_text(json.dumps(records))
    blocks = []
    for i in range(3):
        options = [f"{letter}.{_words(2 + k, i)}" for k, letter in enumerate("ABCD")]
        blocks += ["", "abc"[i], _words(12 + 5 * i, i), "Which of the following can be derived?", *options]
    (data / "logiqa" / "Test.txt").write_text("\n".join(blocks) + "\n")
    shutil.copytree(FIXTURES / "data" / "record", data / "record")  # ReCoRD in its official layouts
    monkeypatch.setenv("RCSTUDY_DATA", str(data))
    return data


def test_quality_stage_holds_out_the_last_train_questions(tiny_data):
    train, held_out = bench._quality_split(bench.config_from("tiny", {"quality_questions": None}))
    assert [it.id for it in train] == [f"train_{i}" for i in range(4)]
    assert [it.id for it in held_out] == ["train_4", "train_5"]
    with pytest.raises(ValueError, match="quality_holdout = 6, but ReClor train has 6 questions"):
        bench._quality_split(bench.config_from("tiny", {"quality_holdout": 6}))


def test_tiny_benchmark_writes_json_and_markdown(tiny_data, tmp_path, isolated_cache):
    cfg = bench.config_from("tiny")
    out = tmp_path / "out"
    # fp32: the exact comparisons below hold on every machine (bf16 is the runtime's own test)
    results = bench.run(cfg, ("train", "quality", "score"), preset="tiny", out_dir=out,
                        rt=runtime.setup("cpu", threads=1, precision="fp32"))

    saved = json.loads((out / "cpu.json").read_text())
    assert saved == json.loads(json.dumps(results))
    assert saved["hardware"]["device"] == "cpu" and saved["config"]["train_steps"] == 2
    assert saved["engine_code"] == bench.engine_code() and saved["warm_up_seconds"] == 0.0

    t = saved["training"]
    assert t["train_questions"] == 4 and t["eval_questions"] == 4
    for system in ("ours", *bench.REFERENCES):
        assert t[system]["questions_per_s"] > 0 and len(t[system]["correct"]) == 4
        assert t[system]["tokens_per_real_token"] >= 1 and len(t[system]["losses"]) == 2
    # the official script pads 2 steps × 2 questions × 4 options to 256 tokens; the others pad to the batch
    assert t["trainer_official"]["tokens_processed"] == 2 * 2 * 4 * 256
    assert t["ours"]["real_tokens"] == t["trainer_tuned"]["real_tokens"] == t["trainer_official"]["real_tokens"]
    assert t["trainer_tuned"]["tokens_processed"] < t["trainer_official"]["tokens_processed"]
    config = model_config("tiny-bert")
    assert t["trainer_official"]["train_flops"] == 2 * bench.encoder_flops(config, 2 * 4, 256)
    assert t["strongest"] in bench.REFERENCES
    assert t["speedup"] == pytest.approx(t["ours"]["questions_per_s"] / t[t["strongest"]]["questions_per_s"])

    q = saved["quality"]  # a tiny random model does not learn in one epoch of four questions
    assert q["train_questions"] == 4 and not q["ours"]["learned"] and not q["reference"]["learned"]
    # scored: the 4 val questions and the 2 train questions held out of its training
    assert q["val_questions"] == 4 and q["held_out_questions"] == 2 and q["eval_questions"] == 6
    assert len(q["ours"]["correct"]) == len(q["reference"]["correct"]) == q["difference"]["n"] == 6
    assert q["verdict"] == "not comparable: neither run learned"

    s = saved["scoring"]
    assert s["items"] == 3 and s["options"] == 12
    assert s["identical_predictions"] == s["identical_predictions_norm"] == 3 and s["max_abs_loglik_difference"] < 1e-3
    for metric in ("acc", "acc_norm"):  # the harness's own metrics are ours applied to its log-likelihoods
        assert s["ours"][metric] == s["reference"][metric] == pytest.approx(s["harness_reported"][metric])
    r = s["record"]
    assert r["items"] == 2 and r["identical_predictions"] == 2 and r["max_abs_loglik_difference"] < 1e-3
    assert r["ours"]["em"] == pytest.approx(r["reference"]["em"]) and r["ours"]["f1"] == pytest.approx(r["reference"]["f1"])

    f = saved["flops"]
    assert f["peak"]["dtype"] == "float32" and f["peak"]["flops_per_s"] > 0
    assert 0 < f["ours"]["fraction_of_peak"]

    md = (out / "cpu.md").read_text()
    header = "| stage | measure | ours | reference | ratio | target | met |"
    assert header in md and "training questions/s" in md and "identical predictions" in md
    assert "f. quality" in md and "not comparable: neither run learned" in md
    assert set(saved["load"]) == {"train", "quality", "score"} and "load average before → after" in md
    assert "| 3/3 |" in md and "float32 matmul peak" in md
    assert md.count("\n| ") == 1 + len(bench.summary_rows(saved))  # header + one line per measure


@pytest.mark.slow  # eight fresh processes
def test_tiny_cost_curves_run_each_point_in_its_own_process(tiny_data, tmp_path, isolated_cache, monkeypatch):
    # one curve of each engine pair: fine-tuning by length (its tokens are checked), scoring by questions
    monkeypatch.setattr(bench, "CURVES", {k: v for k, v in bench.CURVES.items() if k != "fine-tuning: questions"})
    out = tmp_path / "out"
    results = bench.run(bench.config_from("tiny"), ("curves",), preset="tiny", out_dir=out,
                        rt=runtime.setup("cpu", threads=1, precision="fp32"))
    curves = results["curves"]
    assert set(curves) == set(bench.CURVES)
    for curve in curves.values():
        assert len(curve["lines"]) == 2 and "ours" in curve["lines"]
        for line in curve["lines"].values():
            assert [p["x"] for p in line["points"]] in ([2, 4], [16, 32])
            assert all(p["seconds"] > 0 and p["peak_rss_mb"] > 100 for p in line["points"])  # torch alone is more
            assert line["exponent"] == pytest.approx(bench.growth_exponent(
                [p["x"] for p in line["points"]], [p["seconds"] for p in line["points"]]))
    length = curves["fine-tuning: tokens per option"]["lines"]["ours"]["points"]
    assert [p["tokens_processed"] for p in length] == [2 * 4 * 16, 2 * 4 * 32]  # every pair filled to the length
    md = (out / "cpu.md").read_text()
    assert md.count("g. cost curve") == len(bench.CURVES)


def test_growth_exponent_of_a_power_law():
    assert bench.growth_exponent([10, 20, 40, 80], [3 * n ** 1.5 for n in (10, 20, 40, 80)]) == pytest.approx(1.5)


PRECISION_MEASURES = [
    "training questions/s (ratio: bf16 ÷ fp32)", bench.PRECISION_ACCURACY_MEASURE,
    "GFLOP/s of the matmul peak in the same dtype",
    "bf16 training questions/s, ours vs trainer_tuned (ratio: ours ÷ Trainer)",
    "bf16 GFLOP/s of the bf16 matmul peak, ours vs trainer_tuned", "items/s (ratio: bf16 ÷ fp32)", "acc %",
    bench.SAME_PREDICTION_MEASURE,
    "largest |Δ log-likelihood| over all options",
]


def test_tiny_precision_stage_runs_fp32_and_bf16_and_restores_the_runtime(tiny_data, tmp_path, isolated_cache):
    out = tmp_path / "out"
    results = bench.run(bench.config_from("tiny"), ("precision",), preset="tiny", out_dir=out,
                        rt=runtime.setup("cpu", threads=1, precision="fp32"))
    assert runtime.numerics() == "cpu-fp32" and torch.get_num_threads() == 1  # the caller's runtime again

    t, s = results["precision"]["training"], results["precision"]["scoring"]
    runs = {name: t[name] for name in ("fp32", "bf16", "reference_bf16")}
    assert {name: r["dtype"] for name, r in runs.items()} == {"fp32": "float32", "bf16": "bfloat16",
                                                              "reference_bf16": "bfloat16"}
    assert {name: p["dtype"] for name, p in t["peaks"].items()} == {"fp32": "float32", "bf16": "bfloat16"}
    for r in runs.values():
        assert r["questions_per_s"] > 0 and len(r["correct"]) == t["eval_questions"] == 4
        assert r["accuracy"]["low"] <= r["accuracy"]["estimate"] <= r["accuracy"]["high"]
        assert 0 < r["fraction_of_peak"] <= 1
    d = t["accuracy_difference"]
    assert d["low"] <= d["estimate"] <= d["high"]
    assert d["estimate"] == pytest.approx(25 * (sum(t["fp32"]["correct"]) - sum(t["bf16"]["correct"])))
    assert t["speedup"] == pytest.approx(t["bf16"]["questions_per_s"] / t["fp32"]["questions_per_s"])
    assert s["items"] == 3 and s["options"] == 12 and {"fp32", "bf16"} <= set(s)
    assert 0 <= s["identical_share"] <= 1 and s["identical_predictions"] == round(3 * s["identical_share"])
    assert 0 <= s["max_abs_loglik_difference"] < float("inf")

    rows = bench.summary_rows(results)
    assert [r["measure"] for r in rows] == PRECISION_MEASURES
    assert rows[0]["ours"].startswith("fp32 ") and rows[0]["reference"].startswith("bf16 ")
    assert all(r["met"] in ("yes", "no") for r in rows if r["target"])
    assert "| e. fp32 vs bf16: fine-tuning tiny-bert" in (out / "cpu.md").read_text()


def _precision_results(identical: int, diff_low: float) -> dict:
    run = {"questions_per_s": 1.0, "flops_per_s": 1e9, "fraction_of_peak": 0.5,
           "accuracy": {"estimate": 30.0, "low": 25.0, "high": 35.0}}
    peak = {"flops_per_s": 2e9}
    return {"precision": {
        "training": {"model": "m", "steps": 10, "batch_size": 8, "fp32": run, "bf16": run, "reference_bf16": run,
                     "peaks": {"fp32": peak, "bf16": peak}, "reference": "trainer_tuned", "speedup": 1.0,
                     "reference_speedup": 3.0,
                     "accuracy_difference": {"estimate": diff_low + 2, "low": diff_low, "high": diff_low + 4}},
        "scoring": {"model": "lm", "items": 100, "identical_predictions": identical, "identical_share": identical / 100,
                    "max_abs_loglik_difference": 0.1, "fp32": {"items_per_s": 2.0, "acc": 30.0},
                    "bf16": {"items_per_s": 3.0, "acc": 29.0}}}}


@pytest.mark.parametrize("identical, diff_low, met", [(97, -1.0, ["yes", "yes"]), (96, 0.5, ["no", "no"])])
def test_precision_rows_check_the_targets(identical, diff_low, met):
    rows = {r["measure"]: r for r in bench.summary_rows(_precision_results(identical, diff_low))}
    assert [rows[bench.SAME_PREDICTION_MEASURE]["met"], rows[bench.PRECISION_ACCURACY_MEASURE]["met"]] == met
    assert rows[bench.SAME_PREDICTION_MEASURE]["ours"] == f"{identical}/100 ({identical}%)"


def test_flop_formula_matches_torch_flop_counter():
    model = load_multiple_choice("tiny-bert").train()
    ids = torch.randint(1000, 2000, (2, 4, 37))
    with FlopCounterMode(display=False) as counter:
        model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits.sum().backward()
    assert bench.encoder_flops(model_config("tiny-bert"), 2 * 4, 37) == counter.get_total_flops()


def test_embedding_shapes_records_each_forward_once():
    model = load_multiple_choice("tiny-bert").eval()
    config = model_config("tiny-bert")
    with bench.EmbeddingShapes(config.vocab_size) as shapes, torch.no_grad():
        for length in (5, 9):
            model(input_ids=torch.randint(1000, 2000, (3, 4, length)))
    model(input_ids=torch.randint(1000, 2000, (1, 4, 7)))  # after the block: not recorded
    assert shapes.shapes == [(12, 5), (12, 9)]
    assert shapes.tokens() == 12 * 14
    assert shapes.flops(config) == sum(bench.encoder_flops(config, 12, n) for n in (5, 9))


def _results(speedup: float) -> dict:
    system = {"questions_per_s": 1.0, "eval_questions_per_s": 2.0, "tokens_per_real_token": 1.1,
              "accuracy": {"estimate": 30.0, "low": 25.0, "high": 35.0}}
    return {"hardware": {"device": "cpu"}, "training": {
        "model": "m", "steps": 10, "batch_size": 8, "eval_questions": 50,
        "ours": system, "trainer_tuned": system, "trainer_official": system, "strongest": "trainer_tuned",
        "speedups": {"trainer_tuned": speedup, "trainer_official": 3 * speedup}, "speedup": speedup,
        "eval_speedup": 1.5, "accuracy_difference": {"estimate": 1.0, "low": -1.0, "high": 3.0}}}


@pytest.mark.parametrize("speedup, met", [(1.5, "yes"), (1.1, "no")])
def test_the_speed_target_is_against_the_strongest_reference(speedup, met):
    rows = [r for r in bench.summary_rows(_results(speedup)) if r["measure"].startswith("training questions/s")]
    assert [r["ratio"] for r in rows] == [f"{speedup:.2f}×", f"{3 * speedup:.2f}×"]
    assert [r["met"] for r in rows] == [met, ""]  # only the strongest carries the target
    assert "(strongest)" in rows[0]["measure"] and "(strongest)" not in rows[1]["measure"]


def test_the_headline_names_the_faster_reference_and_a_gpu_run_without_warm_up():
    cpu = _results(1.1)
    cpu["hardware"] = {"device": "cpu", "cpu_count": 2}
    assert bench.headline(cpu).startswith("On the 2-core CPU run, our trainer fine-tuned m at 1.10 times the "
                                          "questions per second of the tuned `Trainer`, the faster reference here")
    gpu = _results(0.5)
    gpu["hardware"] = {"device": "cuda", "gpu": "H200"}
    gpu["training"] |= {"strongest": "trainer_official", "speedup": 0.4,
                        "ours": {**gpu["training"]["ours"], "train_seconds": 44.0, "dtype": "bfloat16"}}
    gpu["precision"] = {"training": {"bf16": {"train_seconds": 20.0, "dtype": "bfloat16"}, "reference_speedup": 1.13}}
    text = bench.headline(gpu)
    assert "no faster than the `Trainer` configured as the official script (0.40 times" in text
    assert "at 0.50 times the tuned `Trainer`" in text
    assert "with no warm-up, and paid the GPU's one-time costs: 44.0 s, where stage e's bf16 run" in text
    assert "20.0 s, at 1.13 times" in text
    assert "warm-up" not in bench.headline({**gpu, "warm_up_seconds": 3.0})


def test_the_headline_says_when_a_record_measured_other_engine_code():
    record = _results(1.1)
    record["hardware"] = {"device": "cpu", "cpu_count": 2}
    assert "does not say which version of the engines" in bench.headline(record)
    assert "an earlier version of the engines" in bench.headline({**record, "engine_code": "0" * 20})
    assert "run the benchmark again" not in bench.headline({**record, "engine_code": bench.engine_code()})


def _run(final_loss: float, low: float) -> dict:
    return {"losses": [1.4] * 9 + [final_loss], "accuracy": {"estimate": low + 5, "low": low, "high": low + 10}}


@pytest.mark.parametrize("ours, ref, equivalent, verdict", [
    (_run(1.0, 40), _run(1.1, 38), True, "equivalent"),
    (_run(1.0, 40), _run(1.1, 38), False, "equivalence not shown: the interval reaches past the margin"),
    (_run(1.0, 40), _run(1.3, 38), True, "not comparable: the reference did not learn"),  # loss ≥ 0.9 · ln 4
    (_run(1.0, 24), _run(1.0, 38), True, "not comparable: ours did not learn"),  # accuracy not above chance
    (_run(1.38, 20), _run(1.38, 20), True, "not comparable: neither run learned"),
])
def test_equivalence_needs_two_runs_that_learned(ours, ref, equivalent, verdict):
    from rcstudy.stats import Equivalence, Interval

    test = Equivalence(Interval(0.0, -1.0, 1.0, 0.9), 3.0, equivalent)
    assert bench.equivalence_verdict(ours, ref, test, 4) == verdict


def test_config_overrides_are_checked():
    assert bench.config_from("tiny", {"train_steps": 5}).train_steps == 5
    with pytest.raises(ValueError, match="unknown benchmark setting"):
        bench.config_from("tiny", {"steps": 5})
    with pytest.raises(ValueError, match="unknown preset"):
        bench.config_from("huge")


def test_timed_process_reports_exit_code_and_peak_memory(tmp_path):
    grow = "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096]); raise SystemExit(3)"
    result = bench.timed_process([sys.executable, "-c", grow], log=tmp_path / "log")
    assert result["returncode"] == 3
    assert result["peak_rss_mb"] >= 300


def test_book_stage_needs_a_recorded_build(tmp_path, monkeypatch):
    monkeypatch.setenv("RCSTUDY_BOOK_ROOT", str(tmp_path))
    with pytest.raises(RuntimeError, match="make book PROFILE=quick"):
        bench.stage_book(bench.config_from("tiny"))
    (tmp_path / "book").mkdir()
    recorded = {"quick": {"intro": {"latest": 2.0, "cold": 7.0}, "reclor": {"latest": 600.5}}}
    (tmp_path / "book" / "timings.json").write_text(json.dumps(recorded))
    assert bench.recorded_timings("quick") == {"intro": 7.0}
    assert bench.recorded_timings("quick", kind="latest") == {"intro": 2.0, "reclor": 600.5}


def test_the_text_edit_of_the_book_stage_changes_one_chapter_in_a_copy(tmp_path):
    from rcstudy.run import CHAPTERS_DIR

    copy = bench.edited_chapters(tmp_path / "chapters", "reclor")
    assert (copy / "reclor.md").read_text().startswith((CHAPTERS_DIR / "reclor.md").read_text())
    assert (copy / "reclor.md").read_text() != (CHAPTERS_DIR / "reclor.md").read_text()
    assert (copy / "rule.md").read_text() == (CHAPTERS_DIR / "rule.md").read_text()
    assert (copy / "params" / "reclor.quick.yaml").exists()


def _record(date: str, stages: tuple[str, ...], preset: str = "cpu", cpu_model: str = "EPYC",
            engine_code: str = "abc") -> dict:
    record = {"rcstudy": "0", "engine_code": engine_code, "date": date, "preset": preset, "config": {"train_steps": 100},
              "stages": list(stages), "load_average": [0.0, 0.0], "load": {s: [1.0, 2.0] for s in stages},
              "hardware": {"device": "cpu", "cpu_model": cpu_model, "cpu_count": 2, "torch_threads": 2,
                           "memory_gb": 24, "torch": "2"}}
    return {**record, **{k: {"from": date} for s in stages for k in bench.STAGE_KEYS[s]}}


def test_a_run_of_some_stages_keeps_the_others_of_the_same_setup():
    full = bench.merge_stages(_record("d1", ("train", "score", "precision")), None)
    assert full["measured"] == {"train": "d1", "score": "d1", "precision": "d1"}

    merged = bench.merge_stages(_record("d2", ("book",)), full)
    assert merged["stages"] == ["train", "score", "precision", "book"]
    assert merged["measured"] == {"train": "d1", "score": "d1", "precision": "d1", "book": "d2"}
    assert merged["training"] == merged["flops"] == merged["precision"] == {"from": "d1"}
    assert merged["book"] == {"from": "d2"}
    assert merged["load"] == {"train": [1.0, 2.0], "score": [1.0, 2.0], "precision": [1.0, 2.0], "book": [1.0, 2.0]}
    # a stage run again replaces the kept one
    again = bench.merge_stages(_record("d3", ("score",)), merged)
    assert again["measured"]["score"] == "d3" and again["scoring"] == {"from": "d3"}
    assert again["measured"]["book"] == "d2"
    # a record without `measured` (older files) counts its own date for each of its stages
    assert bench.stage_dates(_record("d0", ("train",))) == {"train": "d0"}


@pytest.mark.parametrize("change", [{"preset": "gpu"}, {"cpu_model": "Xeon"}, {"engine_code": "other"}])
def test_stages_of_another_setup_are_not_kept(change):
    previous = _record("d1", ("train", "score"))
    new = _record("d2", ("book",), **change)
    merged = bench.merge_stages(new, previous)
    assert merged["stages"] == ["book"] and "training" not in merged and merged["measured"] == {"book": "d2"}


def test_markdown_names_each_stage_date_when_they_differ():
    merged = bench.merge_stages(_record("d2", ()), bench.merge_stages(_record("d1", ()), None))
    assert "Measured:" not in bench.markdown(merged)
    assert "Measured: train d1; book d2." in bench.markdown(
        {**merged, "stages": ["train", "book"], "measured": {"train": "d1", "book": "d2"}})


def test_a_gpu_record_says_whether_a_warm_up_ran_before_the_timed_runs():
    cuda = {**_record("d1", ()), "hardware": {**_record("d1", ())["hardware"], "device": "cuda", "gpu": "H200"}}
    assert "No warm-up ran first" in bench.markdown(cuda)
    assert "An untimed warm-up of the GPU ran first (12.3 s)." in bench.markdown({**cuda, "warm_up_seconds": 12.34})
    assert "warm-up" not in bench.markdown(_record("d1", ()))


def test_no_warm_up_on_a_cpu():
    assert bench.warm_device(bench.PRESETS["tiny"], runtime.setup("cpu", threads=1, precision="fp32")) == 0.0


class _PretendGPU(runtime.Runtime):
    """A CPU runtime that reports itself as CUDA, to run the GPU-only code paths here."""

    cuda = True


def test_the_gpu_warm_up_runs_the_model_at_every_length(monkeypatch):
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    lengths = []
    monkeypatch.setattr(torch.nn.Embedding, "forward", lambda self, ids, real=torch.nn.Embedding.forward:
                        lengths.append(ids.shape[-1]) or real(self, ids))
    peaks = []  # a 4096² matmul: a GPU's millisecond, a minute on two CPU cores
    monkeypatch.setattr(bench, "matmul_peak", lambda rt, n, repeats: peaks.append(n))
    cfg = bench.config_from("tiny", {"max_length": 48, "batch_size": 2})
    seconds = bench.warm_device(cfg, _PretendGPU(torch.device("cpu"), 1, torch.float32))
    assert seconds > 0 and peaks == [4096] and sorted(set(lengths)) == [16, 32, 48]


def _scoring_results(identical_bf16: int, identical_fp32: int) -> dict:
    run = {"seconds": 10.0, "items_per_s": 10.0, "acc": 22.0, "acc_norm": 29.0}
    return {"hardware": {"device": "cpu", "cpu_count": 2}, "scoring": {
        "model": "lm", "items": 100, "ours": run, "reference": {**run, "seconds": 30.0}, "speedup": 3.0,
        "harness_reported": {"acc": 22.0, "acc_norm": 29.0}, "identical_predictions": identical_bf16,
        "identical_predictions_norm": identical_bf16, "max_abs_loglik_difference": 0.5,
        "fp32": {"identical_predictions": identical_fp32, "identical_predictions_norm": identical_fp32,
                 "max_abs_loglik_difference": 1e-5},
        "record": {"items": 2, "identical_predictions": 2, "max_abs_loglik_difference": 0.0, "speedup": 3.0,
                   "harness_metrics": "m", "ours": {"seconds": 1.0, "em": 50.0, "f1": 50.0},
                   "reference": {"seconds": 3.0, "em": 50.0, "f1": 50.0}}}}


def test_scoring_rows_report_the_fp32_agreement_beside_bf16():
    rows = {r["measure"]: r for r in bench.summary_rows(_scoring_results(97, 100))}
    assert rows["identical predictions, acc"]["met"] == "no"
    assert rows["identical predictions, acc, both in fp32"]["ours"] == "100/100"
    assert rows["identical predictions, acc, both in fp32"]["met"] == "yes"
    assert "in fp32: 100 and 100 of 100" in bench.headline(_scoring_results(97, 100))
    rows = {r["measure"]: r for r in bench.summary_rows(_scoring_results(97, 99))}
    assert rows["identical predictions, acc_norm, both in fp32"]["met"] == "no"


def test_tiny_replicas_stage_measures_utilisation_and_checks_a_chapter_job_against_its_plan(
        tmp_path, isolated_cache, monkeypatch):
    """The gpu-check preset's stage on tiny replicas and the fixtures: fine-tuning ours and the
    tuned Trainer, scoring and generating with the LM replica, and the ReClor chapter's full-profile
    job timed against the plan's prediction; a tiny replica's shares are not offered to the plan."""
    monkeypatch.setenv("RCSTUDY_DATA", str(FIXTURES / "data"))
    cfg = bench.config_from("tiny", {"replica_harness": False})
    results = bench.run(cfg, ("replicas",), preset="tiny", out_dir=tmp_path / "out",
                        rt=runtime.setup("cpu", threads=1, precision="fp32"))
    r = results["replicas"]
    assert r["training"]["model"] == "roberta-large replica" and r["training"]["ours"]["real_tokens"] > 0
    assert 0 < r["training"]["ours"]["real_fraction_of_peak"] <= r["training"]["ours"]["fraction_of_peak"]
    assert r["scoring"]["ours"]["tokens"] > 0 and r["scoring"]["generation"]["decode_steps"] == 3
    assert r["scoring"]["generation"]["bandwidth_share"] is None  # a CPU has no bandwidth in the GPU table
    check = r["plan_check"]
    assert check["job"] == "roberta-large (CQA) seed 1" and check["predicted_seconds"] > 0
    assert check["measured_seconds"] > 0 and isinstance(check["met"], bool)
    assert results["utilisation"] == {}
    rows = {row["measure"]: row for row in bench.summary_rows(results)}
    assert any("plan" in m for m in rows)
    assert "gpu-check" in bench.PRESETS and bench.DEFAULT_STAGES["gpu-check"] == ("replicas",)


def test_the_gpu_check_record_has_a_file_of_its_own(tmp_path):
    """It neither replaces the gpu preset's cuda.json nor merges with it; the plan reads it."""
    assert bench.results_path({"preset": "gpu-check", "hardware": {"device": "cuda:0"}}, tmp_path).name == "cuda-check.json"
    assert bench.results_path({"preset": "gpu", "hardware": {"device": "cuda:0"}}, tmp_path).name == "cuda.json"
