"""The ONNX graph of a BERT sentence encoder (all-MiniLM-L6-v2), built from its safetensors weights.

Building the graph ourselves (instead of ``torch.onnx.export``) means neither building nor running
needs torch: only numpy and the ``onnx`` package's helper API. The graph computes what
sentence-transformers computes for this model: embeddings (word + position + token type 0) and
LayerNorm, N encoder layers (multi-head self-attention with the padding mask, GELU(erf) feed-
forward, post-LayerNorm residuals), mean pooling over the attention mask and L2 normalisation.

Two layer variants: ``fused`` uses ONNX Runtime's contrib kernels (Attention, SkipLayerNormalization,
BiasGelu: what ORT's transformer optimiser would produce), ``plain`` only standard ONNX ops and
leaves fusion to the session's optimiser. ``reference_forward`` is the same network in numpy
(float64): the builder stores its vector for a probe text so a loaded graph can be checked
against it without torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

BUILDER_VERSION = "1"  # part of the graph cache key: bump when the graph changes
OPSET = 17  # LayerNormalization is standard from 17
MS = "com.microsoft"
OUTPUT = "sentence_embedding"


class GraphBuildError(RuntimeError):
    """The weights or config do not describe a model this builder can reproduce."""


@dataclass(frozen=True)
class BertConfig:
    hidden: int
    heads: int
    layers: int
    intermediate: int
    eps: float
    max_positions: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "BertConfig":
        if data.get("model_type", "bert") != "bert" or data.get("hidden_act", "gelu") != "gelu":
            raise GraphBuildError("only BERT models with exact (erf) GELU are supported")
        if data.get("position_embedding_type", "absolute") != "absolute":
            raise GraphBuildError("only absolute position embeddings are supported")
        cfg = cls(int(data["hidden_size"]), int(data["num_attention_heads"]), int(data["num_hidden_layers"]),
                  int(data["intermediate_size"]), float(data.get("layer_norm_eps", 1e-12)),
                  int(data.get("max_position_embeddings", 512)))
        if cfg.hidden % cfg.heads:
            raise GraphBuildError("hidden size is not a multiple of the head count")
        return cfg


class _Weights:
    """Tensor lookup tolerant of a ``bert.`` prefix (BertModel vs BertFor... checkpoints)."""

    def __init__(self, tensors: Mapping[str, np.ndarray]) -> None:
        self._t = {k.removeprefix("bert."): v for k, v in tensors.items()}

    def __call__(self, name: str) -> np.ndarray:
        try:
            return np.asarray(self._t[name], dtype=np.float32)
        except KeyError:
            raise GraphBuildError(f"weights have no tensor '{name}'") from None

    def layer(self, i: int, name: str) -> np.ndarray:
        return self(f"encoder.layer.{i}.{name}")


class _Builder:
    def __init__(self) -> None:
        from onnx import helper, numpy_helper  # deferred: onnx is needed only to build the graph, once

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], domain: str = "", **attrs: Any) -> str:
        self._n += 1
        out = f"{op_type.lower()}_{self._n}"
        self.nodes.append(self.helper.make_node(op_type, inputs, [out], name=out, domain=domain or None, **attrs))
        return out


def build_model(tensors: Mapping[str, np.ndarray], cfg: BertConfig, *, fused: bool = True) -> Any:
    """The encoder as an ``onnx.ModelProto``: inputs ``input_ids``/``attention_mask`` (int64,
    [batch, seq]), output ``sentence_embedding`` (float32, [batch, hidden], unit length)."""
    from onnx import TensorProto, helper  # deferred: see _Builder

    w, b = _Weights(tensors), _Builder()
    x = _embeddings(b, w, cfg)
    mask_f = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    if fused:
        mask = b.op("Cast", ["attention_mask"], to=TensorProto.INT32)
    else:
        mask = _additive_mask(b, mask_f, cfg)
    for i in range(cfg.layers):
        layer = _LayerWeights.of(w, i)
        x = _fused_layer(b, x, layer, f"l{i}_", mask, cfg) if fused else _plain_layer(b, x, layer, i, mask, cfg)
    _mean_pool(b, x, mask_f)

    graph = helper.make_graph(
        b.nodes, "sentence_encoder",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in ("input_ids", "attention_mask")],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", cfg.hidden])],
        initializer=b.inits,
    )
    opsets = [helper.make_opsetid("", OPSET)] + ([helper.make_opsetid(MS, 1)] if fused else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="spar-desktop")
    model.ir_version = 8  # the oldest IR that carries opset 17: loads in any recent runtime
    return model


def _embeddings(b: _Builder, w: _Weights, cfg: BertConfig) -> str:
    """Word + position embeddings, layer-normalised. Token type is always 0 for single sentences,
    so its row is folded into the word table (one Gather and one Add fewer per batch)."""
    word = w("embeddings.word_embeddings.weight") + w("embeddings.token_type_embeddings.weight")[0]
    b.const("word_emb", word)
    b.const("pos_emb", w("embeddings.position_embeddings.weight"))
    for name, value in (("i0", [0]), ("i1", [1])):
        b.const(name, np.array(value, dtype=np.int64))
    tokens = b.op("Gather", ["word_emb", "input_ids"])
    seq_len = b.op("Slice", [b.op("Shape", ["input_ids"]), "i1", b.const("i2", np.array([2], np.int64))])
    positions = b.op("Slice", ["pos_emb", "i0", seq_len, "i0"])
    return b.op("LayerNormalization", [b.op("Add", [tokens, positions]),
                                       b.const("emb_ln_g", w("embeddings.LayerNorm.weight")),
                                       b.const("emb_ln_b", w("embeddings.LayerNorm.bias"))], axis=-1, epsilon=cfg.eps)


def _additive_mask(b: _Builder, mask_f: str, cfg: BertConfig) -> str:
    """The unfused graph's mask, [batch, 1, 1, seq]: 0 where attended, -10000 on padding (as BERT);
    also the constants its layers share."""
    head_dim = cfg.hidden // cfg.heads
    b.const("axes_12", np.array([1, 2], np.int64))
    b.const("one", np.array(1.0, np.float32))
    b.const("neg", np.array(-10000.0, np.float32))
    b.const("scale", np.array(1.0 / math.sqrt(head_dim), np.float32))
    b.const("shape_heads", np.array([0, 0, cfg.heads, head_dim], np.int64))
    b.const("shape_hidden", np.array([0, 0, cfg.hidden], np.int64))
    return b.op("Mul", [b.op("Sub", ["one", b.op("Unsqueeze", [mask_f, "axes_12"])]), "neg"])


@dataclass(frozen=True)
class _LayerWeights:
    """One encoder layer's weights, matrices transposed for MatMul."""

    wq: np.ndarray
    bq: np.ndarray
    wk: np.ndarray
    bk: np.ndarray
    wv: np.ndarray
    bv: np.ndarray
    wo: np.ndarray
    bo: np.ndarray
    wi: np.ndarray
    bi: np.ndarray
    wo2: np.ndarray
    bo2: np.ndarray
    g1: np.ndarray
    be1: np.ndarray
    g2: np.ndarray
    be2: np.ndarray

    @classmethod
    def of(cls, w: _Weights, i: int) -> "_LayerWeights":
        def lin(name: str) -> tuple[np.ndarray, np.ndarray]:
            return w.layer(i, f"{name}.weight").T, w.layer(i, f"{name}.bias")

        (wq, bq), (wk, bk), (wv, bv) = (lin(f"attention.self.{n}") for n in ("query", "key", "value"))
        wo, bo = lin("attention.output.dense")
        wi, bi = lin("intermediate.dense")
        wo2, bo2 = lin("output.dense")
        g1, be1 = w.layer(i, "attention.output.LayerNorm.weight"), w.layer(i, "attention.output.LayerNorm.bias")
        g2, be2 = w.layer(i, "output.LayerNorm.weight"), w.layer(i, "output.LayerNorm.bias")
        return cls(wq, bq, wk, bk, wv, bv, wo, bo, wi, bi, wo2, bo2, g1, be1, g2, be2)


def _fused_layer(b: _Builder, x: str, lw: _LayerWeights, p: str, mask_i: str, cfg: BertConfig) -> str:
    """One layer with onnxruntime's fused contrib ops (Attention, SkipLayerNormalization, BiasGelu)."""
    qkv_w = b.const(p + "qkv_w", np.concatenate([lw.wq, lw.wk, lw.wv], axis=1))
    qkv_b = b.const(p + "qkv_b", np.concatenate([lw.bq, lw.bk, lw.bv]))
    ctx = b.op("Attention", [x, qkv_w, qkv_b, mask_i], domain=MS, num_heads=cfg.heads)
    proj = b.op("MatMul", [ctx, b.const(p + "wo", lw.wo)])
    x = b.op("SkipLayerNormalization", [proj, x, b.const(p + "ln1_g", lw.g1), b.const(p + "ln1_b", lw.be1),
                                        b.const(p + "bo", lw.bo)], domain=MS, epsilon=cfg.eps)
    inter = b.op("BiasGelu", [b.op("MatMul", [x, b.const(p + "wi", lw.wi)]), b.const(p + "bi", lw.bi)], domain=MS)
    out = b.op("MatMul", [inter, b.const(p + "wo2", lw.wo2)])
    return b.op("SkipLayerNormalization", [out, x, b.const(p + "ln2_g", lw.g2), b.const(p + "ln2_b", lw.be2),
                                           b.const(p + "bo2", lw.bo2)], domain=MS, epsilon=cfg.eps)


def _plain_layer(b: _Builder, x: str, lw: _LayerWeights, i: int, additive: str, cfg: BertConfig) -> str:
    """One layer in standard ONNX ops only (the fallback when the fused graph does not load)."""
    p = f"l{i}_"

    def heads_of(weight: np.ndarray, bias: np.ndarray, name: str, perm: list[int]) -> str:
        proj = b.op("Add", [b.op("MatMul", [x, b.const(p + name + "_w", weight)]), b.const(p + name + "_b", bias)])
        return b.op("Transpose", [b.op("Reshape", [proj, "shape_heads"])], perm=perm)

    q = heads_of(lw.wq, lw.bq, "q", [0, 2, 1, 3])
    k_t = heads_of(lw.wk, lw.bk, "k", [0, 2, 3, 1])
    v = heads_of(lw.wv, lw.bv, "v", [0, 2, 1, 3])
    scores = b.op("Add", [b.op("Mul", [b.op("MatMul", [q, k_t]), "scale"]), additive])
    ctx = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])
    ctx = b.op("Reshape", [b.op("Transpose", [ctx], perm=[0, 2, 1, 3]), "shape_hidden"])
    attn = b.op("Add", [b.op("MatMul", [ctx, b.const(p + "wo", lw.wo)]), b.const(p + "bo", lw.bo)])
    x = b.op("LayerNormalization", [b.op("Add", [attn, x]), b.const(p + "ln1_g", lw.g1), b.const(p + "ln1_b", lw.be1)],
             axis=-1, epsilon=cfg.eps)
    inter = b.op("Add", [b.op("MatMul", [x, b.const(p + "wi", lw.wi)]), b.const(p + "bi", lw.bi)])
    half = b.const(p + "half", np.array(0.5, np.float32)) if i == 0 else "l0_half"
    rsqrt2 = b.const(p + "rsqrt2", np.array(1 / math.sqrt(2), np.float32)) if i == 0 else "l0_rsqrt2"
    gelu = b.op("Mul", [b.op("Mul", [inter, half]), b.op("Add", [b.op("Erf", [b.op("Mul", [inter, rsqrt2])]), "one"])])
    out = b.op("Add", [b.op("MatMul", [gelu, b.const(p + "wo2", lw.wo2)]), b.const(p + "bo2", lw.bo2)])
    return b.op("LayerNormalization", [b.op("Add", [out, x]), b.const(p + "ln2_g", lw.g2), b.const(p + "ln2_b", lw.be2)],
                axis=-1, epsilon=cfg.eps)


def _mean_pool(b: _Builder, x: str, mask_f: str) -> None:
    """Mean pooling over real tokens, then unit length, into OUTPUT (sentence-transformers' Pooling +
    Normalize; the clamps are theirs: 1e-9 on the token count, 1e-12 on the norm)."""
    from onnx import helper  # deferred: see _Builder

    b.const("axis1", np.array([1], np.int64))
    b.const("count_eps", np.array(1e-9, np.float32))
    b.const("norm_eps", np.array(1e-12, np.float32))
    mask3 = b.op("Unsqueeze", [mask_f, b.const("axis_last", np.array([-1], np.int64))])
    summed = b.op("ReduceSum", [b.op("Mul", [x, mask3]), "axis1"], keepdims=0)
    count = b.op("Max", [b.op("ReduceSum", [mask3, "axis1"], keepdims=0), "count_eps"])
    pooled = b.op("Div", [summed, count])
    norm = b.op("Max", [b.op("ReduceL2", [pooled], axes=[1], keepdims=1), "norm_eps"])
    b.nodes.append(helper.make_node("Div", [pooled, norm], [OUTPUT], name="normalize"))


def reference_forward(tensors: Mapping[str, np.ndarray], cfg: BertConfig, ids: np.ndarray,
                      mask: np.ndarray) -> np.ndarray:
    """The same network in float64 numpy: a torch-free yardstick for the built graph."""
    from scipy.special import erf  # deferred: scipy loads in ~0.2 s; only a graph check needs it

    w = _Weights(tensors)

    def ln(v: np.ndarray, g: np.ndarray, bias: np.ndarray) -> np.ndarray:
        mu = v.mean(-1, keepdims=True)
        var = ((v - mu) ** 2).mean(-1, keepdims=True)
        return (v - mu) / np.sqrt(var + cfg.eps) * g + bias

    B, L = ids.shape
    d = cfg.hidden // cfg.heads
    f8 = np.float64
    x = (w("embeddings.word_embeddings.weight")[ids].astype(f8) + w("embeddings.position_embeddings.weight")[:L]
         + w("embeddings.token_type_embeddings.weight")[0])
    x = ln(x, w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
    add_mask = (1.0 - mask.astype(f8))[:, None, None, :] * -10000.0
    for i in range(cfg.layers):
        def lin(v: np.ndarray, name: str) -> np.ndarray:
            return v @ w.layer(i, f"{name}.weight").T.astype(f8) + w.layer(i, f"{name}.bias")

        q, k, v = (lin(x, f"attention.self.{n}").reshape(B, L, cfg.heads, d).transpose(0, 2, 1, 3)
                   for n in ("query", "key", "value"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + add_mask
        s = np.exp(s - s.max(-1, keepdims=True))
        ctx = ((s / s.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(B, L, cfg.hidden)
        x = ln(lin(ctx, "attention.output.dense") + x, w.layer(i, "attention.output.LayerNorm.weight"),
               w.layer(i, "attention.output.LayerNorm.bias"))
        h = lin(x, "intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        x = ln(lin(h, "output.dense") + x, w.layer(i, "output.LayerNorm.weight"), w.layer(i, "output.LayerNorm.bias"))
    m = mask.astype(f8)[:, :, None]
    pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)
