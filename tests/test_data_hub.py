"""Reading the datasets' public Hub copies through ``datasets``: the copies' layouts are written
here from the official-format fixtures, and must read back as the same records as the folder."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import datasets
import pytest

from rcstudy.data import dataset_dict, hub, logiqa, reclor, record
from rcstudy.data.registry import DATASETS
from rcstudy.errors import DataFormatError, DatasetUnavailable

FIXTURES = Path(__file__).parent / "fixtures" / "data"
# Where a record was read from (file line, copy row, file name) and how the file printed it (LogiQA's
# option labels, which the copy removes), not what it holds; the SuperGLUE copy drops the news source.
SOURCE_META = ("line", "file", "raw_labels", "unlabelled", "permuted", "reordered", "news_source")
pytestmark = pytest.mark.filterwarnings("ignore::rcstudy.data.reclor.SplitSizeWarning")


@pytest.fixture(autouse=True)
def offline_datasets(monkeypatch, tmp_path):
    """No network, and a private datasets cache: even a local load can phone home otherwise."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    monkeypatch.setenv("RCSTUDY_DATA", str(FIXTURES))
    hub.load_copy.cache_clear()
    yield
    hub.load_copy.cache_clear()


def content(records):
    return [replace(r, meta={k: v for k, v in r.meta.items() if k not in SOURCE_META}) for r in records]


def write_parquet(root: Path, data_dir: str, split: str, rows: list[dict], features: datasets.Features) -> None:
    path = root / data_dir / split / "0000.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(path))


# --------------------------------------------------------------------------- the copies' layouts

def reclor_copy(root: Path) -> Path:
    """metaeval/reclor: the official train.json and val.json, as they are."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ("train.json", "val.json"):
        shutil.copy(FIXTURES / "reclor" / name, root / name)
    return root


LOGIQA_FEATURES = datasets.Features({"context": datasets.Value("string"), "query": datasets.Value("string"),
                                     "options": datasets.List(datasets.Value("string")),
                                     "correct_option": datasets.Value("string")})


def logiqa_rows(items) -> list[dict]:
    return [{"context": it.context, "query": it.question, "options": list(it.options),
             "correct_option": str(it.label)} for it in items]


def logiqa_copy(root: Path, overrides: dict[int, dict] | None = None) -> Path:
    """lucasmccabe/logiqa's Parquet export; its train split is the fixture's Eval again (the
    folder fixture has no Train.txt). ``overrides`` replace fields of test rows (0-based)."""
    evals = logiqa_rows(logiqa.load_logiqa("eval"))
    tests = logiqa_rows(logiqa.load_logiqa("test"))
    for k, fields in (overrides or {}).items():
        tests[k] = {**tests[k], **fields}
    for split, rows in (("train", evals), ("validation", evals), ("test", tests)):
        write_parquet(root, "default", split, rows, LOGIQA_FEATURES)
    return root


LOGIQA2_FEATURES = datasets.Features({
    "id": datasets.Value("int32"), "answer": datasets.Value("int32"), "text": datasets.Value("string"),
    "type": datasets.Value("string"), "question": datasets.Value("string"),
    "options": datasets.List(datasets.Value("string")),
})


def logiqa2_copy(root: Path, overrides: dict[int, dict] | None = None) -> Path:
    """baber/logiqa2's Parquet export (config ``logiqa2``): its loading script strips the texts and
    stores each item's ``type`` dict as text (``datasets`` casts it with ``str``). The fixture's
    dev file serves as train and validation. ``overrides`` replace fields of test rows (0-based)."""
    def rows(split: str) -> list[dict]:
        out = []
        for line in (FIXTURES / "logiqa2" / f"{split}.txt").read_text().splitlines():
            d = json.loads(line)
            out.append({"id": d["id"], "answer": d["answer"], "text": d["text"].strip(), "type": str(d["type"]),
                        "question": d["question"].strip(), "options": [x.strip() for x in d["options"]]})
        return out
    tests = rows("test")
    for k, fields in (overrides or {}).items():
        tests[k] = {**tests[k], **fields}
    for split, data in (("train", rows("dev")), ("validation", rows("dev")), ("test", tests)):
        write_parquet(root, "logiqa2", split, data, LOGIQA2_FEATURES)
    return root


RECORD_FEATURES = datasets.Features({
    "passage": datasets.Value("string"), "query": datasets.Value("string"),
    "entities": datasets.List(datasets.Value("string")),
    "entity_spans": {"text": datasets.List(datasets.Value("string")), "start": datasets.List(datasets.Value("int32")),
                     "end": datasets.List(datasets.Value("int32"))},
    "answers": datasets.List(datasets.Value("string")),
    "idx": {"passage": datasets.Value("int32"), "query": datasets.Value("int32")},
})


def superglue_rows(path: Path) -> list[dict]:
    """What SuperGLUE's loading script makes of a ``train.jsonl``/``val.jsonl`` file, row by row."""
    rows = []
    for line in path.read_text().splitlines():
        p = json.loads(line)
        text = p["passage"]["text"]
        spans = sorted(({"text": text[e["start"]:e["end"] + 1], "start": e["start"], "end": e["end"] + 1}
                        for e in p["passage"]["entities"]), key=lambda e: e["start"])
        for qa in p["qas"]:
            rows.append({
                "passage": text, "query": qa["query"], "entities": sorted({e["text"] for e in spans}),
                "entity_spans": {k: [e[k] for e in spans] for k in ("text", "start", "end")},
                "answers": sorted({a["text"] for a in qa["answers"]}),
                "idx": {"passage": p["idx"], "query": qa["idx"]},
            })
    return rows


def record_copy(root: Path, corrupt=None) -> Path:
    """aps/super_glue's Parquet export (``record/<split>/``), from the fixture's FewGLUE files (in
    SuperGLUE's layout); ``corrupt`` edits the validation rows. The test split asks the validation
    queries again in other words, without answers (as SuperGLUE's test split has none)."""
    fewglue = FIXTURES / "record" / "fewglue"
    validation = superglue_rows(fewglue / "dev32.jsonl")
    test = [{**row, "query": "Once more: " + row["query"], "answers": [],
             "idx": {"passage": row["idx"]["passage"] + 1000, "query": row["idx"]["query"] + 1000}}
            for row in validation]
    if corrupt:
        corrupt(validation)
    write_parquet(root, "record", "train", superglue_rows(fewglue / "train.jsonl"), RECORD_FEATURES)
    write_parquet(root, "record", "validation", validation, RECORD_FEATURES)
    write_parquet(root, "record", "test", test, RECORD_FEATURES)
    return root


# --------------------------------------------------------------------------- same records

def test_reclor_copy_reads_as_the_folder(tmp_path):
    source = str(reclor_copy(tmp_path / "reclor"))
    for split in ("train", "val"):
        assert content(reclor.load_split(split, source=source)) == content(reclor.load_split(split))
    assert set(reclor.load_all(source=source)) == {"train", "val"}


def test_logiqa_copy_reads_as_the_folder(tmp_path):
    source = str(logiqa_copy(tmp_path / "logiqa"))
    for split in ("eval", "test"):
        assert content(logiqa.load_logiqa(split, source=source)) == content(logiqa.load_logiqa(split))
    train = logiqa.training_set(source=source)
    assert content(train.items) == [replace(it, id=it.id.replace("eval", "train"),
                                            meta={**it.meta, "split": "train"})
                                    for it in content(logiqa.load_logiqa("eval"))]
    assert train.files and all(f.is_file() for f in train.files)
    assert logiqa.has_split("train", source=source) and not logiqa.has_split("train", "zh", source=source)


def test_logiqa2_copy_reads_as_the_folder(tmp_path):
    source = str(logiqa2_copy(tmp_path / "logiqa2"))
    for split in ("dev", "test"):
        copied = logiqa.load_logiqa2(split, source)
        assert content(copied) == content(logiqa.load_logiqa2(split))
        assert any(it.meta["types"] for it in copied)  # the flags survive their trip through text
    as_json = str(logiqa2_copy(tmp_path / "json", {0: {"type": '{"Categorical Reasoning": true}'}}))
    assert logiqa.load_logiqa2("test", as_json)[0].meta["types"] == ("categorical",)
    assert logiqa.logiqa2_files(["dev", "test"], source) and all(f.is_file() for f in logiqa.logiqa2_files(["test"], source))
    # the training set built from LogiQA 2.0 reads the same pool from the copy
    assert content(logiqa.training_set(logiqa2_source=source).items) == content(logiqa.training_set().items)


def test_record_copy_reads_as_superglue_files(tmp_path):
    source = str(record_copy(tmp_path / "super_glue"))
    fewglue = FIXTURES / "record" / "fewglue"
    src = hub.resolve("record", source)
    assert content(record.read_hub_split(src, "eval")) == content(record.load_superglue(fewglue / "dev32.jsonl"))
    assert content(record.read_hub_split(src, "train")) == content(record.load_superglue(fewglue / "train.jsonl"))
    data = record.load_record(source=source)
    assert data.mode == "official" and len(data.test) == len(data.eval) and not any(q.answers for q in data.test)
    assert [f.role for f in data.files] == ["train", "eval", "test"] and all(p.is_file() for p in data.paths)
    assert sum(data.read.values()) == len(data.train) + len(data.eval) + len(data.test)


def test_a_saved_dataset_dict_is_a_source_too(tmp_path):
    saved = tmp_path / "saved"
    datasets.load_dataset(str(logiqa_copy(tmp_path / "logiqa")), data_dir="default").save_to_disk(str(saved))
    assert content(logiqa.load_logiqa("test", source=str(saved))) == content(logiqa.load_logiqa("test"))


# --------------------------------------------------------------------------- located errors

def test_a_malformed_logiqa_row_names_the_copy_split_and_row(tmp_path):
    source = str(logiqa_copy(tmp_path / "bad", {1: {"correct_option": "4"}}))
    with pytest.raises(DataFormatError, match=r"bad\[test\]:2: correct_option 4 is not an option index 0-3"):
        logiqa.load_logiqa("test", source=source)
    source = str(logiqa_copy(tmp_path / "short", {0: {"options": ["one", "two", "three"]}}))
    with pytest.raises(DataFormatError, match=r"short\[test\]:1: expected 4 non-empty option strings"):
        logiqa.load_logiqa("test", source=source)


@pytest.mark.parametrize("flags, problem", [
    ("{'Categorical Reasoning': True", r"field 'type' should be a dict of reasoning-type flags"),
    ("['Categorical Reasoning']", r"field 'type' should be a dict of reasoning-type flags"),
    ("__import__('os').system('true')", r"field 'type' should be a dict"),  # text is data: never run
    ("{'Modal Reasoning': True}", r"unknown reasoning type\(s\) \['Modal Reasoning'\]"),
    ("{'Categorical Reasoning': 'yes'}", r"field 'type.Categorical Reasoning' should be bool"),
])
def test_a_malformed_logiqa2_type_names_the_copy_split_and_row(tmp_path, flags, problem):
    source = str(logiqa2_copy(tmp_path / "bad", {1: {"type": flags}}))
    with pytest.raises(DataFormatError, match=r"bad\[test\]:2 \(item \d+\): " + problem):
        logiqa.load_logiqa2("test", source)


def test_a_malformed_reclor_row_is_refused_as_in_the_files(tmp_path):
    root = reclor_copy(tmp_path / "reclor")
    items = json.loads((root / "val.json").read_text())
    items[2]["label"] = 7
    (root / "val.json").write_text(json.dumps(items))
    with pytest.raises(DataFormatError, match=r"reclor\[validation\]:3 \(item [^)]+\): label 7 is outside"):
        reclor.load_split("val", source=str(root))


def test_a_copy_that_datasets_cannot_read_names_the_copy(tmp_path):
    root = reclor_copy(tmp_path / "reclor")
    items = json.loads((root / "val.json").read_text())
    items[2]["label"] = True  # a JSON boolean in an integer column
    (root / "val.json").write_text(json.dumps(items))
    with pytest.raises(DataFormatError, match=r"reclor: datasets cannot read these files: .*'true'"):
        reclor.load_split("val", source=str(root))


def test_a_malformed_record_row_names_the_query(tmp_path):
    def shift_first_entity(rows):
        rows[0]["entity_spans"]["start"][0] += 1

    source = str(record_copy(tmp_path / "bad", shift_first_entity))
    with pytest.raises(DataFormatError, match=r"bad\[validation\]:1 \(item \d+\): entity 0: text .* differs"):
        record.load_record(source=source)

    def unknown_answer(rows):
        rows[0]["answers"] = ["Nobody"]

    source = str(record_copy(tmp_path / "answer", unknown_answer))
    with pytest.raises(DataFormatError, match=r"answer\[validation\]:1 .*answer 0 'Nobody' is none of"):
        record.load_record(source=source)


# --------------------------------------------------------------------------- sources

def test_an_uncached_hub_copy_fails_at_once_offline():
    with pytest.raises(DatasetUnavailable, match=r"the Hub dataset aps/super_glue is not in the local datasets "
                                                   r"cache .* offline \(HF_HUB_OFFLINE=1\)"):
        record.load_record(source="hub")
    with pytest.raises(DatasetUnavailable, match="lucasmccabe/logiqa"):
        logiqa.load_logiqa("eval", source="lucasmccabe/logiqa@main")


def test_sources_are_checked_by_name():
    with pytest.raises(ValueError, match=r"unknown data source 'hbu'; did you mean 'hub'\?; "
                                         r"choose 'folder', 'hub' \(metaeval/reclor"):
        reclor.load_split("train", source="hbu")
    with pytest.raises(DatasetUnavailable, match="has no test split"):
        reclor.load_split("test", source="hub")
    with pytest.raises(DatasetUnavailable, match="has no ood_test split"):
        logiqa.load_logiqa2("ood_test", "hub")
    for name in ("rule", "metalogic"):
        assert DATASETS[name].hub is None
        with pytest.raises(DatasetUnavailable, match=f"{name} has no public Hub copy"):
            hub.resolve(name, "hub")
    assert hub.resolve("reclor", "metaeval/reclor@abc123").revision == "abc123"
    assert hub.describe("reclor", "folder") == "the files in $RCSTUDY_DATA/reclor (data source 'folder')"
    # a branch moves: the page says it is a branch, how to pin a commit, and (once read) when it was downloaded
    assert ("Hub dataset aps/super_glue at branch refs/convert/parquet, which can move (no commit of it is recorded; "
            "pin one as aps/super_glue@<commit>)") in hub.describe("record", "hub")
    commit = "0123456789abcdef0123456789abcdef01234567"
    assert hub.describe("record", f"aps/super_glue@{commit}").endswith(f"aps/super_glue at commit {commit} "
                                                                       f"(data source 'aps/super_glue@{commit}')")


def test_a_branch_read_says_when_its_copy_was_downloaded(tmp_path, monkeypatch):
    import datetime
    import functools

    parquet = tmp_path / "validation.parquet"
    datasets.Dataset.from_dict({"x": [1, 2]}).to_parquet(str(parquet))
    downloaded = datasets.load_dataset("parquet", data_files={"validation": str(parquet)},
                                       cache_dir=str(tmp_path / "cache"))
    fake_load = functools.lru_cache(maxsize=None)(lambda src: downloaded)  # cleared like the real one
    monkeypatch.setattr(hub, "load_copy", fake_load)
    src = hub.resolve("record", "hub")
    assert "downloaded on" not in src.describe()  # nothing read yet: no date to give
    hub.rows(src, "eval")
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    assert src.describe().endswith(f"; this copy was downloaded on {today}")


# --------------------------------------------------------------------------- DatasetDict

@pytest.mark.parametrize("dataset, copy, split", [("logiqa", logiqa_copy, "eval"), ("logiqa2", logiqa2_copy, "test"),
                                                  ("record", record_copy, "eval")])
def test_dataset_dict_has_the_declared_features_from_either_source(tmp_path, dataset, copy, split):
    kind = "cloze" if dataset == "record" else "mc"
    folder = dataset_dict.as_dataset_dict(dataset)
    copied = dataset_dict.as_dataset_dict(dataset, source=str(copy(tmp_path / dataset)))
    for dd in (folder, copied):
        assert all(ds.features == dataset_dict.features(kind) for ds in dd.values())
    assert copied[split].to_list() == (folder[split].to_list() if dataset != "record" else
                                       dataset_dict.as_dataset_dict(dataset, source=str(tmp_path / dataset))[split].to_list())


def test_every_dataset_is_a_dataset_dict_from_its_folder():
    kinds = {"reclor": {"mc"}, "logiqa": {"mc"}, "logiqa2": {"mc"}, "record": {"cloze"},
             "rule": {"mc", "subquestion"}, "metalogic": {"metagraph"}}
    assert set(kinds) == set(DATASETS)
    for name, expected in kinds.items():
        dd = dataset_dict.as_dataset_dict(name)
        assert dd and all(len(ds) for ds in dd.values())
        assert {kind for kind in dataset_dict.KINDS for ds in dd.values() if ds.features == dataset_dict.features(kind)} == expected
    rule = dataset_dict.as_dataset_dict("rule")
    mains = set(rule["main"]["id"])
    assert all(row["main_id"] in mains and 0 <= row["main_option"] < 4 for row in rule["sub"])
    graph = dataset_dict.as_dataset_dict("metalogic")["dev"][0]
    assert graph["proof"] and [n["sid"] for n in graph["nodes"]][0] == "sent1"
    with pytest.raises(DatasetUnavailable, match="metalogic has no public Hub copy"):
        dataset_dict.as_dataset_dict("metalogic", source="hub")


def test_dataset_dict_round_trips_through_pandas():
    dd = dataset_dict.as_dataset_dict("reclor")
    assert set(dd) == {"train", "val", "test"}
    test = dd["test"].to_pandas()
    items = reclor.load_split("test")
    assert list(test["id"]) == [it.id for it in items] and set(test["label"]) == {-1}
    val = dd["val"].to_pandas()
    assert [list(o) for o in val["options"]] == [list(it.options) for it in reclor.load_split("val")]
    assert datasets.Dataset.from_pandas(val, features=dataset_dict.features("mc"), preserve_index=False).to_list() \
        == dd["val"].to_list()


# --------------------------------------------------------------------------- chapters

def test_chapters_select_the_source_by_parameter(tmp_path):
    from rcstudy.config import ConfigError
    from rcstudy.experiments import logiqa as logiqa_chapter
    from rcstudy.experiments import record as record_chapter

    assert record_chapter.Config().data_sources() == {}
    with pytest.raises(ConfigError, match=r"unknown data source 'hbu'; did you mean 'hub'\?"):
        record_chapter.Config.load("smoke", {"data_source": "hbu"})
    assert record_chapter.Config.load("smoke", {"data_source": "hub"}).data_sources() == {"record": "hub"}
    with pytest.raises(ConfigError, match=r"English only; set dataset.languages=\[en\]"):
        logiqa_chapter.Config.load("smoke", {"dataset.source": "hub"})
    cfg = logiqa_chapter.Config.load("smoke", {"dataset": {"source": "hub", "languages": ["en"]}})
    assert cfg.data_sources() == {"logiqa": "hub"}
    assert logiqa_chapter.Config.load("smoke", {"dataset.logiqa2_source": "hub"}).data_sources() == {"logiqa2": "hub"}
    with pytest.raises(ConfigError, match=r"logiqa2: unknown data source 'hbu'; did you mean 'hub'\?"):
        logiqa_chapter.Config.load("smoke", {"dataset.logiqa2_source": "hbu"})

    copy = str(logiqa_copy(tmp_path / "logiqa"))
    data = logiqa_chapter.load_data(logiqa_chapter.Dataset(languages=("en",), source=copy,
                                                           logiqa2_source=str(logiqa2_copy(tmp_path / "logiqa2"))))
    assert content(data.splits["en-test"]) == content(logiqa.load_logiqa("test"))
    assert content(data.logiqa2) == content(logiqa.load_logiqa2("dev") + logiqa.load_logiqa2("test"))
    assert data.train.dedup is None and data.train.source.startswith("LogiQA 1.0 Train (a local copy")
    assert all(f.is_file() for f in data.files)

    data = record.load_record(source=str(record_copy(tmp_path / "super_glue")))
    files, _ = record_chapter.data_overview(data, data.train)
    assert list(files.index) == list(data.read) and list(files["used as"]) == ["train", "eval", "test"]


def test_preflight_reads_the_chosen_source(tmp_path):
    from rcstudy import preflight

    with_copy = [name for name, info in DATASETS.items() if info.hub is not None]
    assert set(with_copy) == {"reclor", "logiqa", "logiqa2", "record"}
    for name in with_copy:  # offline and uncached: one line naming the copy, for every dataset that has one
        (problem,) = preflight.data_problems((name,), sources={name: "hub"})
        assert problem.startswith(f"{name}: the Hub dataset {DATASETS[name].hub.repo} is not in the local datasets "
                                  f"cache")
    copies = {"record": record_copy(tmp_path / "sg"), "logiqa": logiqa_copy(tmp_path / "lq"),
              "logiqa2": logiqa2_copy(tmp_path / "lq2"), "reclor": reclor_copy(tmp_path / "rc")}
    assert preflight.data_problems(tuple(copies), sources={k: str(v) for k, v in copies.items()}) == []


def test_reclor_chapter_runs_on_the_copy_without_a_test_split(tmp_path, isolated_cache, monkeypatch):
    from rcstudy import runtime
    from rcstudy.experiments import reclor as reclor_chapter

    monkeypatch.setenv("RCSTUDY_EXPORTS", str(tmp_path / "exports"))
    copy = str(reclor_copy(tmp_path / "reclor"))
    cfg = reclor_chapter.Config.load("smoke", {"data_source": copy})
    assert cfg.data_sources() == {"reclor": copy}
    res = reclor_chapter.run(cfg, runtime.setup(device="cpu", threads=1))
    assert (res.facts["reclor_n_train"], res.facts["reclor_n_val"], res.facts["reclor_n_test"]) == (
        len(reclor.load_split("train")), len(reclor.load_split("val")), 0)
    assert "a local copy" in res.facts["reclor_data_source"].data
    assert res.tables["reclor_test_files"].empty and "no test split" in res.facts["reclor_leaderboard_text"].data
    assert res.facts["reclor_n_easy"] + res.facts["reclor_n_hard"] == res.facts["reclor_n_val"]
