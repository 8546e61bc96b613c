"""Plan and Context: running, outputs, profiles, ISA levels and the errors of bad inputs."""

import numpy as np
import pytest

import qrt
from conftest import PER_AXIS_TEXT, accuracy


def test_digits_demo_classifies(digits_cnn, models):
    plan = digits_cnn.compile(threads=2)
    x = np.load(models / "onnx" / "digits_demo_x.npy")
    out = plan.run({"input": x})
    assert list(out) == ["logits"]
    assert out["logits"].shape == (4, 10) and out["logits"].dtype == np.float32
    assert out["logits"].argmax(axis=1).tolist() == [1, 4, 5, 6]  # the README's example


def test_every_isa_level_gives_the_reference_bytes(models):
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    x = np.random.default_rng(1).integers(-128, 128, size=m.inputs[0].shape, dtype=np.int8)
    want = m.compile(backend="ref").run(x)
    levels = qrt.host_isas()
    assert len(levels) >= 2  # at least one JIT level besides scalar on hosts that run CI
    for isa in levels:
        for threads in (1, 3):
            got = m.compile(isa=isa, threads=threads).run(x)
            for name in want:
                np.testing.assert_array_equal(got[name], want[name], err_msg=f"isa={isa} threads={threads}")


def test_run_accepts_dict_list_and_single_array(mlp, ):
    plan = mlp.compile()
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    by_name = plan.run({"x": x})["out"]
    np.testing.assert_array_equal(plan.run([x])["out"], by_name)
    np.testing.assert_array_equal(plan.run(x)["out"], by_name)
    assert by_name.shape == (2, 3)


def test_non_contiguous_inputs_are_copied_once(mlp):
    plan = mlp.compile()
    base = np.random.default_rng(2).uniform(-1, 1, size=(4, 2)).astype(np.float32)
    transposed = base.T  # a view: not C-contiguous
    assert not transposed.flags.c_contiguous
    np.testing.assert_array_equal(plan.run(transposed)["out"], plan.run(np.ascontiguousarray(transposed))["out"])


def test_outputs_are_new_arrays_each_run(mlp):
    plan = mlp.compile()
    a = plan.run(np.zeros((2, 4), np.float32))["out"]
    a_copy = a.copy()
    b = plan.run(np.ones((2, 4), np.float32))["out"]
    assert not np.shares_memory(a, b)
    np.testing.assert_array_equal(a, a_copy)
    assert not np.array_equal(a, b)


def test_dynamic_batch_sizes(digits_cnn, digits_data):
    plan = digits_cnn.compile()
    x, y = digits_data
    whole = plan.run(x[:7])["logits"]
    assert whole.shape == (7, 10)
    np.testing.assert_array_equal(plan.run(x[:3])["logits"], whole[:3])
    assert accuracy(plan, x, y) > 0.9


def test_a_batch_run_twice_takes_a_static_plan_with_the_same_results(digits_cnn, digits_data):
    x, _ = digits_data
    walk = digits_cnn.compile(specialize=False)
    plan = digits_cnn.compile()
    for start in range(0, 20, 4):  # batches of 4 images, new ones each run
        np.testing.assert_array_equal(plan.run(x[start:start + 4])["logits"], walk.run(x[start:start + 4])["logits"])
    assert plan.specializations == 1
    assert walk.specializations == 0


def test_row_fusion_gives_the_same_bytes_in_no_larger_arena(models):
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    x = np.random.default_rng(7).integers(-128, 128, m.inputs[0].shape, dtype=np.int8)
    apart, fused = m.compile(), m.compile(row_fusion=True)
    assert not any("row fusion" in op.kernel for op in apart.ops)
    assert any("row fusion" in op.kernel for op in fused.ops)
    name = m.outputs[0].name
    np.testing.assert_array_equal(fused.run(x)[name], apart.run(x)[name])
    # Never a larger arena; smaller where the fused pair's tensor sets the peak (it does at the
    # VNNI levels; on an AVX2-only host another tensor sets it: 54 KiB both ways, AMD Zen 3).
    assert fused.memory["arena_bytes"] <= apart.memory["arena_bytes"]


def test_measured_and_fixed_splits_give_the_same_bytes_through_the_probe(models):
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    x = np.random.default_rng(3).integers(-128, 128, m.inputs[0].shape, dtype=np.int8)
    name = m.outputs[0].name
    want = m.compile().run(x)[name]
    for plan in (m.compile(threads=2), m.compile(threads=2, measured_split=False)):
        for _ in range(10):  # past the 8 runs of the first probe
            np.testing.assert_array_equal(plan.run(x)[name], want)


def test_quantized_inputs_and_outputs_hold_stored_integers():
    m = qrt.Model(PER_AXIS_TEXT.encode())
    x = np.array([[128, 120, 0], [130, 124, 5]], dtype=np.uint8)
    y = m.compile().run(x)[m.outputs[0].name]
    assert y.dtype == np.int8
    # real = (q - zp) * scale per column; out = round(real / 0.1) - 3 (half to even), clamped
    np.testing.assert_array_equal(y, [[-3, -3, -3], [7, 7, 47]])


def test_profile_times_every_op(models):
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    plan = m.compile()
    x = np.zeros(m.inputs[0].shape, np.int8)
    out, profile = plan.run(x, profile=True)
    assert len(profile) == len(plan.ops)
    assert [p.index for p in profile] == list(range(len(plan.ops)))
    assert sum(p.ns for p in profile) > 0 and all(p.ns >= 0 for p in profile)
    convs = [p for p in profile if p.op == "qrt.conv2d"]
    assert convs and all(p.ns > 0 and p.us == p.ns / 1000 for p in convs)
    assert set(out) == {t.name for t in plan.outputs}


def test_plan_describes_kernels_and_memory(models):
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    jit, ref = m.compile(), m.compile(backend="ref")
    convs = [op for op in jit.ops if op.op == "qrt.conv2d"]
    assert convs and all(op.kernel != "reference" and op.ops > 0 for op in convs)
    assert all("chosen" in op.selection for op in convs)
    assert all(op.kernel == "reference" for op in ref.ops if op.op == "qrt.conv2d")
    memory = jit.memory
    assert 0 < memory["arena_bytes"] <= memory["naive_bytes"]
    weights = jit.weight_memory
    assert weights["resident_bytes"] == weights["constant_bytes"] + weights["parameter_bytes"] + weights["kernel_bytes"]
    # The convolutions hold packed copies of their filters, so the plan drops the constants
    # they came from; the reference plan reads the constants themselves.
    assert weights["kernel_bytes"] > 0 and weights["constant_bytes"] == 0
    assert ref.weight_memory["constant_bytes"] > 0 and ref.weight_memory["kernel_bytes"] == 0


def test_wrong_dtype_is_refused_not_converted(mlp):
    plan = mlp.compile()
    with pytest.raises(qrt.InvalidArgumentError) as e:
        plan.run({"x": np.zeros((2, 4), np.float64)})
    assert "'x'" in e.value.message and "float32" in e.value.message and "float64" in e.value.message
    assert e.value.status == 1 and isinstance(e.value, ValueError)


def test_wrong_shape_names_the_input(mlp):
    plan = mlp.compile()
    with pytest.raises(qrt.InvalidArgumentError, match=r"'x' wants shape \[2x4\], got \[2, 5\]"):
        plan.run({"x": np.zeros((2, 5), np.float32)})
    with pytest.raises(qrt.InvalidArgumentError, match="shape"):
        plan.run({"x": np.zeros(8, np.float32)})


def test_unknown_missing_and_extra_inputs(mlp):
    plan = mlp.compile()
    x = np.zeros((2, 4), np.float32)
    with pytest.raises(qrt.InvalidArgumentError, match="unknown input name 'y'"):
        plan.run({"x": x, "y": x})
    with pytest.raises(qrt.InvalidArgumentError, match="'x' is not given"):
        plan.run({})
    with pytest.raises(qrt.InvalidArgumentError, match="2 arrays given for 1 inputs"):
        plan.run([x, x])
    with pytest.raises(qrt.InvalidArgumentError, match="expected a dict"):
        plan.run({1, 2})


def test_quantized_values_outside_narrow_bounds_are_refused():
    narrow = PER_AXIS_TEXT.replace("u8:f32:1", "u8<0:200>:f32:1")
    m = qrt.Model(narrow.encode())
    with pytest.raises(qrt.InvalidArgumentError) as e:
        m.compile().run(np.full((2, 3), 255, np.uint8))
    assert "255" in e.value.message


def test_compile_options_are_checked(mlp):
    with pytest.raises(qrt.InvalidArgumentError, match="backend"):
        mlp.compile(backend="gpu")
    with pytest.raises(qrt.InvalidArgumentError, match="threads"):
        mlp.compile(threads=0)
    with pytest.raises(qrt.InvalidArgumentError, match="unknown ISA level 'avx1024'"):
        mlp.compile(isa="avx1024")
    with pytest.raises(qrt.InvalidArgumentError, match="no-such-pass"):
        mlp.compile(passes="no-such-pass")
    with pytest.raises(qrt.OutOfMemoryError):
        mlp.compile(max_memory=16)


def test_an_isa_the_host_lacks_is_unsupported(mlp):
    foreign = {"neon", "neon-dot", "neon-i8mm", "avx2", "avx2-vnni", "avx512-vnni", "avx512-amx"} - set(qrt.host_isas())
    if not foreign:
        pytest.skip("the host runs every ISA level")
    with pytest.raises(qrt.UnsupportedError) as e:
        mlp.compile(isa=sorted(foreign)[0])
    assert isinstance(e.value, NotImplementedError) and e.value.status_name == "QRT_UNSUPPORTED"


def test_plan_outlives_its_model_and_closes(mlp):
    plan = mlp.compile()
    x = np.ones((2, 4), np.float32)
    want = plan.run(x)["out"]
    mlp.close()
    np.testing.assert_array_equal(plan.run(x)["out"], want)
    context = plan.create_context()
    plan.close()
    with pytest.raises(qrt.InvalidArgumentError, match="closed"):
        plan.run(x)
    with pytest.raises(qrt.InvalidArgumentError, match="closed"):
        context.run(x)
    with pytest.raises(qrt.InvalidArgumentError, match="closed"):
        plan.memory


def test_fusion_off_gives_the_same_bytes(models):
    m = qrt.Model(models / "onnx" / "llm_mlp_nbits.onnx")
    x = np.load(models / "onnx" / "llm_mlp_nbits_x.npy")
    fused = m.compile().run(x)
    unfused = m.compile(fusion=False).run(x)
    for name in fused:
        np.testing.assert_array_equal(fused[name], unfused[name])
    expected = np.load(models / "onnx" / "llm_mlp_nbits_expected.npy")
    np.testing.assert_allclose(fused[m.outputs[0].name], expected, atol=1e-5 * np.abs(expected).max())


def test_quantized_rounding_region_runs_as_a_table():
    """dcast -> round_nearest_afz -> abs -> qcast on i8 (the StableHLO pattern of a quantized
    unary op) becomes one 256-entry table kernel with the reference's bytes on every level."""
    q_in, q_out = "!quant.uniform<i8:f32, 0.05:-7>", "!quant.uniform<i8:f32, 0.04:3>"
    text = f"""func.func @main(%x: tensor<256x{q_in}>) -> tensor<256x{q_out}> {{
  %f = "quant.dcast"(%x) : (tensor<256x{q_in}>) -> tensor<256xf32>
  %r = "qrt.round_nearest_afz"(%f) : (tensor<256xf32>) -> tensor<256xf32>
  %a = "qrt.abs"(%r) : (tensor<256xf32>) -> tensor<256xf32>
  %q = "quant.qcast"(%a) : (tensor<256xf32>) -> tensor<256x{q_out}>
  return %q : tensor<256x{q_out}>
}}
"""
    m = qrt.Model(text.encode())
    x = np.arange(-128, 128, dtype=np.int8)
    want = m.compile(backend="ref").run(x)["q"]
    # round(|(q + 7) * 0.05|) / 0.04 + 3, clamped: e.g. q = -128 -> |-6.05| -> 6 -> 153 -> 127
    expected = np.clip(np.round(np.abs(np.floor(np.abs((x.astype(np.float64) + 7) * 0.05) + 0.5)
                                       * np.sign((x.astype(np.float64) + 7))) / 0.04) + 3, -128, 127)
    np.testing.assert_array_equal(want, expected.astype(np.int8))
    for isa in qrt.host_isas():
        plan = m.compile(isa=isa)
        np.testing.assert_array_equal(plan.run(x)["q"], want, err_msg=isa)
        if isa != "scalar":
            assert any("lut8" in op.kernel for op in plan.ops), [op.kernel for op in plan.ops]


QCAST_TEXT = """func.func @main(%x: tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 1.0:-1>> {
  %0 = "quant.qcast"(%x) : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 1.0:-1>>
  return %0 : tensor<4x!quant.uniform<i8:f32, 1.0:-1>>
}
"""


def test_numerics_profiles(tmp_path):
    m = qrt.Model(QCAST_TEXT.encode(), name="q.mlir")
    x = np.array([0.5, 1.5, 2.5, -0.5], dtype=np.float32)
    assert m.numerics == "default"
    assert m.compile().run(x)["0"].tolist() == [-1, 1, 1, -1]  # rne, then the zero point
    plan = m.compile(numerics="stablehlo")
    assert plan.numerics == "stablehlo"
    assert plan.run(x)["0"].tolist() == [0, 0, 2, -2]  # the zero point, then rne
    assert plan.ops[0].selection.startswith("numerics profile stablehlo")  # a kernel of its formula
    assert plan.ops[0].kernel.startswith("stablehlo dequantize-op-quantize: quantize")
    assert m.compile(numerics="tflite").run(x)["0"].tolist() == [0, 1, 2, -2]  # half away from zero
    with pytest.raises(qrt.InvalidArgumentError, match="unknown numerics profile 'gemmlowp'"):
        m.compile(numerics="gemmlowp")
    m.numerics = "tflite"  # recorded, saved and loaded with the model
    m.save(tmp_path / "q.qrt")
    loaded = qrt.Model(tmp_path / "q.qrt")
    assert loaded.numerics == "tflite"
    assert loaded.compile().numerics == "tflite"
    with pytest.raises(qrt.InvalidArgumentError):
        m.numerics = "nope"
