#!/usr/bin/env python3
"""Quantize a float model with calibration data and compare it with the float model.

    python3 examples/evaluate.py                      # the bundled digits CNN
    python3 examples/evaluate.py --calibration 200 --threads 2 --output digits_q.qrt

Loads models/onnx/digits_cnn_f32.onnx, quantizes it (post-training, static: u8 activations,
int8 per-channel weights) on the first --calibration test samples, and evaluates the float
model and the quantized one on the remaining samples: top-1 accuracy, agreement between the
two, and latency (median of --repeat runs at batch 1 and the whole set at once). Prints one
table. Needs the `qrt` package (docs/python.md) and numpy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))  # the package from a source checkout, if not installed
import qrt  # noqa: E402


def median_ms(fn, repeat: int) -> float:
    """The median wall time of `fn()` in milliseconds, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def evaluate(plan: qrt.Plan, x: np.ndarray, y: np.ndarray, repeat: int) -> dict:
    """Accuracy, predictions and latencies of a classifier plan."""
    name_in, name_out = plan.inputs[0].name, plan.outputs[0].name
    predictions = plan.run({name_in: x})[name_out].argmax(axis=1)
    one = x[:1]
    return {
        "accuracy": float((predictions == y).mean()),
        "predictions": predictions,
        "batch1_ms": median_ms(lambda: plan.run({name_in: one}), repeat),
        "batch_ms": median_ms(lambda: plan.run({name_in: x}), max(repeat // 10, 3)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(REPO / "models/onnx/digits_cnn_f32.onnx"), help="float ONNX model")
    parser.add_argument("--data", default=str(REPO / "models/onnx/digits_test_x.npy"), help="samples (.npy)")
    parser.add_argument("--labels", default=str(REPO / "models/onnx/digits_test_y.npy"), help="labels (.npy)")
    parser.add_argument("--calibration", type=int, default=100, help="samples used to calibrate (default 100)")
    parser.add_argument("--activations", choices=["u8", "i8"], default="u8", help="activation storage")
    parser.add_argument("--threads", type=int, default=1, help="threads per run (default 1)")
    parser.add_argument("--repeat", type=int, default=200, help="timed runs at batch 1 (default 200)")
    parser.add_argument("--output", help="also save the quantized model (.qrt or .mlir)")
    args = parser.parse_args(argv)

    x, y = np.load(args.data), np.load(args.labels)
    if not 0 < args.calibration < len(x):
        parser.error(f"--calibration must be between 1 and {len(x) - 1} (the data has {len(x)} samples)")
    calibration, test_x, test_y = x[:args.calibration], x[args.calibration:], y[args.calibration:]

    float_model = qrt.Model(args.model)
    start = time.perf_counter()
    quantized = qrt.quantize(float_model, calibration, activations=args.activations, output=args.output)
    quantize_s = time.perf_counter() - start

    rows = []
    for label, model in (("float (f32)", float_model), (f"quantized ({args.activations})", quantized)):
        plan = model.compile(threads=args.threads)
        result = evaluate(plan, test_x, test_y, args.repeat)
        result["label"] = label
        result["weights_kib"] = plan.weight_memory["resident_bytes"] / 1024
        rows.append(result)
    agreement = float((rows[0]["predictions"] == rows[1]["predictions"]).mean())

    print(f"{Path(args.model).name}: calibrated on {len(calibration)} samples in {quantize_s:.2f} s, "
          f"tested on {len(test_x)}; qrt {qrt.version()}, {args.threads} thread(s), ISA {qrt.host_isas()[0]}")
    print(f"| model | accuracy | batch 1 (ms) | batch {len(test_x)} (ms) | weights (KiB) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['label']} | {100 * r['accuracy']:.1f}% | {r['batch1_ms']:.4f} | {r['batch_ms']:.3f} | "
              f"{r['weights_kib']:.1f} |")
    print(f"accuracy change: {100 * (rows[1]['accuracy'] - rows[0]['accuracy']):+.1f} points; "
          f"the two agree on {100 * agreement:.1f}% of the samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
