#!/usr/bin/python3
"""Builds the project's generated ONNX test models, with fixed seeds, and their expected outputs.

Run with Debian's Python (packages python3-onnx, python3-numpy):
    /usr/bin/python3 scripts/make_onnx_test_models.py [OUT_DIR]      # default: models/onnx
    /usr/bin/python3 scripts/make_onnx_test_models.py --bench DIR    # 224² MobileNetV2, QDQ and f32 (benchmark)

mobilenet_style_nchw_qdq: a MobileNetV2-style network written the way ONNX Runtime's static
quantizer writes one: NCHW, QuantizeLinear/DequantizeLinear around every tensor, u8
activations, s8 per-channel conv weights (i32 biases at s_x * s_w), the Clip(0, 6) kept between
QDQ pairs (one Clip keeps its input's parameters, one gets its own), a depthwise 3x3, an
inverted residual with its Add, GlobalAveragePool, Flatten and a Gemm classifier.

mobilenet_style_nchw_qop: the same network in ONNX's QOperator format (QLinearConv,
QLinearAdd, QLinearGlobalAveragePool, QGemm from com.microsoft; the Clips kept as DQ -> Clip -> Q).
llm_mlp_nbits: a transformer MLP block as ONNX Runtime's 4-bit LLM exports write it: x [1, 4, 256]
-> gate and up projections (com.microsoft MatMulNBits, 4 bits, blocks of 32; packed zero points
for gate, the default 8 for up) -> SiLU(gate) * up -> down projection (MatMulNBits, blocks of 64,
with bias) -> + x. Input "x", output "y"; expected from float64 numpy of the dequantized weights.
qoperator_ops: QLinearAveragePool, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearConcat
and QLinearGlobalAveragePool on one small graph (input "input", output "y").

Files written (NAME = the model's name):
    NAME.onnx            the model (opset 13), input "input" f32 [1, 3, H, W], output "logits"
    NAME_x.npy           an input
    NAME_expected.npy    "logits" for that input, from an independent float64 numpy
                         evaluation of the QDQ graph's semantics (ONNX's QuantizeLinear:
                         round half to even, saturate; DequantizeLinear: (q - z) * s)
qrt's outputs must agree within one output quantization step (tests/importers).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(20261123)


# ---- float64 reference semantics -------------------------------------------------------------

def quantize(x, scale, zp, lo, hi):
    return np.clip(np.round(x / scale) + zp, lo, hi)  # np.round: half to even, as ONNX


def dequantize(q, scale, zp):
    return (q - zp) * scale


def conv2d_nchw(x, w, b, stride, pad, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for ky in range(kh):
            for kx in range(kw):
                win = xs[:, :, ky:ky + stride * oh:stride, kx:kx + stride * ow:stride]  # n, cg, oh, ow
                wk = w[g * og:(g + 1) * og, :, ky, kx]  # og, cg
                y[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", win, wk)
    return y + b.reshape(1, -1, 1, 1)


# ---- model building --------------------------------------------------------------------------

class Builder:
    """Collects nodes and initializers; evaluates the float and the QDQ graph alongside."""

    def __init__(self):
        self.nodes, self.inits = [], []
        self.count = 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, base, array, dtype):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array).astype(dtype), n))
        return n

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out


def act_params(values):
    """u8 asymmetric parameters covering [min(values, 0), max(values, 0)]."""
    lo, hi = min(float(values.min()), 0.0), max(float(values.max()), 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(np.clip(np.round(-lo / scale), 0, 255))
    return np.float32(scale), zp


class QdqNet:
    """Each method adds one layer to the ONNX graph and evaluates it in float64 on the
    quantized path (self.v: the dequantized value of the current tensor)."""

    def __init__(self, b, x_name, x, qop=False):
        self.b = b
        self.name, self.v = x_name, x
        self.qop = qop  # QOperator format: self.name is the quantized tensor, self.last its parameters

    def requant(self, fn, op=None, params=None, **attrs):
        """QOperator: op(q, s, z, s_y, z_y) from com.microsoft with fn applied in float64.
        QDQ: the float op between Q/DQ pairs."""
        b = self.b
        self.v = fn(self.v)
        scale, zp = params if params is not None else act_params(self.v)
        s_in, z_in = self.last
        ins = [self.name, b.const("scale", s_in, np.float32), b.const("zp", z_in, np.uint8),
               b.const("scale", scale, np.float32), b.const("zp", zp, np.uint8)]
        self.name = b.node(op, ins, domain="com.microsoft", **attrs)
        self.v = dequantize(quantize(self.v, np.float64(scale), zp, 0, 255), np.float64(scale), zp)
        self.last = (scale, zp)

    def qdq(self, params=None):
        """Q then DQ on the current tensor: parameters from its own range unless given."""
        scale, zp = params if params is not None else act_params(self.v)
        b = self.b
        s, z = b.const("scale", scale, np.float32), b.const("zp", zp, np.uint8)
        q = b.node("QuantizeLinear", [self.name, s, z])
        self.name = q if self.qop else b.node("DequantizeLinear", [q, s, z])
        self.v = dequantize(quantize(self.v, np.float64(scale), zp, 0, 255), np.float64(scale), zp)
        self.last = (scale, zp)
        return scale, zp

    def conv(self, out_c, k, stride, groups=1):
        b = self.b
        in_c = self.v.shape[1]
        w = RNG.normal(0, 1.0 / np.sqrt(k * k * in_c / groups), (out_c, in_c // groups, k, k))
        bias = RNG.normal(0, 0.1, out_c)
        # s8 per-channel symmetric weights, i32 bias at s_x * s_w (what ORT writes).
        w_scale = (np.abs(w).reshape(out_c, -1).max(axis=1) / 127.0).astype(np.float32)
        wq = np.clip(np.round(w / w_scale.reshape(-1, 1, 1, 1)), -127, 127)
        x_scale = self.last[0]
        b_scale = (np.float64(x_scale) * w_scale.astype(np.float64)).astype(np.float32)
        bq = np.round(bias / b_scale).astype(np.int64)
        wn = b.node("DequantizeLinear", [b.const("w", wq, np.int8), b.const("w_scale", w_scale, np.float32),
                                         b.const("w_zp", np.zeros(out_c), np.int8)], axis=0)
        bn = b.node("DequantizeLinear", [b.const("b", bq, np.int32), b.const("b_scale", b_scale, np.float32),
                                         b.const("b_zp", np.zeros(out_c), np.int32)], axis=0)
        pad = k // 2
        self.v = conv2d_nchw(self.v, wq * w_scale.astype(np.float64).reshape(-1, 1, 1, 1),
                             bq * b_scale.astype(np.float64), stride, pad, groups)
        if self.qop:
            b.nodes.pop()  # the two DequantizeLinear nodes of the QDQ form
            b.nodes.pop()
            y_scale, y_zp = act_params(self.v)
            ins = [self.name, b.const("x_scale", x_scale, np.float32), b.const("x_zp", self.last[1], np.uint8),
                   b.const("w", wq, np.int8), b.const("w_scale", w_scale, np.float32),
                   b.const("w_zp", np.zeros(out_c), np.int8), b.const("y_scale", y_scale, np.float32),
                   b.const("y_zp", y_zp, np.uint8), b.const("b", bq, np.int32)]
            self.name = b.node("QLinearConv", ins, strides=[stride, stride], pads=[pad] * 4, group=groups,
                               kernel_shape=[k, k])
            self.v = dequantize(quantize(self.v, np.float64(y_scale), y_zp, 0, 255), np.float64(y_scale), y_zp)
            self.last = (y_scale, y_zp)
            return
        self.name = b.node("Conv", [self.name, wn, bn], strides=[stride, stride], pads=[pad] * 4, group=groups,
                           kernel_shape=[k, k])
        self.qdq()

    def clip6(self, same_params):
        """Clip(0, 6) between QDQ pairs; its Q keeps the input's parameters or gets its own."""
        b = self.b
        before = self.last
        if self.qop:
            self.name = b.node("DequantizeLinear", [self.name, b.const("scale", before[0], np.float32),
                                                    b.const("zp", before[1], np.uint8)])
        self.name = b.node("Clip", [self.name, b.const("min", 0.0, np.float32), b.const("max", 6.0, np.float32)])
        self.v = np.clip(self.v, 0.0, 6.0)
        self.qdq(before if same_params else None)


def global_pool(b, net):
    """QDQ head start: GlobalAveragePool between QDQ pairs; returns the pooled scale."""
    net.name = b.node("GlobalAveragePool", [net.name])
    net.v = net.v.mean(axis=(2, 3), keepdims=True)
    x_scale, _ = net.qdq()
    return x_scale


def mobilenet_v2_qdq(h=224, classes=1000):
    """The full MobileNetV2 (width 1.0) in ONNX Runtime's static QDQ form, random weights: the
    benchmark model of the NCHW-QDQ-against-TFLite comparison (not bundled: 3.5 MB)."""
    b = Builder()
    x = RNG.uniform(-1.0, 1.0, (1, 3, h, h)).astype(np.float32)
    net = QdqNet(b, "input", x.astype(np.float64))
    net.qdq((np.float32(2.0 / 255.0), 128))
    net.conv(32, 3, 2)
    net.clip6(same_params=True)
    in_c = 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            skip = (net.name, net.v) if stride == 1 and in_c == c else None
            if t != 1:
                net.conv(in_c * t, 1, 1)
                net.clip6(same_params=True)
            net.conv(in_c * t, 3, stride, groups=in_c * t)
            net.clip6(same_params=True)
            net.conv(c, 1, 1)
            if skip:
                net.name = b.node("Add", [net.name, skip[0]])
                net.v = net.v + skip[1]
                net.qdq()
            in_c = c
    net.conv(1280, 1, 1)
    net.clip6(same_params=True)
    x_scale = global_pool(b, net)
    net.name = b.node("Flatten", [net.name], axis=1)
    net.v = net.v.reshape(1, -1)
    fc = RNG.normal(0, 0.03, (classes, net.v.shape[1]))
    fc_scale = np.float32(np.abs(fc).max() / 127.0)
    fcq = np.clip(np.round(fc / fc_scale), -127, 127)
    wn = b.node("DequantizeLinear", [b.const("fc_w", fcq, np.int8), b.const("fc_scale", fc_scale, np.float32),
                                     b.const("fc_zp", 0, np.int8)])
    net.name = b.node("Gemm", [net.name, wn], transB=1)
    net.v = net.v @ (fcq * np.float64(fc_scale)).T
    net.qdq()
    b.nodes.append(helper.make_node("Identity", [net.name], ["logits"], name="logits"))
    graph = helper.make_graph(b.nodes, "mobilenet_v2_qdq", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, h, h])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="qrt-test-models")
    onnx.checker.check_model(model)
    return model, x, net.v.astype(np.float32)


def strip_qdq(model, name):
    """The float model a QDQ model was quantized from, as far as its weights tell: every
    DequantizeLinear of an initializer becomes that initializer dequantized (f32), and every
    activation QuantizeLinear -> DequantizeLinear pair is bypassed. Same layers, same weights
    (rounded to their quantized values), no quantization: the float side of the int8-vs-f32
    comparison on one network."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    rename, nodes, new_inits = {}, [], []
    def resolve(n):
        while n in rename:
            n = rename[n]
        return n
    producers = {o: node for node in model.graph.node for o in node.output}
    for node in model.graph.node:
        ins = [resolve(i) for i in node.input]
        if node.op_type == "DequantizeLinear" and ins[0] in inits:
            q, s = inits[ins[0]].astype(np.float64), inits[ins[1]].astype(np.float64)
            z = inits[ins[2]].astype(np.float64) if len(ins) > 2 else 0.0
            axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
            if s.ndim == 1 and q.ndim > 1:
                shape = [1] * q.ndim
                shape[axis] = -1
                s, z = s.reshape(shape), np.asarray(z).reshape(shape) if np.ndim(z) else z
            new_inits.append(numpy_helper.from_array(((q - z) * s).astype(np.float32), node.output[0]))
            continue
        if node.op_type == "DequantizeLinear" and producers.get(node.input[0]) is not None and \
                producers[node.input[0]].op_type == "QuantizeLinear":
            rename[node.output[0]] = resolve(producers[node.input[0]].input[0])
            continue
        if node.op_type == "QuantizeLinear":
            continue  # only read by its DequantizeLinear, bypassed above
        nodes.append(helper.make_node(node.op_type, ins, list(node.output), name=node.name,
                                      domain=node.domain or None, **{a.name: helper.get_attribute_value(a)
                                                                     for a in node.attribute}))
    used = {i for n in nodes for i in n.input}
    outputs = [o.name for o in model.graph.output]
    for o in outputs:  # a graph output that was a bypassed pair's result
        if o in rename:
            nodes.append(helper.make_node("Identity", [resolve(o)], [o], name=o + "_f32"))
    new_inits = [t for t in new_inits if t.name in used] + \
                [t for t in model.graph.initializer if t.name in used and t.name not in {i.name for i in new_inits}]
    graph = helper.make_graph(nodes, name, list(model.graph.input), list(model.graph.output), new_inits)
    out = helper.make_model(graph, opset_imports=list(model.opset_import), producer_name="qrt-test-models")
    onnx.checker.check_model(out)
    return out


def mobilenet_style(h=32, w=32, classes=10, qop=False):
    b = Builder()
    x = RNG.uniform(-1.0, 1.0, (1, 3, h, w)).astype(np.float32)
    net = QdqNet(b, "input", x.astype(np.float64), qop)
    net.qdq((np.float32(2.0 / 255.0), 128))
    # Stem: 3x3 stride 2, Clip kept with the conv's own parameters.
    net.conv(16, 3, 2)
    net.clip6(same_params=True)
    # Depthwise 3x3, Clip with its own parameters, then the 1x1 projection (linear).
    net.conv(16, 3, 1, groups=16)
    net.clip6(same_params=False)
    net.conv(24, 1, 1)
    skip_name, skip_v, skip_last = net.name, net.v, net.last
    # An inverted residual block: expand, depthwise, project, Add.
    net.conv(48, 1, 1)
    net.clip6(same_params=True)
    net.conv(48, 3, 1, groups=48)
    net.clip6(same_params=True)
    net.conv(24, 1, 1)
    if qop:
        (s_a, z_a), (s_b, z_b) = net.last, skip_last
        net.v = net.v + skip_v
        scale, zp = act_params(net.v)
        ins = [net.name, b.const("scale", s_a, np.float32), b.const("zp", z_a, np.uint8), skip_name,
               b.const("scale", s_b, np.float32), b.const("zp", z_b, np.uint8), b.const("scale", scale, np.float32),
               b.const("zp", zp, np.uint8)]
        net.name = b.node("QLinearAdd", ins, domain="com.microsoft")
        net.v = dequantize(quantize(net.v, np.float64(scale), zp, 0, 255), np.float64(scale), zp)
        net.last = (scale, zp)
        net.requant(lambda v: v.mean(axis=(2, 3), keepdims=True), "QLinearGlobalAveragePool", channels_last=0)
        x_scale = net.last[0]
    else:
        net.name = b.node("Add", [net.name, skip_name])
        net.v = net.v + skip_v
        net.qdq()
        x_scale = global_pool(b, net)
    net.name = b.node("Flatten", [net.name], axis=1)
    net.v = net.v.reshape(1, -1)
    fc = RNG.normal(0, 0.3, (classes, net.v.shape[1]))
    fc_bias = RNG.normal(0, 0.1, classes)
    fc_scale = np.float32(np.abs(fc).max() / 127.0)
    fcq = np.clip(np.round(fc / fc_scale), -127, 127)
    fb_scale = np.float32(np.float64(x_scale) * np.float64(fc_scale))
    fbq = np.round(fc_bias / fb_scale)
    wn = b.node("DequantizeLinear", [b.const("fc_w", fcq, np.int8), b.const("fc_scale", fc_scale, np.float32),
                                     b.const("fc_zp", 0, np.int8)])
    bn = b.node("DequantizeLinear", [b.const("fc_b", fbq, np.int32), b.const("fc_b_scale", fb_scale, np.float32),
                                     b.const("fc_b_zp", 0, np.int32)])
    net.v = net.v @ (fcq * np.float64(fc_scale)).T + fbq * np.float64(fb_scale)
    if qop:
        b.nodes.pop()
        b.nodes.pop()
        y_scale, y_zp = act_params(net.v)
        ins = [net.name, b.const("scale", x_scale, np.float32), b.const("zp", net.last[1], np.uint8),
               b.const("fc_w", fcq, np.int8), b.const("fc_scale", fc_scale, np.float32), b.const("fc_zp", 0, np.int8),
               b.const("fc_b", fbq, np.int32), b.const("scale", y_scale, np.float32), b.const("zp", y_zp, np.uint8)]
        net.name = b.node("QGemm", ins, domain="com.microsoft", transB=1)
        net.v = dequantize(quantize(net.v, np.float64(y_scale), y_zp, 0, 255), np.float64(y_scale), y_zp)
        net.name = b.node("DequantizeLinear", [net.name, b.const("scale", y_scale, np.float32),
                                                b.const("zp", y_zp, np.uint8)])
    else:
        net.name = b.node("Gemm", [net.name, wn, bn], transB=1)
        net.qdq()
    b.nodes.append(helper.make_node("Identity", [net.name], ["logits"], name="logits"))
    graph = helper.make_graph(b.nodes, "mobilenet_style_nchw_" + ("qop" if qop else "qdq"),
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, h, w])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])], b.inits)
    opsets = [helper.make_opsetid("", 13)] + ([helper.make_opsetid("com.microsoft", 1)] if qop else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="qrt-test-models")
    onnx.checker.check_model(model)
    return model, x, net.v.astype(np.float32)


def avg_pool3_nchw(x):
    """3x3 average, stride 1, pads 1, the padding not counted."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = np.pad(np.ones((h, w)), 1)
    total, count = np.zeros_like(x), np.zeros((h, w))
    for ky in range(3):
        for kx in range(3):
            total += xp[:, :, ky:ky + h, kx:kx + w]
            count += ones[ky:ky + h, kx:kx + w]
    return total / count


def qoperator_ops(h=6, w=6, c=4):
    """The remaining QOperator contrib ops on one small graph: QLinearAveragePool, QLinearMul,
    QLinearSigmoid, QLinearLeakyRelu, QLinearConcat and QLinearGlobalAveragePool."""
    b = Builder()
    x = RNG.uniform(-2.0, 2.0, (1, c, h, w)).astype(np.float32)
    net = QdqNet(b, "input", x.astype(np.float64), qop=True)
    net.qdq((np.float32(4.0 / 255.0), 128))
    q_name, q_v, q_last = net.name, net.v, net.last
    net.requant(avg_pool3_nchw, "QLinearAveragePool", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    # Mul of the input and its average.
    prod = net.v * q_v
    scale, zp = act_params(prod)
    ins = [net.name, b.const("scale", net.last[0], np.float32), b.const("zp", net.last[1], np.uint8), q_name,
           b.const("scale", q_last[0], np.float32), b.const("zp", q_last[1], np.uint8),
           b.const("scale", scale, np.float32), b.const("zp", zp, np.uint8)]
    net.name = b.node("QLinearMul", ins, domain="com.microsoft")
    net.v = dequantize(quantize(prod, np.float64(scale), zp, 0, 255), np.float64(scale), zp)
    net.last = (scale, zp)
    net.requant(lambda v: 1.0 / (1.0 + np.exp(-v)), "QLinearSigmoid")
    sig_name, sig_v, sig_last = net.name, net.v, net.last
    leaky = QdqNet(b, q_name, q_v, qop=True)
    leaky.last = q_last
    leaky.requant(lambda v: np.where(v >= 0, v, 0.1 * v), "QLinearLeakyRelu", alpha=0.1)
    cat = np.concatenate([sig_v, leaky.v], axis=1)
    scale, zp = act_params(cat)
    ins = [b.const("scale", scale, np.float32), b.const("zp", zp, np.uint8),
           sig_name, b.const("scale", sig_last[0], np.float32), b.const("zp", sig_last[1], np.uint8),
           leaky.name, b.const("scale", leaky.last[0], np.float32), b.const("zp", leaky.last[1], np.uint8)]
    net.name = b.node("QLinearConcat", ins, domain="com.microsoft", axis=1)
    net.v = dequantize(quantize(cat, np.float64(scale), zp, 0, 255), np.float64(scale), zp)
    net.last = (scale, zp)
    net.requant(lambda v: v.mean(axis=(2, 3), keepdims=True), "QLinearGlobalAveragePool", channels_last=0)
    s, z = net.last
    out = b.node("DequantizeLinear", [net.name, b.const("scale", s, np.float32), b.const("zp", z, np.uint8)])
    b.nodes.append(helper.make_node("Identity", [out], ["y"], name="y"))
    graph = helper.make_graph(b.nodes, "qoperator_ops", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, c, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2 * c, 1, 1])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="qrt-test-models")
    return model, x, net.v.astype(np.float32)


def matmul_nbits(name, a, out, k, n, block, with_zp, with_bias, inits):
    """A MatMulNBits node with random 4-bit weights; returns (node, dequantized [K, N], bias)."""
    kb = (k + block - 1) // block
    codes = RNG.integers(0, 16, size=(n, kb, block))
    scales = (RNG.uniform(0.5, 1.0, size=(n, kb)) / np.sqrt(k) / 4).astype(np.float32)
    zps = RNG.integers(4, 12, size=(n, kb)) if with_zp else np.full((n, kb), 8)
    blob = (codes[:, :, 0::2] | (codes[:, :, 1::2] << 4)).astype(np.uint8)
    inits.append(numpy_helper.from_array(blob, name + "_B"))
    inits.append(numpy_helper.from_array(scales.reshape(-1), name + "_scales"))
    inputs = [a, name + "_B", name + "_scales"]
    if with_zp:
        zp_bytes = np.zeros((n, (kb + 1) // 2), dtype=np.uint8)
        for j in range(kb):
            zp_bytes[:, j // 2] |= (zps[:, j] << (4 * (j % 2))).astype(np.uint8)
        inits.append(numpy_helper.from_array(zp_bytes.reshape(-1), name + "_zp"))
        inputs.append(name + "_zp")
    bias = None
    if with_bias:
        bias = RNG.uniform(-0.1, 0.1, size=n).astype(np.float32)
        inits.append(numpy_helper.from_array(bias, name + "_bias"))
        inputs += [""] * (5 - len(inputs)) + [name + "_bias"]
    node = helper.make_node("MatMulNBits", inputs, [out], name=name, domain="com.microsoft",
                            K=k, N=n, bits=4, block_size=block)
    w = (codes - zps[:, :, None]) * scales.astype(np.float64)[:, :, None]  # [N, kb, block]
    return node, w.reshape(n, kb * block)[:, :k].T, bias


def llm_mlp_nbits(d=256, hidden=512, tokens=4):
    inits = []
    gate, wg, _ = matmul_nbits("gate", "x", "g", d, hidden, 32, True, False, inits)
    up, wu, _ = matmul_nbits("up", "x", "u", d, hidden, 32, False, False, inits)
    down, wd, bd = matmul_nbits("down", "h", "dn", hidden, d, 64, True, True, inits)
    nodes = [gate, up, helper.make_node("Sigmoid", ["g"], ["gs"]), helper.make_node("Mul", ["g", "gs"], ["silu"]),
             helper.make_node("Mul", ["silu", "u"], ["h"]), down, helper.make_node("Add", ["dn", "x"], ["y"])]
    graph = helper.make_graph(nodes, "llm_mlp_nbits", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, tokens, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, tokens, d])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="qrt-test-models")
    x = RNG.uniform(-1, 1, size=(1, tokens, d)).astype(np.float32)
    xd = x.astype(np.float64)
    g = xd @ wg
    h = g / (1 + np.exp(-g)) * (xd @ wu)
    y = h @ wd + bd + xd
    return model, x, y.astype(np.float32)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--bench":
        # The benchmark model (not bundled): python3 scripts/make_onnx_test_models.py --bench DIR
        model, x, expected = mobilenet_v2_qdq()
        onnx.save(model, os.path.join(sys.argv[2], "mobilenet_v2_qdq_224.onnx"))
        np.save(os.path.join(sys.argv[2], "mobilenet_v2_qdq_224_x.npy"), x)
        np.save(os.path.join(sys.argv[2], "mobilenet_v2_qdq_224_expected.npy"), expected)
        print(f"mobilenet_v2_qdq_224: {len(model.graph.node)} nodes, output {expected.ravel()[:4]}...")
        f32 = strip_qdq(model, "mobilenet_v2_f32")
        onnx.save(f32, os.path.join(sys.argv[2], "mobilenet_v2_f32_224.onnx"))
        print(f"mobilenet_v2_f32_224: {len(f32.graph.node)} nodes (same input)")
        return
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "models", "onnx")
    for name, make in [("mobilenet_style_nchw_qdq", mobilenet_style),
                       ("mobilenet_style_nchw_qop", lambda: mobilenet_style(qop=True)),
                       ("qoperator_ops", qoperator_ops),
                       ("llm_mlp_nbits", llm_mlp_nbits)]:
        model, x, expected = make()
        onnx.save(model, os.path.join(out, name + ".onnx"))
        np.save(os.path.join(out, name + "_x.npy"), x)
        np.save(os.path.join(out, name + "_expected.npy"), expected)
        print(f"{name}: {len(model.graph.node)} nodes, output {expected.ravel()[:4]}...")


if __name__ == "__main__":
    main()
