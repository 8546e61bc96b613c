"""Post-training quantization from Python: `qrt.calibrate`, `qrt.quantize`,
`qrt.quantize_weights` (the library calls behind `qopt --calibrate` and `qopt --weight-only`)."""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping

import numpy as np

from . import _capi
from .errors import InvalidArgumentError
from .model import Model
from .tensors import by_input_order, checked_array, dims_of, view_of

_lib = _capi.lib


def calibrate(model: Model, batches: Iterable[Any]) -> int:
    """Runs the float `model` on each batch (on the reference backend) and records the range
    of every float value in the graph, widening what earlier calls recorded. Each batch is a
    dict {input name: array}, a list of arrays in input order, or one array for a
    single-input model, with any batch size the inputs' types allow. Returns the number of
    batches. Then apply `qrt.calibration_pipeline()` (or call `qrt.quantize`)."""
    count = 0
    for batch in batches:
        arrays = by_input_order(model.inputs, batch, "calibrate")
        # A batch may differ from the declared shape only in dynamic dimensions, as at run time.
        arrays = [checked_array(info, a, "calibrate") for info, a in zip(model.inputs, arrays)]
        dims = [dims_of(a) for a in arrays]
        views = (_capi.TensorView * max(len(arrays), 1))(
            *[view_of(info, a, d) for info, a, d in zip(model.inputs, arrays, dims)])
        _lib.qrt_model_calibrate(model.handle, views, len(arrays))
        count += 1
    if count == 0:
        raise InvalidArgumentError("calibrate: no calibration batches given")
    return count


def _batches(model: Model, data: Any, batch_size: int, samples: int | None):
    """Batches from arrays whose first axis counts samples (one array, a dict or a list, one
    per input), or the items of any other iterable as they are."""
    if not isinstance(data, (np.ndarray, Mapping, list, tuple)):
        if samples is not None:
            raise InvalidArgumentError("quantize: samples= needs arrays of samples, not an iterable of batches")
        yield from data
        return
    arrays = [np.asarray(a) for a in by_input_order(model.inputs, data, "quantize")]
    count = min(a.shape[0] if a.ndim else 0 for a in arrays)
    if samples is not None:
        count = min(count, int(samples))
    if count <= 0:
        raise InvalidArgumentError("quantize: no calibration samples (arrays need a leading sample axis)")
    leading = {info.shape[0] for info in model.inputs if info.shape and info.shape[0] is not None}
    if len(leading) > 1:
        raise InvalidArgumentError(f"quantize: the inputs' static batch sizes differ ({sorted(leading)})")
    # A static batch dimension fixes the batch; samples that do not fill the last batch are left out.
    static = bool(leading)
    size = leading.pop() if static else int(batch_size)
    if size < 1:
        raise InvalidArgumentError(f"quantize: batch_size must be at least 1, got {batch_size}")
    for start in range(0, count, size):
        stop = min(start + size, count)
        if static and stop - start < size:
            break
        yield [a[start:stop] for a in arrays]


def quantize(model: Model, calibration_data: Any, *, activations: str = "u8", batch_size: int = 100,
             samples: int | None = None, output: str | os.PathLike | None = None,
             passes: str | None = None) -> Model:
    """Post-training static quantization of a float model; `model` itself is not changed.

    calibration_data: arrays of samples along the first axis (one array for a single-input
    model, a dict {input name: array} or a list in input order), split into batches of
    `batch_size` (or the inputs' static batch size), optionally only the first `samples`; or
    any other iterable of batches as `qrt.calibrate` takes them. activations: storage of the
    quantized activations, "u8" or "i8". passes: the pipeline to apply after calibration
    (default `qrt.calibration_pipeline()`). output: also save the result (.qrt: the binary
    container, else MLIR text). Returns the quantized model."""
    if activations not in ("u8", "i8"):
        raise InvalidArgumentError(f"quantize: activations must be 'u8' or 'i8', got {activations!r}")
    if passes is None:
        passes = calibration_pipeline().replace("propagate", "propagate{activations=" + activations + "}", 1)

    def rewrite(quantized: Model) -> None:
        calibrate(quantized, _batches(quantized, calibration_data, batch_size, samples))
        quantized.apply_passes(passes)

    return _derived(model, rewrite, output)


def quantize_weights(model: Model, bits: str = "i8", *, block: int = 0, symmetric: bool = False,
                     search: str = "rtn", output: str | os.PathLike | None = None) -> Model:
    """Weight-only quantization (`qopt --weight-only`): float matmul weights and conv filters
    become `bits` ("i8", "u8", "i4" or "u4") with one scale per output channel, or per `block`
    weights along K for matmuls; activations stay float and the weight-only kernels read the
    weights packed. search: "rtn" (round to nearest) or "mse" (least-squares clipping).
    `model` is not changed; returns the new model (and saves it to `output` if given)."""
    if bits not in ("i8", "u8", "i4", "u4"):
        raise InvalidArgumentError(f"quantize_weights: bits must be i8, u8, i4 or u4, got {bits!r}")
    if search not in ("rtn", "mse"):
        raise InvalidArgumentError(f"quantize_weights: search must be 'rtn' or 'mse', got {search!r}")
    if int(block) < 0:
        raise InvalidArgumentError(f"quantize_weights: block must be 0 (per channel) or positive, got {block}")
    passes = f"quantize-weights{{bits={bits} block={int(block)} symmetric={'true' if symmetric else 'false'} search={search}}}"
    return _derived(model, lambda quantized: quantized.apply_passes(passes), output)


def _derived(model: Model, rewrite, output) -> Model:
    """A copy of `model` rewritten by `rewrite(copy)` and saved to `output` if given; the copy
    is freed if any step fails."""
    result = model.copy()
    try:
        rewrite(result)
        if output is not None:
            result.save(output)
    except BaseException:
        result.close()
        raise
    return result


def calibration_pipeline() -> str:
    """The passes that quantize a calibrated model, e.g.
    "calibrate,fake-quant,propagate,fold-pad,fold-qdq,check-integer"."""
    return _lib.qrt_calibration_pipeline().decode()


def passes_help() -> str:
    """One line per graph pass a pipeline may name."""
    return _lib.qrt_passes_help().decode()
