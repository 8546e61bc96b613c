"""qrt.Model: loading, descriptions, text and binary forms, passes, and their errors."""

import numpy as np
import pytest

import qrt
from conftest import PER_AXIS_TEXT, REPO


def test_version_and_host():
    assert qrt.version() == qrt.__version__
    assert qrt.version().count(".") == 2
    isas = qrt.host_isas()
    assert isas[-1] == "scalar"
    assert "scalar" in qrt.build_info() or "cpu" in qrt.build_info().lower()
    assert "fold-qdq" in qrt.passes_help()
    assert qrt.calibration_pipeline().startswith("calibrate,")


def test_load_onnx_describes_inputs_and_outputs(digits_cnn):
    (x,) = digits_cnn.inputs
    (y,) = digits_cnn.outputs
    assert (x.name, x.shape, x.dtype, x.dtype_name) == ("input", (None, 1, 8, 8), np.float32, "f32")
    assert (y.name, y.shape, y.dtype) == ("logits", (None, 10), np.float32)
    assert x.quant is None and x.scales.size == 0 and not x.is_static
    assert x.type == "tensor<?x1x8x8xf32>"


def test_quantized_per_tensor_input(models):
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    (x,) = m.inputs
    assert x.dtype == np.int8 and x.quant == "per-tensor" and x.axis is None
    assert x.scales.shape == (1,) and x.scales[0] > 0 and x.zero_points.dtype == np.int64
    assert (x.storage_min, x.storage_max) == (-128, 127)
    assert "!quant.uniform<i8:f32" in x.type


def test_per_axis_and_narrow_bounds_from_bytes():
    m = qrt.Model(PER_AXIS_TEXT.encode(), name="per_axis.mlir")
    (x,) = m.inputs
    (y,) = m.outputs
    assert x.quant == "per-axis" and x.axis == 1 and x.dtype == np.uint8
    np.testing.assert_array_equal(x.scales, [0.5, 0.25, 1.0])
    np.testing.assert_array_equal(x.zero_points, [128, 120, 0])
    assert (y.storage_min, y.storage_max, y.zero_points[0]) == (-127, 127, -3)


def test_load_from_bytes_of_every_format(models, tmp_path):
    for path in [models / "onnx" / "digits_cnn_qdq_u8.onnx", models / "tflite-micro" / "person_detect.tflite",
                 REPO / "examples" / "mlp.mlir"]:
        from_file = qrt.Model(path)
        from_bytes = qrt.Model(path.read_bytes())
        assert from_bytes.to_mlir() == from_file.to_mlir()


def test_text_round_trip_and_binary_save(mlp, tmp_path):
    text = mlp.to_mlir()
    assert text.startswith("func.func @main") and "quant.uniform" in text
    assert qrt.Model(text.encode()).to_mlir() == text
    mlp.save(tmp_path / "m.qrt")
    mlp.save(tmp_path / "m.mlir")
    assert (tmp_path / "m.qrt").read_bytes()[:4] != b"func"
    assert (tmp_path / "m.mlir").read_text() == text
    assert qrt.Model(tmp_path / "m.qrt").to_mlir() == text
    copy = mlp.copy()
    mlp.close()
    assert copy.to_mlir() == text
    with pytest.raises(qrt.InvalidArgumentError, match="format"):
        copy.save(tmp_path / "x", format="json")


def test_apply_passes_reports_and_rewrites(models):
    m = qrt.Model(models / "onnx" / "digits_cnn_qdq_u8.onnx")
    before = m.to_mlir()
    report = m.apply_passes(["fold-pad", "fold-qdq"], timing=True)
    assert "timing:" in report
    assert m.to_mlir() != before
    with pytest.raises(qrt.InvalidArgumentError, match="no-such-pass"):
        m.apply_passes("no-such-pass")


def test_missing_file_is_an_io_error(tmp_path):
    with pytest.raises(qrt.IOError) as e:
        qrt.Model(tmp_path / "absent.onnx")
    assert isinstance(e.value, OSError)
    assert e.value.status == 4 and e.value.status_name == "QRT_IO_ERROR"
    assert "absent.onnx" in e.value.message


def test_malformed_text_names_the_place():
    with pytest.raises(qrt.ParseError) as e:
        qrt.Model(b"func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %y : tensor<4xf32>\n}\n",
                  name="bad.mlir")
    assert e.value.status == 2 and "bad.mlir:" in e.value.message
    assert isinstance(e.value, ValueError)


def test_illegal_quant_parameters_are_refused():
    bad = PER_AXIS_TEXT.replace("2.500000e-01:120", "-2.500000e-01:120")
    with pytest.raises(qrt.Error) as e:
        qrt.Model(bad.encode())
    assert e.value.status in (2, 3) and "scale" in e.value.message


def test_memory_budget_is_enforced(models):
    with pytest.raises(qrt.OutOfMemoryError) as e:
        qrt.Model(models / "tflite-micro" / "person_detect.tflite", max_memory=1000)
    assert isinstance(e.value, MemoryError)


def test_closed_model_raises(mlp):
    mlp.close()
    mlp.close()  # closing twice is harmless
    for use in (mlp.to_mlir, mlp.compile, lambda: mlp.save("x.mlir"), mlp.copy):
        with pytest.raises(qrt.InvalidArgumentError, match="closed"):
            use()
    assert "closed" in repr(mlp)


def test_wrong_source_type():
    with pytest.raises(qrt.InvalidArgumentError, match="path or bytes"):
        qrt.Model(42)
