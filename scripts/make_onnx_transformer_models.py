#!/usr/bin/python3
"""Builds a BERT-style encoder quantized the way ONNX Runtime's quantize_dynamic writes one,
with fixed seeds, and its expected outputs from an independent float64 numpy evaluation.

Run with Debian's Python (packages python3-onnx, python3-numpy):
    /usr/bin/python3 scripts/make_onnx_transformer_models.py [OUT_DIR]          # test model
    /usr/bin/python3 scripts/make_onnx_transformer_models.py --bench OUT_DIR    # 4 layers,
                                                  hidden 256, seq 128 (the issue's benchmark shape)

The graph is written as torch.onnx.export (opset 17) plus quantize_dynamic emit it:
  * inputs input_ids, attention_mask: int64 [1, S];
  * word embeddings Gather, position ids sliced from a constant by a Shape -> Gather ->
    Unsqueeze -> Slice sub-graph, LayerNormalization;
  * the additive mask Unsqueeze -> Cast -> Sub(1, m) -> Mul(-10000);
  * every constant-weight MatMul as DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by
    Mul(x_scale, w_scale), then Add bias; s8 weights, zero point 0, per-tensor scales except
    the FFN's first matmul (per-column scales, as per_channel=True writes);
  * attention heads by Reshape to a shape computed with Shape/Gather/Unsqueeze/Concat,
    Transpose, float batched MatMul, Div by sqrt(d), Softmax(-1);
  * GELU as exported from PyTorch: Div(sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5;
  * a pooler: Gather(index 0, axis 1) -> dynamic-quantized MatMul -> Tanh.
Outputs: last_hidden_state f32 [1, S, H] and pooled f32 [1, H].

Files: NAME.onnx, NAME_ids.npy, NAME_mask.npy, NAME_hidden.npy, NAME_pooled.npy.
The expectation follows ONNX's DynamicQuantizeLinear exactly in float64 (scale =
(max(0, max x) - min(0, min x)) / 255, zero point = round(-min / scale), saturated), so qrt's
f32 evaluation differs from it by float rounding only; tests state the tolerance.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(20261124)


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, base, array):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def node(self, op, inputs, n_out=1, **attrs):
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.name(op), **attrs))
        return outs if n_out > 1 else outs[0]


# ---- float64 semantics -----------------------------------------------------------------------

def dynamic_quantize(x):
    lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
    scale = (hi - lo) / 255.0
    zp = float(np.clip(np.round(-lo / scale), 0, 255)) if scale > 0 else 0.0
    q = np.clip(np.round(x / scale) + zp, 0, 255) if scale > 0 else np.full_like(x, zp)
    return q, scale, zp


def dyn_matmul_ref(x, wq, w_scale, bias):
    q, s, z = dynamic_quantize(x)
    acc = np.matmul(q - z, wq.astype(np.float64))
    return acc * (s * w_scale) + bias


def layer_norm_ref(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def softmax_ref(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def erf(x):
    return np.vectorize(math.erf)(x)


# ---- the model -------------------------------------------------------------------------------

def quantized_weight(k, n, per_channel):
    w = RNG.normal(0, 1 / math.sqrt(k), (k, n))
    scale = (np.abs(w).max(0) if per_channel else np.abs(w).max()) / 127.0
    return np.clip(np.round(w / scale), -127, 127).astype(np.int8), np.asarray(scale, dtype=np.float32)


def encoder(layers=2, seq=16, hidden=32, heads=2, ffn=64, vocab=50):
    b = Builder()
    d = hidden // heads
    ref = {}

    def dyn_matmul(x_name, x_val, k, n, per_channel=False):
        wq, ws = quantized_weight(k, n, per_channel)
        bias = RNG.normal(0, 0.1, n).astype(np.float32)
        xq, xs, xz = b.node("DynamicQuantizeLinear", [x_name], n_out=3)
        zero = np.zeros(n, np.int8) if per_channel else np.int8(0)
        acc = b.node("MatMulInteger", [xq, b.const("W_quantized", wq), xz, b.const("W_zero_point", zero)])
        accf = b.node("Cast", [acc], to=TensorProto.FLOAT)
        scales = b.node("Mul", [xs, b.const("W_scale", ws)])
        y = b.node("Mul", [accf, scales])
        out = b.node("Add", [y, b.const("bias", bias)])
        return out, dyn_matmul_ref(x_val, wq, ws.astype(np.float64), bias.astype(np.float64))

    def layer_norm(x_name, x_val):
        g = (1 + RNG.normal(0, 0.1, hidden)).astype(np.float32)
        beta = RNG.normal(0, 0.1, hidden).astype(np.float32)
        y = b.node("LayerNormalization", [x_name, b.const("ln_g", g), b.const("ln_b", beta)], axis=-1, epsilon=1e-5)
        return y, layer_norm_ref(x_val, g.astype(np.float64), beta.astype(np.float64))

    ids = RNG.integers(0, vocab, (1, seq)).astype(np.int64)
    mask = np.ones((1, seq), np.int64)
    mask[0, seq - seq // 4:] = 0  # padded tail
    word = RNG.normal(0, 1, (vocab, hidden)).astype(np.float32)
    pos = RNG.normal(0, 0.5, (2 * seq, hidden)).astype(np.float32)

    # Embeddings; position ids sliced to the input's length through a shape sub-graph.
    emb = b.node("Gather", [b.const("word_embeddings", word), "input_ids"], axis=0)
    length = b.node("Unsqueeze", [b.node("Gather", [b.node("Shape", ["input_ids"]), b.const("one", np.int64(1))]),
                                  b.const("axes0", np.array([0], np.int64))])
    pos_ids = b.node("Slice", [b.const("position_ids", np.arange(2 * seq, dtype=np.int64)[None, :]),
                               b.const("starts", np.array([0], np.int64)), length,
                               b.const("axes1", np.array([1], np.int64))])
    h = b.node("Add", [emb, b.node("Gather", [b.const("position_embeddings", pos), pos_ids], axis=0)])
    h_val = word[ids[0]][None].astype(np.float64) + pos[:seq][None].astype(np.float64)
    h, h_val = layer_norm(h, h_val)

    m = b.node("Cast", [b.node("Unsqueeze", ["attention_mask", b.const("axes12", np.array([1, 2], np.int64))])],
               to=TensorProto.FLOAT)
    add_mask = b.node("Mul", [b.node("Sub", [b.const("one_f", np.float32(1)), m]), b.const("neg", np.float32(-10000))])
    mask_val = (1.0 - mask[:, None, None, :].astype(np.float64)) * -10000.0

    def heads_view(x_name, perm):
        shape = b.node("Shape", [x_name])
        dims = [b.node("Unsqueeze", [b.node("Gather", [shape, b.const("i", np.int64(i))]), b.const("ax", np.array([0], np.int64))])
                for i in (0, 1)]
        target = b.node("Concat", dims + [b.const("hd", np.array([heads, d], np.int64))], axis=0)
        return b.node("Transpose", [b.node("Reshape", [x_name, target])], perm=perm)

    for _ in range(layers):
        q, q_val = dyn_matmul(h, h_val, hidden, hidden)
        k, k_val = dyn_matmul(h, h_val, hidden, hidden)
        v, v_val = dyn_matmul(h, h_val, hidden, hidden)
        split = lambda t: t.reshape(1, seq, heads, d).transpose(0, 2, 1, 3)
        scores = b.node("Div", [b.node("MatMul", [heads_view(q, [0, 2, 1, 3]), heads_view(k, [0, 2, 3, 1])]),
                                b.const("sqrt_d", np.float32(math.sqrt(d)))])
        probs = b.node("Softmax", [b.node("Add", [scores, add_mask])], axis=-1)
        ctx = b.node("Transpose", [b.node("MatMul", [probs, heads_view(v, [0, 2, 1, 3])])], perm=[0, 2, 1, 3])
        ctx = b.node("Reshape", [ctx, b.const("hidden_shape", np.array([1, seq, hidden], np.int64))])
        p_val = softmax_ref(np.matmul(split(q_val), split(k_val).transpose(0, 1, 3, 2)) / math.sqrt(d) + mask_val)
        ctx_val = np.matmul(p_val, split(v_val)).transpose(0, 2, 1, 3).reshape(1, seq, hidden)
        o, o_val = dyn_matmul(ctx, ctx_val, hidden, hidden)
        h, h_val = layer_norm(b.node("Add", [o, h]), o_val + h_val)
        f, f_val = dyn_matmul(h, h_val, hidden, ffn, per_channel=True)
        gelu = b.node("Mul", [b.node("Mul", [f, b.node("Add", [b.node("Erf", [b.node("Div", [f, b.const("sqrt2", np.float32(math.sqrt(2)))])]),
                                                               b.const("one_g", np.float32(1))])]),
                              b.const("half", np.float32(0.5))])
        g_val = f_val * (1 + erf(f_val / math.sqrt(2))) * 0.5
        f2, f2_val = dyn_matmul(gelu, g_val, ffn, hidden)
        h, h_val = layer_norm(b.node("Add", [f2, h]), f2_val + h_val)

    b.nodes.append(helper.make_node("Identity", [h], ["last_hidden_state"], name="hidden_out"))
    first = b.node("Gather", [h, b.const("zero", np.int64(0))], axis=1)
    pooled, pooled_val = dyn_matmul(first, h_val[:, 0, :], hidden, hidden)
    b.nodes.append(helper.make_node("Tanh", [pooled], ["pooled"], name="pooler_tanh"))
    pooled_val = np.tanh(pooled_val)

    graph = helper.make_graph(
        b.nodes, "dynamic_int8_encoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, seq]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, seq])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [1, seq, hidden]),
         helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, hidden])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="qrt-test-models")
    onnx.checker.check_model(model)
    return model, ids, mask, h_val.astype(np.float32), pooled_val.astype(np.float32)


def main():
    args = sys.argv[1:]
    bench = bool(args) and args[0] == "--bench"
    if bench:
        args = args[1:]
    out = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "models", "onnx")
    name = "encoder_dynamic_int8_bench" if bench else "encoder_dynamic_int8"
    make = (lambda: encoder(layers=4, seq=128, hidden=256, heads=4, ffn=1024, vocab=1000)) if bench else encoder
    model, ids, mask, hidden, pooled = make()
    onnx.save(model, os.path.join(out, name + ".onnx"))
    for suffix, arr in [("ids", ids), ("mask", mask), ("hidden", hidden), ("pooled", pooled)]:
        np.save(os.path.join(out, f"{name}_{suffix}.npy"), arr)
    print(f"{name}: {len(model.graph.node)} nodes, pooled {pooled.ravel()[:4]}...")


if __name__ == "__main__":
    main()
