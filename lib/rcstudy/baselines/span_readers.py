"""Extractive span readers: DocQA-lite (optionally with frozen contextual features) and a fine-tuned encoder.

Both read a passage and a question and score every passage token as an answer start and end.
Decoding is either *free* (the best span of at most ``max_answer_len`` tokens) or
*candidate-restricted* (the best of given mention spans, scored by start + end logit).

- :class:`DocQALite` follows Clark & Gardner (2018), single-paragraph: word + character-CNN
  embeddings, a shared BiGRU, trilinear bi-attention, a BiGRU, trilinear self-attention with a
  residual, then start and end heads. With ``feature_dim`` it takes ELMo-style features: the
  hidden layers of a frozen pretrained encoder, pooled to words, mixed with a learned scalar mix
  (γ·Σ softmax(w)_l h_l) and concatenated to the word embeddings.
- :func:`encoder_extractor` fine-tunes ``AutoModelForQuestionAnswering`` over sliding windows.

Everything works on :class:`SpanExample` (character spans), so it is dataset-agnostic.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..cache import cached, fingerprint
from ..data.records import SpanExample
from ..models import scratch
from ..models.loading import load_auto, load_tokenizer
from ..runtime import Runtime, seed_everything

#: PTB-like words: words with inner - or ', and single punctuation marks.
WORD = re.compile(r"\w+(?:[-']\w+)*|[^\w\s]")


def examples_fingerprint(examples: Sequence[SpanExample]) -> str:
    return fingerprint([asdict(e) for e in examples])


# --------------------------------------------------------------------------- tokens and spans

def word_offsets(text: str) -> list[tuple[int, int]]:
    """Character (start, end) of every word of ``text``."""
    return [m.span() for m in WORD.finditer(text)]


def char_to_token_span(offsets: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """The first and last token overlapping characters [start, end), or None if no token does."""
    inside = [k for k, (s, e) in enumerate(offsets) if s < end and e > start]
    return (inside[0], inside[-1]) if inside else None


def token_to_char_span(offsets: Sequence[tuple[int, int]], i: int, j: int) -> tuple[int, int]:
    return offsets[i][0], offsets[j][1]


# --------------------------------------------------------------------------- decoding

def best_span(start_logits: np.ndarray, end_logits: np.ndarray, max_answer_len: int) -> tuple[int, int, float]:
    """The (start, end) maximising start + end logit with start <= end < start + max_answer_len."""
    s, e = np.asarray(start_logits, float), np.asarray(end_logits, float)
    n = len(s)
    k = np.arange(n)
    score = s[:, None] + e[None, :]
    allowed = (k[None, :] >= k[:, None]) & (k[None, :] - k[:, None] < max_answer_len)
    score = np.where(allowed, score, -np.inf)
    i, j = np.unravel_index(int(np.argmax(score)), score.shape)
    return int(i), int(j), float(score[i, j])


def best_mention(start_logits: np.ndarray, end_logits: np.ndarray,
                 spans: Sequence[tuple[int, int] | None]) -> tuple[int, float]:
    """Index and score of the best token span (start + end logit) among ``spans`` (None: not scorable)."""
    scores = [-np.inf if sp is None else float(start_logits[sp[0]] + end_logits[sp[1]]) for sp in spans]
    k = int(np.argmax(scores))
    return k, scores[k]


# --------------------------------------------------------------------------- DocQA-lite

class VariationalDropout(nn.Module):
    """Dropout with one mask per sequence, shared over time steps (DocQA's variational dropout)."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        mask = torch.bernoulli(x.new_full((x.shape[0], 1, x.shape[2]), 1 - self.p)) / (1 - self.p)
        return x * mask


class BiGRU(nn.Module):
    def __init__(self, d_in: int, hidden: int):
        super().__init__()
        self.rnn = nn.GRU(d_in, hidden, batch_first=True, bidirectional=True)

    def forward(self, x, mask):
        lengths = mask.sum(1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        return nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0]


class Trilinear(nn.Module):
    """Similarity w·[a; b; a⊙b] for every pair of positions: (B, La, d), (B, Lb, d) -> (B, La, Lb)."""

    def __init__(self, d: int):
        super().__init__()
        self.wa, self.wb = nn.Linear(d, 1), nn.Linear(d, 1, bias=False)
        self.wab = nn.Parameter(torch.randn(d) / d ** 0.5)

    def forward(self, a, b):
        return self.wa(a) + self.wb(b).transpose(1, 2) + (a * self.wab) @ b.transpose(1, 2)


class ScalarMix(nn.Module):
    """ELMo's γ·Σ_l softmax(w)_l h_l over stacked layers (..., n_layers, d)."""

    def __init__(self, n_layers: int):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(n_layers))
        self.gamma = nn.Parameter(torch.ones(()))

    def forward(self, layers):
        return self.gamma * (layers * torch.softmax(self.w, 0)[:, None]).sum(-2)


class DocQALite(nn.Module):
    """Clark & Gardner (2018), single paragraph, at configurable sizes (see the module docstring)."""

    def __init__(self, vocab_size: int, n_chars: int, *, emb: int, char_emb: int, char_filters: int, hidden: int,
                 dropout: float, feature_layers: int = 0, feature_dim: int = 0):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=0)
        self.char_embed = nn.Embedding(n_chars, char_emb, padding_idx=0)
        self.char_cnn = nn.Conv1d(char_emb, char_filters, kernel_size=5, padding=2)
        self.mix = ScalarMix(feature_layers) if feature_dim else None
        d_in = emb + char_filters + feature_dim
        H2 = 2 * hidden
        self.drop = VariationalDropout(dropout)
        self.encoder = BiGRU(d_in, hidden)
        self.bi_sim = Trilinear(H2)
        self.bi_proj = nn.Linear(4 * H2, H2)
        self.model_rnn = BiGRU(H2, hidden)
        self.self_sim = Trilinear(H2)
        self.self_proj = nn.Linear(3 * H2, H2)
        self.start_rnn = BiGRU(H2, hidden)
        self.start = nn.Linear(H2, 1)
        self.end_rnn = BiGRU(2 * H2, hidden)
        self.end = nn.Linear(H2, 1)

    def _embed(self, words, chars, mask, feats):
        B, L, W = chars.shape
        c = self.char_embed(chars.view(B * L, W)).transpose(1, 2)
        c = self.char_cnn(c).max(-1).values.view(B, L, -1)
        x = [self.embed(words), c]
        if self.mix is not None:
            x.append(self.mix(feats))
        return self.encoder(self.drop(torch.cat(x, -1)), mask)

    def forward(self, ctx, ctx_chars, ctx_mask, q, q_chars, q_mask, ctx_feats=None, q_feats=None):
        c = self._embed(ctx, ctx_chars, ctx_mask, ctx_feats)
        qq = self._embed(q, q_chars, q_mask, q_feats)
        sim = self.bi_sim(self.drop(c), self.drop(qq)).masked_fill(~q_mask[:, None, :], -1e30)  # (B, Lc, Lq)
        a = torch.softmax(sim, -1) @ qq
        q2c_w = torch.softmax(sim.max(-1).values.masked_fill(~ctx_mask, -1e30), -1)  # (B, Lc)
        q2c = (q2c_w.unsqueeze(-1) * c).sum(1, keepdim=True)
        h = F.relu(self.bi_proj(torch.cat([c, a, c * a, q2c * c], -1)))
        m = self.model_rnn(self.drop(h), ctx_mask)
        Lc = m.shape[1]
        self_s = self.self_sim(self.drop(m), self.drop(m))
        self_s = self_s.masked_fill(~ctx_mask[:, None, :] | torch.eye(Lc, dtype=torch.bool, device=m.device), -1e30)
        sa = torch.softmax(self_s, -1) @ m
        h = h + F.relu(self.self_proj(torch.cat([m, sa, m * sa], -1)))
        s_h = self.start_rnn(self.drop(h), ctx_mask)
        e_h = self.end_rnn(self.drop(torch.cat([h, s_h], -1)), ctx_mask)
        start = self.start(s_h).squeeze(-1).masked_fill(~ctx_mask, -1e30)
        end = self.end(e_h).squeeze(-1).masked_fill(~ctx_mask, -1e30)
        return start, end


@dataclass(frozen=True)
class DocQAConfig:
    emb: int = 64
    char_emb: int = 20
    char_filters: int = 100
    hidden: int = 64
    dropout: float = 0.2
    vocab_size: int = 20000
    epochs: int = 5
    lr: float = 1e-3
    batch_size: int = 16
    max_answer_len: int = 15
    max_word_len: int = 16
    features: str | None = None  # a pretrained encoder whose frozen layers are mixed in ("with ELMo")
    feature_layers: tuple[int, ...] | None = None  # its hidden layers to mix (None: all)


class _Encoded:
    """Word ids, character ids and (optionally) frozen features of one text."""

    def __init__(self, text: str, vocab: scratch.Vocab, chars: dict[str, int], max_word_len: int):
        self.offsets = word_offsets(text)
        toks = [text[s:e] for s, e in self.offsets] or ["."]
        self.words = toks
        self.ids = [vocab.stoi.get(w.lower(), 1) for w in toks]
        self.chars = [[chars.get(ch, 1) for ch in w[:max_word_len]] for w in toks]
        self.feats: torch.Tensor | None = None


def frozen_word_features(model_name: str, texts: Sequence[list[str]], layers: tuple[int, ...] | None,
                         rt: Runtime, batch_size: int = 16) -> list[torch.Tensor]:
    """Per text, (n_words, n_layers, d) float16: the encoder's hidden layers mean-pooled over each word's subwords.

    Words beyond the encoder's maximum length get zeros.
    """
    from transformers import AutoModel

    tok = load_tokenizer(model_name)
    model = load_auto(AutoModel, model_name).to(rt.device).eval()
    max_len = min(getattr(tok, "model_max_length", 512), 512)
    out: list[torch.Tensor] = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            chunk = list(texts[start:start + batch_size])
            enc = tok(chunk, is_split_into_words=True, truncation=True, max_length=max_len,
                      padding=True, return_tensors="pt")
            with rt.autocast():
                hs = model(**{k: v.to(rt.device) for k, v in enc.items()}, output_hidden_states=True).hidden_states
            stack = torch.stack([hs[l] for l in (layers if layers is not None else range(len(hs)))], 2).float().cpu()
            for b, words in enumerate(chunk):
                wid = torch.tensor([-1 if w is None else w for w in enc.word_ids(b)])
                keep = wid >= 0
                pooled = torch.zeros(len(words), stack.shape[2], stack.shape[3])
                count = torch.zeros(len(words))
                pooled.index_add_(0, wid[keep], stack[b, keep])
                count.index_add_(0, wid[keep], torch.ones(int(keep.sum())))
                out.append((pooled / count.clamp(min=1)[:, None, None]).half())
    return out


def _pad3(rows: Sequence[Sequence[Sequence[int]]]) -> torch.Tensor:
    L = max(len(r) for r in rows)
    W = max(len(w) for r in rows for w in r)
    out = torch.zeros((len(rows), L, W), dtype=torch.long)
    for b, r in enumerate(rows):
        for i, w in enumerate(r):
            out[b, i, :len(w)] = torch.tensor(w)
    return out


def _pad_feats(feats: Sequence[torch.Tensor], length: int) -> torch.Tensor:
    out = torch.zeros((len(feats), length, *feats[0].shape[1:]))
    for b, f in enumerate(feats):
        out[b, :len(f)] = f.float()
    return out


def _batch(pairs: Sequence[tuple[_Encoded, _Encoded]]) -> dict:
    ctx, ctx_mask = scratch.pad([c.ids for c, _ in pairs])
    q, q_mask = scratch.pad([qq.ids for _, qq in pairs])
    batch = {"ctx": ctx, "ctx_chars": _pad3([c.chars for c, _ in pairs]), "ctx_mask": ctx_mask,
             "q": q, "q_chars": _pad3([qq.chars for _, qq in pairs]), "q_mask": q_mask}
    if pairs[0][0].feats is not None:
        batch["ctx_feats"] = _pad_feats([c.feats for c, _ in pairs], ctx.shape[1])
        batch["q_feats"] = _pad_feats([qq.feats for _, qq in pairs], q.shape[1])
    return batch


def _encode_all(cfg: DocQAConfig, train: Sequence[SpanExample], examples: Sequence[SpanExample],
                rt: Runtime) -> tuple[dict[str, tuple[_Encoded, _Encoded]], int, int, int, int]:
    """Encode every text once (vocabulary and characters from the training examples).

    Returns the encodings by example id, the vocabulary and character-set sizes, and the number
    and width of the frozen feature layers (0, 0 without features).
    """
    counts = Counter(w.lower() for e in train for t in (e.context, e.question) for w in WORD.findall(t))
    vocab = scratch.Vocab([scratch.PAD, scratch.UNK] + sorted(counts, key=lambda w: (-counts[w], w))[:cfg.vocab_size])
    char_counts = Counter(ch for e in train for ch in e.context + e.question)
    chars = {ch: k + 2 for k, ch in enumerate(sorted(char_counts))}  # 0 pad, 1 unknown
    texts: dict[str, _Encoded] = {}
    for e in [*train, *examples]:
        for t in (e.context, e.question):
            if t not in texts:
                texts[t] = _Encoded(t, vocab, chars, cfg.max_word_len)
    n_layers = 0
    if cfg.features:
        keys = list(texts)
        for t, f in zip(keys, frozen_word_features(cfg.features, [texts[t].words for t in keys],
                                                   cfg.feature_layers, rt)):
            texts[t].feats = f
        n_layers = texts[keys[0]].feats.shape[1]
    enc = {e.id: (texts[e.context], texts[e.question]) for e in [*train, *examples]}
    feat_dim = texts[train[0].context].feats.shape[2] if cfg.features else 0
    return enc, len(vocab), len(chars) + 2, n_layers, feat_dim


def gold_token_span(example: SpanExample, offsets) -> tuple[int, int] | None:
    """The first gold span that maps onto the passage's tokens (the training target)."""
    for s, e in example.gold:
        span = char_to_token_span(offsets, s, e)
        if span is not None:
            return span
    return None


def train_docqa(cfg: DocQAConfig, train: Sequence[SpanExample], examples: Sequence[SpanExample], seed: int,
                rt: Runtime) -> tuple[list[float], list[np.ndarray], list[np.ndarray]]:
    """Train DocQA-lite on ``train`` (loss = CE(start) + CE(end) of the first gold span).

    Returns the per-step losses and, for each of ``examples``, its start and end logits.
    """
    enc, n_vocab, n_chars, n_layers, feat_dim = _encode_all(cfg, train, examples, rt)
    targets = [(e, gold_token_span(e, enc[e.id][0].offsets)) for e in train]
    targets = [(e, t) for e, t in targets if t is not None]
    seed_everything(seed)
    model = DocQALite(n_vocab, n_chars, emb=cfg.emb, char_emb=cfg.char_emb, char_filters=cfg.char_filters,
                      hidden=cfg.hidden, dropout=cfg.dropout, feature_layers=n_layers, feature_dim=feat_dim)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    rng = np.random.default_rng(seed)
    losses = []
    model.train()
    for _ in range(cfg.epochs):
        order = rng.permutation(len(targets))
        for start in range(0, len(targets), cfg.batch_size):
            chunk = [targets[k] for k in order[start:start + cfg.batch_size]]
            s_log, e_log = model(**_batch([enc[e.id] for e, _ in chunk]))
            s_t = torch.tensor([t[0] for _, t in chunk])
            e_t = torch.tensor([t[1] for _, t in chunk])
            loss = F.cross_entropy(s_log, s_t) + F.cross_entropy(e_log, e_t)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            losses.append(loss.item())
    model.eval()
    starts, ends = [], []
    with torch.inference_mode():
        for start in range(0, len(examples), 32):
            chunk = examples[start:start + 32]
            s_log, e_log = model(**_batch([enc[e.id] for e in chunk]))
            for b, e in enumerate(chunk):
                n = len(enc[e.id][0].ids)
                starts.append(s_log[b, :n].numpy())
                ends.append(e_log[b, :n].numpy())
    return losses, starts, ends


@dataclass(frozen=True)
class SpanPredictions:
    """Per example, the free-span answer and the candidate-restricted answer (None without mentions)."""

    free: dict[str, str]
    candidate: dict[str, str | None]
    losses: list[float]


def decode(examples: Sequence[SpanExample], starts, ends, offsets, max_answer_len: int) -> tuple[dict, dict]:
    """Free and candidate-restricted answers from token logits; ``offsets[k]`` maps example k's tokens to characters."""
    free, cand = {}, {}
    for e, s, en, off in zip(examples, starts, ends, offsets):
        i, j, _ = best_span(s, en, max_answer_len)
        a, b = token_to_char_span(off, i, j)
        free[e.id] = e.context[a:b]
        spans = [char_to_token_span(off, ms, me) for ms, me in e.mentions]
        if e.mentions and any(sp is not None for sp in spans):
            k, _ = best_mention(s, en, spans)
            cand[e.id] = e.context[e.mentions[k][0]:e.mentions[k][1]]
        else:
            cand[e.id] = None
    return free, cand


def docqa(cfg: DocQAConfig, train: Sequence[SpanExample], examples: Sequence[SpanExample], seed: int,
          rt: Runtime) -> SpanPredictions:
    """DocQA-lite trained from scratch with one seed; free and candidate-restricted answers (cached)."""
    def compute():
        losses, starts, ends = train_docqa(cfg, train, examples, seed, rt)
        free, cand = decode(examples, starts, ends, [word_offsets(e.context) for e in examples], cfg.max_answer_len)
        return SpanPredictions(free, cand, losses)

    key = {"cfg": asdict(cfg), "seed": seed, "train": examples_fingerprint(train),
           "eval": examples_fingerprint(examples)}
    return cached("span_docqa", key, compute)


# --------------------------------------------------------------------------- fine-tuned encoder (extension)

@dataclass(frozen=True)
class ExtractorConfig:
    model: str = "minilm-l6"
    max_length: int = 384
    stride: int = 128
    epochs: float = 2
    lr: float = 5e-5
    batch_size: int = 8
    warmup: float = 0.1
    max_answer_len: int = 30  # subword tokens
    question_placeholder: str = "X"


def _windows(tok, examples: Sequence[SpanExample], cfg: ExtractorConfig) -> dict:
    """Question + passage windows with overflow (stride), their offsets and the example each comes from."""
    longest = max((len(tok(e.question, add_special_tokens=False)["input_ids"]) for e in examples), default=0)
    room = cfg.max_length - longest - tok.num_special_tokens_to_add(pair=True)
    if cfg.stride >= room:  # the fast tokenizer would panic with a message that names neither
        raise ValueError(f"the span extractor's stride ({cfg.stride} tokens) must be below the room its "
                         f"{cfg.max_length}-token windows leave for the passage after the longest question "
                         f"({room} tokens): lower the stride or lengthen the windows")
    enc = tok([e.question for e in examples], [e.context for e in examples], truncation="only_second",
              max_length=cfg.max_length, stride=cfg.stride, return_overflowing_tokens=True,
              return_offsets_mapping=True)
    # Context tokens only: (start, end) character offsets, None elsewhere.
    offsets = [[o if sid == 1 else None for o, sid in zip(off, enc.sequence_ids(w))]
               for w, off in enumerate(enc["offset_mapping"])]
    return {"input_ids": enc["input_ids"], "offsets": offsets, "example": list(enc["overflow_to_sample_mapping"])}


def _window_target(offsets, spans) -> tuple[int, int]:
    """Token positions of the first gold span wholly inside the window, or (0, 0) if none is."""
    ctx = [k for k, o in enumerate(offsets) if o is not None]
    for s, e in spans:
        if ctx and offsets[ctx[0]][0] <= s and e <= offsets[ctx[-1]][1]:
            i = next(k for k in ctx if offsets[k][1] > s)
            j = max(k for k in ctx if offsets[k][0] < e)
            return i, j
    return 0, 0


def _collate_ids(rows: Sequence[Sequence[int]], pad_id: int) -> dict[str, torch.Tensor]:
    ids, mask = scratch.pad(rows)
    return {"input_ids": ids.masked_fill(~mask, pad_id), "attention_mask": mask.long()}


def _training_windows(tok, train: Sequence[SpanExample], cfg: ExtractorConfig) -> list[tuple[list[int], tuple[int, int]]]:
    """The training windows that hold a gold span, with its token positions (few training queries:
    no "no answer" windows)."""
    tr = _windows(tok, train, cfg)
    targets = [(ids, _window_target(off, train[k].gold))
               for ids, off, k in zip(tr["input_ids"], tr["offsets"], tr["example"])]
    return [(ids, t) for ids, t in targets if t != (0, 0)]


def _fine_tune_extractor(model, tok, targets: Sequence[tuple[list[int], tuple[int, int]]], cfg: ExtractorConfig,
                         seed: int, rt: Runtime) -> list[float]:
    """Fine-tune on (window ids, (start, end)) targets for ``cfg.epochs`` epochs, each a fresh
    permutation drawn with ``seed``, under a linear schedule with warm-up; the per-step losses."""
    from transformers import get_linear_schedule_with_warmup

    n = len(targets)
    steps = max(1, int(round(cfg.epochs * np.ceil(n / cfg.batch_size))))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(opt, int(cfg.warmup * steps), steps)
    rng = np.random.default_rng(seed)
    losses = []
    model.train()
    order: list[int] = []
    for _ in range(steps):
        if len(order) < cfg.batch_size:
            order += rng.permutation(n).tolist()
        idx, order = order[:cfg.batch_size], order[cfg.batch_size:]
        batch = _collate_ids([targets[k][0] for k in idx], tok.pad_token_id)
        with rt.autocast():
            out = model(**{k: v.to(rt.device) for k, v in batch.items()},
                        start_positions=torch.tensor([targets[k][1][0] for k in idx], device=rt.device),
                        end_positions=torch.tensor([targets[k][1][1] for k in idx], device=rt.device))
        opt.zero_grad()
        out.loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        schedule.step()
        losses.append(out.loss.item())
    model.eval()
    return losses


def _window_answers(example: SpanExample, offsets, start_logits: torch.Tensor, end_logits: torch.Tensor,
                    max_answer_len: int) -> tuple[tuple[float, str], tuple[float, str] | None]:
    """One window's best free span and its best mention, each as (score, text); the mention is
    None when none lies wholly inside the window."""
    ctx = [t for t, o in enumerate(offsets) if o is not None]
    s = start_logits[ctx].float().cpu().numpy()
    en = end_logits[ctx].float().cpu().numpy()
    i, j, score = best_span(s, en, max_answer_len)
    free = (score, example.context[offsets[ctx[i]][0]:offsets[ctx[j]][1]])
    lo, hi = offsets[ctx[0]][0], offsets[ctx[-1]][1]
    inside = [(ms, me) for ms, me in example.mentions if lo <= ms and me <= hi]
    if not inside:
        return free, None
    ctx_off = [offsets[t] for t in ctx]
    m, m_score = best_mention(s, en, [char_to_token_span(ctx_off, ms, me) for ms, me in inside])
    return free, (m_score, example.context[inside[m][0]:inside[m][1]])


def _extract_answers(model, tok, examples: Sequence[SpanExample], cfg: ExtractorConfig,
                     rt: Runtime) -> tuple[dict[str, str], dict[str, str | None]]:
    """Per example id, the best free answer and the best mention over all the example's windows
    ("" and None when no window scores one)."""
    ev = _windows(tok, examples, cfg)
    best_free: dict[int, tuple[float, str]] = {}
    best_cand: dict[int, tuple[float, str]] = {}
    with torch.inference_mode():
        for start in range(0, len(ev["input_ids"]), 32):
            batch = _collate_ids(ev["input_ids"][start:start + 32], tok.pad_token_id)
            with rt.autocast():
                out = model(**{k: v.to(rt.device) for k, v in batch.items()})
            for b in range(len(batch["input_ids"])):
                k, off = ev["example"][start + b], ev["offsets"][start + b]
                span, mention = _window_answers(examples[k], off, out.start_logits[b], out.end_logits[b],
                                                cfg.max_answer_len)
                if span[0] > best_free.get(k, (-np.inf,))[0]:
                    best_free[k] = span
                if mention is not None and mention[0] > best_cand.get(k, (-np.inf,))[0]:
                    best_cand[k] = mention
    free = {e.id: best_free.get(k, (0, ""))[1] for k, e in enumerate(examples)}
    cand = {e.id: best_cand[k][1] if k in best_cand else None for k, e in enumerate(examples)}
    return free, cand


def encoder_extractor(cfg: ExtractorConfig, train: Sequence[SpanExample], examples: Sequence[SpanExample],
                      seed: int, rt: Runtime) -> SpanPredictions:
    """Fine-tune ``AutoModelForQuestionAnswering`` (one seed, cached); free and candidate-restricted answers.

    Per example, the free answer is the best span (start + end logit, at most ``max_answer_len``
    subwords) over all windows; the candidate-restricted answer is the mention with the best
    start + end logit in any window that holds it whole.
    """
    def compute():
        from transformers import AutoModelForQuestionAnswering

        seed_everything(seed)
        tok = load_tokenizer(cfg.model)
        model = load_auto(AutoModelForQuestionAnswering, cfg.model, seed).to(rt.device)
        losses = _fine_tune_extractor(model, tok, _training_windows(tok, train, cfg), cfg, seed, rt)
        free, cand = _extract_answers(model, tok, examples, cfg, rt)
        return SpanPredictions(free, cand, losses)

    key = {"cfg": asdict(cfg), "seed": seed, "train": examples_fingerprint(train),
           "eval": examples_fingerprint(examples)}
    return cached("span_extractor", key, compute)
