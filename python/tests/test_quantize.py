"""calibrate, quantize and quantize_weights on the bundled float models."""

import numpy as np
import pytest

import qrt
from conftest import accuracy


@pytest.fixture
def digits_f32(models):
    return qrt.Model(models / "onnx" / "digits_cnn_f32.onnx")


def test_quantize_keeps_accuracy_and_saves(digits_f32, digits_data, tmp_path):
    x, y = digits_data
    float_accuracy = accuracy(digits_f32.compile(), x[100:], y[100:])
    before = digits_f32.to_mlir()
    q = qrt.quantize(digits_f32, x[:100], batch_size=32, output=tmp_path / "digits_q.qrt")
    assert digits_f32.to_mlir() == before  # the float model is not changed
    text = q.to_mlir()
    assert "!quant.uniform<u8" in text and "quant.stats" not in text
    kernels = [op.kernel for op in q.compile().ops if op.op == "qrt.conv2d"]
    assert kernels and all("qu8" in k for k in kernels)  # integer convolutions
    q_accuracy = accuracy(q.compile(), x[100:], y[100:])
    assert q_accuracy >= float_accuracy - 0.02
    saved = qrt.Model(tmp_path / "digits_q.qrt")
    np.testing.assert_array_equal(saved.compile().run(x[100:110])["logits"], q.compile().run(x[100:110])["logits"])


def test_quantize_i8_activations_and_batches_iterable(digits_f32, digits_data):
    x, y = digits_data
    batches = ({"input": x[i:i + 50]} for i in range(0, 100, 50))
    q = qrt.quantize(digits_f32, batches, activations="i8")
    assert "!quant.uniform<i8" in q.to_mlir()
    assert accuracy(q.compile(), x[100:], y[100:]) > 0.9


def test_quantize_samples_and_passes(digits_f32, digits_data):
    x, y = digits_data
    few = qrt.quantize(digits_f32, {"input": x}, samples=40, batch_size=16)
    assert accuracy(few.compile(), x[100:], y[100:]) > 0.9
    # Without the final integer check and folding, the calibrated graph keeps its QDQ casts.
    qdq = qrt.quantize(digits_f32, x[:40], passes="calibrate,fake-quant,propagate")
    assert "quant.qcast" in qdq.to_mlir() and "quant.stats" not in qdq.to_mlir()
    with pytest.raises(qrt.InvalidArgumentError, match="samples= needs arrays"):
        qrt.quantize(digits_f32, iter([x[:10]]), samples=5)
    with pytest.raises(qrt.InvalidArgumentError, match="batch_size"):
        qrt.quantize(digits_f32, x[:10], batch_size=0)


def test_calibrate_then_pipeline_by_hand(digits_f32, digits_data):
    x, _ = digits_data
    assert qrt.calibrate(digits_f32, [x[:20], [x[20:40]], {"input": x[40:60]}]) == 3
    assert "quant.stats" in digits_f32.to_mlir()
    digits_f32.apply_passes(qrt.calibration_pipeline())
    assert "quant.stats" not in digits_f32.to_mlir()


def test_calibration_errors(digits_f32, digits_data):
    x, _ = digits_data
    with pytest.raises(qrt.InvalidArgumentError, match="no calibration batches"):
        qrt.calibrate(digits_f32, [])
    with pytest.raises(qrt.InvalidArgumentError, match="float64"):
        qrt.calibrate(digits_f32, [x[:10].astype(np.float64)])
    with pytest.raises(qrt.InvalidArgumentError, match="unknown input name"):
        qrt.calibrate(digits_f32, [{"image": x[:10]}])
    with pytest.raises(qrt.InvalidArgumentError, match="activations"):
        qrt.quantize(digits_f32, x[:10], activations="i4")
    with pytest.raises(qrt.InvalidArgumentError, match="no calibration samples"):
        qrt.quantize(digits_f32, x[:0])
    with pytest.raises(qrt.InvalidArgumentError, match="shape"):
        qrt.quantize(digits_f32, np.zeros((10, 3, 8, 8), np.float32))


def test_quantize_weights_i4_blocks(models, digits_data):
    x, y = digits_data
    x = x.reshape(len(x), 64)  # the MLP takes flat images
    mlp = qrt.Model(models / "onnx" / "digits_mlp_f32.onnx")
    w4 = qrt.quantize_weights(mlp, "i4", block=16)
    plan = w4.compile()
    assert any("wogemm" in op.kernel or "qs4w" in op.kernel for op in plan.ops), [op.kernel for op in plan.ops]
    assert accuracy(plan, x, y) >= accuracy(mlp.compile(), x, y) - 0.03
    assert plan.weight_memory["constant_bytes"] < mlp.compile().weight_memory["constant_bytes"] / 4
    with pytest.raises(qrt.InvalidArgumentError, match="bits"):
        qrt.quantize_weights(mlp, "i3")
    with pytest.raises(qrt.InvalidArgumentError, match="search"):
        qrt.quantize_weights(mlp, "i8", search="gptq")
