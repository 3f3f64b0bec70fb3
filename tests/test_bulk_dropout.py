"""CPU dropout from bulk random bits: torch's dropout distribution, the attention SDPA computes,
and a model left as it was."""

import pytest
import torch
import torch.nn.functional as F

from rcstudy.data import MCItem
from rcstudy.models import bulk_dropout as bd
from rcstudy.models import mc
from rcstudy.models.loading import load_multiple_choice, load_tokenizer

CPU = torch.device("cpu")


def _bits(seed: int = 0):
    return bd.bulk_dropout(torch.nn.Module(), CPU, seed)


def test_masks_keep_one_minus_p_and_follow_the_seed():
    with _bits(3):
        first = bd.keep_mask((1000, 1000), 0.1)
        second = bd.keep_mask((1000, 1000), 0.1)
    with _bits(3):
        again = bd.keep_mask((1000, 1000), 0.1)
    assert first.dtype == torch.bool and first.shape == (1000, 1000)
    assert abs(first.float().mean().item() - 0.9) < 0.002  # sd of the mean: 3e-4
    assert torch.equal(first, again) and not torch.equal(first, second)
    with _bits(0):
        assert abs(bd.keep_mask((999, 1001), 0.5).float().mean().item() - 0.5) < 0.002  # an odd count


def test_masks_need_the_context():
    with pytest.raises(RuntimeError, match="inside bulk_dropout"):
        bd.keep_mask((4,), 0.1)


def test_drop_scales_what_it_keeps_as_torch_does():
    x = torch.randn(200, 300, dtype=torch.float64, requires_grad=True)
    with _bits(1):
        y = bd.drop(x, 0.25)
    kept = y != 0
    assert abs(kept.double().mean().item() - 0.75) < 0.01
    torch.testing.assert_close(y[kept], x[kept] / 0.75)
    y.sum().backward()
    torch.testing.assert_close(x.grad, kept.double() / 0.75)
    with _bits(1):
        assert bd.drop(x, 0.25, training=False) is x and bd.drop(x, 0.0) is x
        assert not bd.drop(x, 1.0).any()
    torch.manual_seed(0)  # torch's own dropout, for the same moments
    reference = F.dropout(torch.ones(1000, 1000), 0.25)
    with _bits(0):
        ours = bd.drop(torch.ones(1000, 1000), 0.25)
    assert abs(ours.mean().item() - reference.mean().item()) < 0.01
    assert set(ours.unique().tolist()) == set(reference.unique().tolist())


def _batch():
    tok = load_tokenizer("tiny-bert")
    items = [MCItem("q0", "a short context", "which?", ("yes", "no", "maybe so", "never"), 0),
             MCItem("q1", "a much longer context " * 8, "which one follows?", ("a", "b", "c", "d"), 1)]
    return mc.collate(mc.encode_items(tok, items, "CQA", 64), tok.pad_token_id, padding_side=tok.padding_side)


def _logits(model, batch):
    inputs = {k: v for k, v in batch.items() if k != "option_mask"}
    return model(**inputs).logits


def test_attention_computes_what_sdpa_computes_and_the_model_is_restored():
    model = load_multiple_choice("tiny-bert", seed=0).eval()
    batch = _batch()
    assert batch["attention_mask"].eq(0).any()  # padded: the mask matters
    before = _logits(model, batch)
    attention = model.config._attn_implementation
    with bd.bulk_dropout(model, CPU, seed=0):
        assert model.config._attn_implementation == bd.ATTENTION
        assert any(isinstance(m, bd.BulkDropout) for m in model.modules())
        inside = _logits(model, batch)
    torch.testing.assert_close(inside, before, rtol=1e-5, atol=1e-5)
    assert model.config._attn_implementation == attention
    assert not any(isinstance(m, bd.BulkDropout) for m in model.modules())


def test_training_gradients_match_sdpa_without_dropout():
    torch.manual_seed(0)
    model = load_multiple_choice("tiny-bert", seed=0).train()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    batch = _batch()

    def grads():
        model.zero_grad()
        _logits(model, batch).logsumexp(-1).sum().backward()
        return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    plain = grads()
    with bd.bulk_dropout(model, CPU, seed=0):
        ours = grads()
    assert plain.keys() == ours.keys()
    for name in plain:
        torch.testing.assert_close(ours[name], plain[name], rtol=1e-4, atol=1e-6, msg=name)


def test_the_model_is_restored_after_an_error_and_untouched_off_the_cpu():
    model = load_multiple_choice("tiny-bert", seed=0)
    with pytest.raises(ValueError), bd.bulk_dropout(model, CPU, seed=0):
        raise ValueError("boom")
    assert model.config._attn_implementation != bd.ATTENTION
    assert not any(isinstance(m, bd.BulkDropout) for m in model.modules())
    with bd.bulk_dropout(model, torch.device("cuda"), seed=0):  # nothing runs on it: only the swap is checked
        assert not any(isinstance(m, bd.BulkDropout) for m in model.modules())


def test_finetuning_on_a_cpu_draws_its_masks_in_bulk(monkeypatch):
    from rcstudy import runtime

    rt = runtime.setup("cpu", threads=1, precision="fp32")
    calls = []
    monkeypatch.setattr(bd, "keep_mask", lambda shape, p, real=bd.keep_mask: calls.append(p) or real(shape, p))
    items = [MCItem(f"q{i}", f"context {i}", "which?", ("a", "b", "c", "d"), i % 4) for i in range(4)]
    cfg = mc.MCConfig(model="tiny-bert", fields="CQA", epochs=1, batch_size=2, seed=0)
    first = mc.finetune(items, cfg, rt)
    assert calls and not any(isinstance(m, bd.BulkDropout) for m in first.model.modules())
    assert mc.finetune(items, cfg, rt).losses == first.losses  # reproducible for a fixed seed
