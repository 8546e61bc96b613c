#!/usr/bin/python3
"""Builds the project's generated ONNX test models, with fixed seeds, and their expected outputs.

Run with Debian's Python (packages python3-onnx, python3-numpy):
    /usr/bin/python3 scripts/make_onnx_test_models.py [OUT_DIR]      # default: models/onnx

mobilenet_style_nchw_qdq: a MobileNetV2-style network written the way ONNX Runtime's static
quantizer writes one: NCHW, QuantizeLinear/DequantizeLinear around every tensor, u8
activations, s8 per-channel conv weights (i32 biases at s_x * s_w), the Clip(0, 6) kept between
QDQ pairs (one Clip keeps its input's parameters, one gets its own), a depthwise 3x3, an
inverted residual with its Add, GlobalAveragePool, Flatten and a Gemm classifier.

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

    def __init__(self, b, x_name, x):
        self.b = b
        self.name, self.v = x_name, x

    def qdq(self, params=None):
        """Q then DQ on the current tensor: parameters from its own range unless given."""
        scale, zp = params if params is not None else act_params(self.v)
        b = self.b
        s, z = b.const("scale", scale, np.float32), b.const("zp", zp, np.uint8)
        q = b.node("QuantizeLinear", [self.name, s, z])
        self.name = b.node("DequantizeLinear", [q, s, z])
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
        self.name = b.node("Conv", [self.name, wn, bn], strides=[stride, stride], pads=[pad] * 4, group=groups,
                           kernel_shape=[k, k])
        self.v = conv2d_nchw(self.v, wq * w_scale.astype(np.float64).reshape(-1, 1, 1, 1),
                             bq * b_scale.astype(np.float64), stride, pad, groups)
        self.qdq()

    def clip6(self, same_params):
        """Clip(0, 6) between QDQ pairs; its Q keeps the input's parameters or gets its own."""
        b = self.b
        before = self.last
        self.name = b.node("Clip", [self.name, b.const("min", 0.0, np.float32), b.const("max", 6.0, np.float32)])
        self.v = np.clip(self.v, 0.0, 6.0)
        self.qdq(before if same_params else None)


def mobilenet_style(h=32, w=32, classes=10):
    b = Builder()
    x = RNG.uniform(-1.0, 1.0, (1, 3, h, w)).astype(np.float32)
    net = QdqNet(b, "input", x.astype(np.float64))
    net.qdq((np.float32(2.0 / 255.0), 128))
    # Stem: 3x3 stride 2, Clip kept with the conv's own parameters.
    net.conv(16, 3, 2)
    net.clip6(same_params=True)
    # Depthwise 3x3, Clip with its own parameters, then the 1x1 projection (linear).
    net.conv(16, 3, 1, groups=16)
    net.clip6(same_params=False)
    net.conv(24, 1, 1)
    skip_name, skip_v = net.name, net.v
    # An inverted residual block: expand, depthwise, project, Add.
    net.conv(48, 1, 1)
    net.clip6(same_params=True)
    net.conv(48, 3, 1, groups=48)
    net.clip6(same_params=True)
    net.conv(24, 1, 1)
    net.name = b.node("Add", [net.name, skip_name])
    net.v = net.v + skip_v
    net.qdq()
    # Head: global average pool, flatten, Gemm.
    net.name = b.node("GlobalAveragePool", [net.name])
    net.v = net.v.mean(axis=(2, 3), keepdims=True)
    x_scale, _ = net.qdq()
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
    net.name = b.node("Gemm", [net.name, wn, bn], transB=1)
    net.v = net.v @ (fcq * np.float64(fc_scale)).T + fbq * np.float64(fb_scale)
    net.qdq()
    b.nodes.append(helper.make_node("Identity", [net.name], ["logits"], name="logits"))
    graph = helper.make_graph(b.nodes, "mobilenet_style_nchw_qdq",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, h, w])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="qrt-test-models")
    onnx.checker.check_model(model)
    return model, x, net.v.astype(np.float32)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "models", "onnx")
    model, x, expected = mobilenet_style()
    name = "mobilenet_style_nchw_qdq"
    onnx.save(model, os.path.join(out, name + ".onnx"))
    np.save(os.path.join(out, name + "_x.npy"), x)
    np.save(os.path.join(out, name + "_expected.npy"), expected)
    print(f"{name}: {len(model.graph.node)} nodes, logits {expected.ravel()[:4]}...")


if __name__ == "__main__":
    main()
