"""Shared fixtures of the Python package's tests (python/tests/run_pytest.py runs them)."""

from pathlib import Path

import numpy as np
import pytest

import qrt

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "models"

# A graph whose input is quantized per axis and whose output is quantized per tensor.
PER_AXIS_TEXT = """
func.func @main(%x: tensor<2x3x!quant.uniform<u8:f32:1, {5.000000e-01:128,2.500000e-01:120,1.000000e+00:0}>>)
    -> tensor<2x3x!quant.uniform<i8<-127:127>:f32, 1.000000e-01:-3>> {
  %f = "quant.dcast"(%x) : (tensor<2x3x!quant.uniform<u8:f32:1, {5.000000e-01:128,2.500000e-01:120,1.000000e+00:0}>>) -> tensor<2x3xf32>
  %q = "quant.qcast"(%f) : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8<-127:127>:f32, 1.000000e-01:-3>>
  return %q : tensor<2x3x!quant.uniform<i8<-127:127>:f32, 1.000000e-01:-3>>
}
"""


@pytest.fixture(scope="session")
def models() -> Path:
    return MODELS


@pytest.fixture
def digits_cnn(models):
    with qrt.Model(models / "onnx" / "digits_cnn_qdq_u8.onnx") as m:
        yield m


@pytest.fixture(scope="session")
def digits_data(models):
    return np.load(models / "onnx" / "digits_test_x.npy"), np.load(models / "onnx" / "digits_test_y.npy")


@pytest.fixture
def mlp(tmp_path):
    return qrt.Model(REPO / "examples" / "mlp.mlir")


def accuracy(plan: qrt.Plan, x: np.ndarray, y: np.ndarray) -> float:
    """Top-1 accuracy of a classifier plan over samples x with labels y."""
    logits = plan.run({plan.inputs[0].name: x})[plan.outputs[0].name]
    return float((logits.argmax(axis=1) == y).mean())
