"""The optional step learning-rate schedule of the from-scratch training loop."""

import numpy as np
import pytest
import torch

from rcstudy.data.records import MCItem
from rcstudy.models.scratch import train_mc_module

N_FEATURES = 3


class OptionScorer(torch.nn.Module):
    """A linear score per option of precomputed features."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Linear(N_FEATURES, 1)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return self.w(feats).squeeze(-1)


def toy_items(n: int = 12) -> list[MCItem]:
    rng = np.random.default_rng(0)
    return [MCItem(f"toy-{i}", "context", "question", ("a", "b", "c", "d"), int(rng.integers(4))) for i in range(n)]


def features(items: list[MCItem]) -> dict[str, torch.Tensor]:
    """Option features that depend on the item and the option only (deterministic)."""
    rows = [[[(int(it.id.split("-")[1]) + 1) * (j + 1) % 5, float(j == it.label), 1.0] for j in range(4)] for it in items]
    return {"feats": torch.tensor(rows, dtype=torch.float32)}


def run(seed: int, **schedule) -> tuple[list[float], torch.Tensor]:
    torch.manual_seed(seed)
    module = OptionScorer()
    losses = train_mc_module(module, features, toy_items(), epochs=5, lr=0.1, batch_size=4, seed=seed, **schedule)
    return losses, module.w.weight.detach().clone()


def learning_rates(monkeypatch, **schedule) -> list[float]:
    """The learning rate in force at each training step, read from the optimiser the loop builds."""
    seen, optimisers = [], []

    class RecordingAdam(torch.optim.Adam):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            optimisers.append(self)

    def batcher(items):
        seen.append(optimisers[-1].param_groups[0]["lr"])
        return features(items)

    monkeypatch.setattr(torch.optim, "Adam", RecordingAdam)
    train_mc_module(OptionScorer(), batcher, toy_items(), epochs=5, lr=0.1, batch_size=4, seed=0, **schedule)
    return seen


def test_lr_halves_after_lr_step_epochs(monkeypatch):
    rates = learning_rates(monkeypatch, lr_step=2)
    per_epoch = [rates[e * 3:(e + 1) * 3] for e in range(5)]  # 12 items, batches of 4: 3 steps per epoch
    assert all(len(set(r)) == 1 for r in per_epoch)
    assert [r[0] for r in per_epoch] == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.025])


def test_custom_gamma(monkeypatch):
    rates = learning_rates(monkeypatch, lr_step=1, lr_gamma=0.1)
    assert rates[::3] == pytest.approx([0.1, 0.01, 0.001, 1e-4, 1e-5])


def test_no_schedule_keeps_lr_constant(monkeypatch):
    assert set(learning_rates(monkeypatch)) == {0.1}


def test_schedule_is_reproducible_and_changes_training():
    losses_a, weights_a = run(0, lr_step=2)
    losses_b, weights_b = run(0, lr_step=2)
    assert losses_a == losses_b
    assert torch.equal(weights_a, weights_b)
    losses_const, _ = run(0)
    assert losses_const[:6] == losses_a[:6]  # the first two epochs run at the same learning rate
    assert losses_const[6:] != losses_a[6:]
