"""Statistics, paper-vs-ours tables, checked claims and the published-numbers module."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from rcstudy import learning, papers, report
from rcstudy.stats import Interval, bootstrap_ci, mean_sd, paired_equivalence


def test_mean_sd_uses_sample_sd():
    m = mean_sd([60.0, 62.0, 64.0, 66.0])
    assert m.mean == 63.0 and m.sd == pytest.approx(np.std([60, 62, 64, 66], ddof=1))
    assert str(m) == "63.0 ± 2.6"
    assert str(mean_sd([50.0])) == "50.0"
    with pytest.raises(ValueError):
        mean_sd([])


def test_bootstrap_interval_of_accuracy():
    correct = np.array([1] * 65 + [0] * 35)
    ci = bootstrap_ci(correct, scale=100, seed=0)
    assert ci.estimate == 65.0
    # The normal approximation gives 65 ± 9.3 for n = 100; the percentile bootstrap is close.
    assert 54 < ci.low < 57 and 73 < ci.high < 76
    assert bootstrap_ci(correct, scale=100, seed=0) == ci  # seeded
    assert bootstrap_ci(np.ones(10), scale=100).low == 100.0


def test_tost_equivalence_uses_the_90_percent_paired_interval():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 1000)
    flips = rng.random(1000) < 0.02  # two systems that disagree on 2% of 1,000 items
    b = np.where(flips, 1 - a, a)
    eq = paired_equivalence(a, b, margin=3.0)
    assert eq.equivalent and eq.difference.level == pytest.approx(0.90)
    assert -3 < eq.difference.low <= eq.difference.estimate <= eq.difference.high < 3
    # 200 items that disagree half the time: the interval (about ±6 points) is wider than the margin
    x, y = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    assert not paired_equivalence(x, y, margin=3.0).equivalent
    assert paired_equivalence(x, y, margin=20.0).equivalent


def test_paper_vs_ours_interleaves_and_marks_missing():
    paper = pd.DataFrame({"Val": [62.6, 23.8]}, index=pd.Index(["RoBERTa", "Chance"], name="model"))
    ours = pd.DataFrame({"Val": [mean_sd([40.0, 42.0])], "Val-E": [55.5]}, index=pd.Index(["RoBERTa"], name="model"))
    table = report.paper_vs_ours(paper, ours)
    assert list(table.columns) == [("Val", "paper"), ("Val", "ours"), ("Val-E", "paper"), ("Val-E", "ours")]
    assert table.loc["RoBERTa", ("Val", "paper")] == "62.6"
    assert table.loc["RoBERTa", ("Val", "ours")] == "41.0 ± 1.4"
    assert table.loc["Chance", ("Val", "ours")] == "n/a"
    assert table.loc["RoBERTa", ("Val-E", "paper")] == "n/a"


def test_claims_round_trip_through_a_notebook(tmp_path):
    log = report.ClaimLog("demo")
    log.check("c1", "X beats chance", "acc > 25", True, "acc 40.1")
    log.check("c2", "Y is hard", "acc < 30", False, "acc 55.0")
    log.check("c3", "Z", "needs test labels", None, "n/a")
    with pytest.raises(ValueError, match="recorded twice"):
        log.check("c1", "again", "", True, "")
    assert [c.verdict for c in log.claims] == ["holds", "does not hold", "not testable here"]
    assert "does not hold" in log._repr_html_()
    # What myst-nb's glue writes into the executed notebook, read back by the scorecard.
    nb = {"cells": [{"cell_type": "code", "outputs": [{
        "output_type": "display_data", "metadata": {"scrapbook": {"name": "demo_claims", "mime_prefix": ""}},
        "data": {"application/json": log._repr_json_(), "text/html": log._repr_html_()}}]}]}
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps(nb))
    assert report.claims_from_notebook(path) == log.claims


def _right(share: float, n: int = 400) -> np.ndarray:
    """Held-out correctness: the first ``share`` of ``n`` items right."""
    return (np.arange(n) < share * n).astype(float)


def test_a_row_learned_only_when_its_held_out_accuracy_beats_chance():
    assert learning.final_loss([3.0] * 90 + [1.0] * 10) == pytest.approx(1.0)  # the last tenth of the steps
    # memorised: the training loss falls from 2.7 to 0.4 (ReCoRD's ASReader), held-out accuracy at chance
    memorised = learning.check("ASReader", [[2.7] * 9 + [0.4]], k=4, correct=_right(0.25), heldout="dev")
    assert memorised.training_fell and not memorised.learned
    text = learning.warnings_text([memorised])
    assert "did not learn" in text and "on dev" in text and "fitted its training items" in text
    assert memorised.columns()["learned"] == "NO" and memorised.columns()["training loss"] == "2.700 → 0.400"
    # a flat training loss with a held-out accuracy clearly above chance: learned
    fine = learning.check("fine", [[1.386, 1.385]], k=4, correct=_right(0.45))
    assert fine.learned and learning.warnings_text([fine]) == ""
    # above chance by a point estimate only: the whole interval must clear it
    assert not learning.check("edge", [[1.5, 1.0]], k=4, correct=_right(0.28, 200)).learned
    # seeds are a level above items: two seeds, one at chance, one above, do not make a row learned
    split = learning.check("seeds", [[1.4, 1.0], [1.4, 1.0]], k=4, correct=np.vstack([_right(0.25), _right(0.6)]))
    assert split.accuracy.estimate == pytest.approx(42.5) and not split.learned
    # no held-out score: not shown to have learned, whatever the training loss did
    blind = learning.check("blind", [[1.4, 0.1]], k=4)
    assert not blind.learned and "no score on held-out items" in blind.warning()
    with pytest.raises(ValueError, match="no training losses"):
        learning.final_loss([])


def test_held_out_loss_below_ln_k_counts_as_learning():
    labels = np.zeros(300, dtype=int)
    sure = np.tile([2.0, 0.0, 0.0, 0.0], (300, 1))  # the gold option's logit 2 above the others
    assert learning.heldout_losses(sure, labels)[0, 0] == pytest.approx(math.log(1 + 3 * math.exp(-2)))
    row = learning.check("by loss", None, k=4, scores=sure, labels=labels)
    assert row.learned and row.heldout_loss.high < math.log(4) and row.accuracy is None
    flat = learning.check("flat", None, k=4, scores=np.zeros((300, 4)), labels=labels)
    assert not flat.learned and flat.heldout_loss.estimate == pytest.approx(math.log(4))
    assert "held-out loss" in flat.describe()


def test_a_score_on_fewer_than_six_independent_items_does_not_show_learning():
    assert learning.MIN_ITEMS == 6  # ½⁵ = 0.031 is above the intervals' one-sided 2.5 %, ½⁶ = 0.016 below
    # four items, all right: a percentile bootstrap gives [75, 75] above chance, but no sign test would
    four = learning.check("ASReader", [[1.4, 0.4]], k=4, correct=[1.0] * 4, heldout="dev")
    assert four.margin.low > 0 and four.too_few_items == 4 and not four.learned
    assert "scored on 4 independent items of dev, fewer than the 6" in four.warning()
    assert learning.check("six", None, k=4, correct=[1.0] * 6).learned
    # the count is of units with a score: unscored items and clustered subquestions do not add to it
    sure = np.array([[3.0, 0.0, 0.0, 0.0]] * 5 + [[np.nan] * 4] * 3)
    by_loss = learning.check("by loss", None, k=4, scores=sure, labels=[0] * 8)
    assert by_loss.loss_margin.high < 0 and by_loss.loss_margin.n == 5 and not by_loss.learned
    clustered = learning.check("subquestions", None, k=4, correct=[1.0] * 10, clusters=[i // 2 for i in range(10)])
    assert clustered.margin.n == 5 and not clustered.learned


def test_several_right_options_count_at_their_summed_probability_against_guessing_ln_k_over_g():
    # softmax (1/2, 1/4, 1/4) with options 0 and 1 right: −ln 3/4; four even options, one right: ln 4
    scores = np.array([[math.log(2), 0.0, 0.0, np.nan], [0.0, 0.0, 0.0, 0.0]])
    assert learning.heldout_losses(scores, [(0, 1), 2])[0] == pytest.approx([-math.log(0.75), math.log(4)])
    assert learning.guessing_losses(scores, [(0, 1), 2])[0] == pytest.approx([math.log(1.5), math.log(4)])
    # no right option (an empty set, a label below 0) or no score at all: no loss
    unscored = np.array([[0.0, 1.0, 2.0, 3.0], [np.nan] * 4])
    assert np.isnan(learning.heldout_losses(unscored, [(), 0])).all()
    assert np.isnan(learning.guessing_losses(scores, [-1, ()])).all()
    # even scores over 3 to 10 candidates with 1 or 2 right: exactly the loss of guessing, not learning
    n = np.arange(300) % 8 + 3
    even = np.where(np.arange(10)[None, :] < n[:, None], 0.0, -np.inf)
    golds = [(0,) if i % 2 else (0, 1) for i in range(300)]
    flat = learning.check("ASReader", [[2.3, 0.4]], k=10, scores=even, labels=golds)
    guessing = np.mean([math.log(k / len(g)) for k, g in zip(n, golds)])
    assert flat.heldout_loss.estimate == pytest.approx(guessing) and flat.guessing_loss == pytest.approx(guessing)
    assert not flat.learned and flat.loss_margin.estimate == pytest.approx(0, abs=1e-12)
    assert f"{guessing:.3f}" in flat.warning() and flat.columns()["held-out guessing loss"] == f"{guessing:.3f}"
    # the right candidates twice as likely as each other one: below guessing on every item, learned
    right = learning.gold_mask(golds, 10)
    assert right.sum() == 450 and right[:, 2:].sum() == 0
    assert learning.check("ranker", None, k=10, scores=even + np.where(right, math.log(2), 0.0), labels=golds).learned
    # accuracy and loss both at chance: the warning names both
    both = learning.check("both", None, k=4, correct=_right(0.25, 300), scores=np.zeros((300, 4)), labels=[0] * 300)
    assert "is not above chance (25.0%) as a whole interval, nor its loss there, 1.386" in both.warning()
    assert "below ln 4 = 1.386" in both.warning() and "held-out guessing loss" not in both.columns()


def test_chance_can_vary_by_item_and_prompted_models_are_gated_alike():
    # ReCoRD: each query's chance is 1 / its number of candidates
    p = np.r_[np.full(200, 0.1), np.full(200, 0.5)]
    at_chance = learning.check("ASReader", None, 10, correct=(np.arange(400) % 10 < 3).astype(float), chance=p)
    assert at_chance.chance_accuracy == pytest.approx(30.0) and not at_chance.learned
    lm = learning.prompted("SmolLM2", _right(0.247, 300), 4, task="the main questions")
    assert not lm.learned and lm.first is None and lm.columns()["training loss"] == "—"
    assert "the main questions" in lm.warning()


def test_varying_numbers_of_options_guess_at_the_mean_of_ln_k():
    k = learning.guessing_k([2, 8])  # guessing costs (ln 2 + ln 8) / 2 = ln 4
    assert k == pytest.approx(4) and learning.guessing_k([5, 5, 5]) == pytest.approx(5)
    varied = learning.check("ASReader", [[2.3, 2.29]], k=learning.guessing_k([9, 11]))
    assert "ln 9.95 = 2.298" in varied.warning() and "ln 9.95" in varied.columns()
    with pytest.raises(ValueError, match="at least one"):
        learning.guessing_k([])


def test_a_claim_resting_on_a_row_that_did_not_learn_is_model_at_chance(tmp_path):
    log = report.ClaimLog("reclor")
    # the training loss fell, the held-out accuracy is at chance: the claim is not judged
    stuck = learning.check("MiniLM (C, Q, A)", [[1.386, 0.2]], k=4, correct=_right(0.25), heldout="ReClor val")
    stuck = learning.with_full_profile({"row": stuck}, {"MiniLM (C, Q, A)": "3.2 GPU hours (3 jobs)"})["row"]
    fine = learning.check("MiniLM (A)", [[1.386, 1.0]], k=4, correct=_right(0.5))
    c = log.judge("easy-vs-hard", {"gap": 30.0}, "EASY 60%, HARD 30%", rests_on=[stuck, fine])
    assert c.holds is None and c.verdict == report.NOT_LEARNED == "model at chance"
    assert "MiniLM (C, Q, A): accuracy on ReClor val" in c.evidence and "MiniLM (A)" not in c.evidence
    assert "3.2 GPU hours" in c.evidence
    hard = Interval(30.0, 25.0, 35.0, 0.95, 280)  # its 90% interval lies within the paper's 30 ± 6.2
    assert log.judge("hard-near-chance", {"hard": hard}, "HARD 30%", rests_on=[fine]).verdict == "holds"


def test_csv_download_link_embeds_the_table():
    import base64

    frame = pd.DataFrame({"acc": [1.5]}, index=["m"])
    link = report.csv_download_link(frame, "t1")
    payload = link.split("base64,")[1].split('"')[0]
    assert base64.b64decode(payload).decode() == frame.to_csv()
    assert 'download="t1.csv"' in link


@pytest.mark.parametrize("paper", papers.PAPERS)
def test_every_paper_has_a_citation_and_well_formed_numbers(paper):
    cite = papers.citation(paper)
    assert cite.key and cite.title and cite.year > 2000
    seen = set()
    for n in papers.numbers(paper):
        assert n.paper == paper
        assert n.value is None or isinstance(n.value, (int, float))
        key = (n.table, n.row, n.column)
        assert key not in seen, f"{paper}: {key} listed twice"
        seen.add(key)


def test_lookup_errors_say_what_was_asked():
    with pytest.raises(KeyError, match="unknown paper 'nope'"):
        papers.numbers("nope")
    with pytest.raises(KeyError, match="no published number at Table 99"):
        papers.value("reclor", "Table 99", "x", "y")


def test_bibliography_has_every_paper():
    from rcstudy.settings import PROJECT_ROOT

    bib = (PROJECT_ROOT / "references.bib").read_text()
    for paper in papers.PAPERS:
        assert "{" + papers.citation(paper).key + "," in bib
