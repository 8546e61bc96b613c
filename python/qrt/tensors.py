"""Tensor descriptions and the numpy side of qrt's tensors: dtypes, shapes, input checks.

Quantized tensors hold their stored integers (int8 for `i8` storage, uint8 for `u8`), as in
qrun's .npy files. numpy has no bfloat16: bf16 tensors are uint16 arrays of the raw bits.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from . import _capi
from .errors import InvalidArgumentError

# qrt_dtype -> (name, numpy dtype).
_DTYPES = {
    1: ("f16", np.dtype(np.float16)),
    2: ("bf16", np.dtype(np.uint16)),
    3: ("f32", np.dtype(np.float32)),
    4: ("f64", np.dtype(np.float64)),
    5: ("i8", np.dtype(np.int8)),
    6: ("i16", np.dtype(np.int16)),
    7: ("i32", np.dtype(np.int32)),
    8: ("i64", np.dtype(np.int64)),
    9: ("u8", np.dtype(np.uint8)),
    10: ("u16", np.dtype(np.uint16)),
    11: ("u32", np.dtype(np.uint32)),
    12: ("u64", np.dtype(np.uint64)),
    13: ("bool", np.dtype(np.bool_)),
}


def numpy_dtype(qrt_dtype: int) -> np.dtype:
    """The numpy dtype that holds one element of `qrt_dtype`."""
    if qrt_dtype not in _DTYPES:
        raise InvalidArgumentError(f"qrt dtype {qrt_dtype} has no numpy equivalent")
    return _DTYPES[qrt_dtype][1]


@dataclass(frozen=True)
class TensorInfo:
    """A model input or output, as qrt_model_input_info describes it.

    `shape` has None for dynamic dimensions. `quant` is None, "per-tensor" or "per-axis";
    `scales` (float64) and `zero_points` (int64) hold one entry per tensor or per index along
    `axis`, and are empty for tensors that are not quantized. `storage_min`/`storage_max` are
    the legal stored values of quantized tensors. `type` is the MLIR type, e.g.
    "tensor<1x4x!quant.uniform<i8:f32, 5.000000e-01>>".
    """

    name: str
    type: str
    dtype: np.dtype
    dtype_name: str
    shape: tuple
    quant: str | None = None
    axis: int | None = None
    scales: np.ndarray = field(default_factory=lambda: np.zeros(0))
    zero_points: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    storage_min: int | None = None
    storage_max: int | None = None
    _qrt_dtype: int = 0

    @property
    def is_static(self) -> bool:
        """Whether every dimension is known before a run."""
        return all(d is not None for d in self.shape)

    def __repr__(self) -> str:
        return f"TensorInfo(name={self.name!r}, shape={self.shape}, dtype={self.dtype_name}, type={self.type!r})"


def tensor_info_from_c(info: _capi.TensorInfo) -> TensorInfo:
    """Copies a qrt_tensor_info (whose pointers live only as long as the model)."""
    dims = tuple(None if info.dims[i] < 0 else int(info.dims[i]) for i in range(info.rank))
    name, dtype = _DTYPES.get(info.dtype, ("invalid", np.dtype(np.uint8)))
    quant = {_capi.QRT_QUANT_PER_TENSOR: "per-tensor", _capi.QRT_QUANT_PER_AXIS: "per-axis"}.get(info.quant)
    count = info.quant_count if quant else 0
    scales = np.array([info.scales[i] for i in range(count)], dtype=np.float64)
    zero_points = np.array([info.zero_points[i] for i in range(count)], dtype=np.int64)
    return TensorInfo(name=info.name.decode(), type=info.type.decode(), dtype=dtype, dtype_name=name, shape=dims,
                      quant=quant, axis=info.quant_axis if quant == "per-axis" else None, scales=scales,
                      zero_points=zero_points, storage_min=int(info.storage_min) if quant else None,
                      storage_max=int(info.storage_max) if quant else None, _qrt_dtype=info.dtype)


def by_input_order(infos: Sequence[TensorInfo], values: Any, what: str) -> list:
    """The arrays of `values` in input order. `values` is a mapping from input names, a
    sequence with one array per input, or a single array when there is one input."""
    names = [t.name for t in infos]
    if isinstance(values, Mapping):
        unknown = [k for k in values if k not in names]
        if unknown:
            raise InvalidArgumentError(f"{what}: unknown input name {unknown[0]!r}; the model's inputs are {names}")
        missing = [n for n in names if n not in values]
        if missing:
            raise InvalidArgumentError(f"{what}: input {missing[0]!r} is not given; the model's inputs are {names}")
        return [values[n] for n in names]
    if isinstance(values, np.ndarray) or np.isscalar(values):
        if len(names) != 1:
            raise InvalidArgumentError(f"{what}: one array given, but the model has {len(names)} inputs {names}; "
                                       "pass a dict {name: array}")
        return [values]
    if isinstance(values, (list, tuple)):
        if len(values) != len(names):
            raise InvalidArgumentError(f"{what}: {len(values)} arrays given for {len(names)} inputs {names}")
        return list(values)
    raise InvalidArgumentError(f"{what}: expected a dict {{name: array}}, a list of arrays or an array, "
                               f"got {type(values).__name__}")


def checked_array(info: TensorInfo, value: Any, what: str) -> np.ndarray:
    """`value` as a C-contiguous array of the input's dtype, without a copy where it already
    is one. A different dtype is an error, not a silent conversion."""
    array = np.asarray(value)
    if array.dtype != info.dtype:
        raise InvalidArgumentError(
            f"{what}: input {info.name!r} wants dtype {info.dtype} ({info.dtype_name}, {info.type}), got {array.dtype}; "
            f"convert it with .astype(numpy.{info.dtype.name})")
    if array.ndim != len(info.shape) or any(want is not None and want != got for want, got in zip(info.shape, array.shape)):
        shape = "x".join("?" if d is None else str(d) for d in info.shape)
        raise InvalidArgumentError(f"{what}: input {info.name!r} wants shape [{shape}], got {list(array.shape)}")
    if not (array.flags.c_contiguous and array.flags.aligned):
        array = np.ascontiguousarray(array)
    return array


def dims_of(array: np.ndarray):
    """The shape of `array` as the int64[] qrt takes (keep it alive across the call)."""
    return (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)


def view_of(info: TensorInfo, array: np.ndarray, dims) -> _capi.TensorView:
    """A qrt_tensor_view of a checked array."""
    return _capi.TensorView(info._qrt_dtype, array.ndim, ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64)),
                            array.ctypes.data, array.nbytes)


def array_from_view(view: _capi.TensorView) -> np.ndarray:
    """A copy of a qrt_tensor_view (whose memory qrt reuses on the next run)."""
    shape = tuple(view.dims[i] for i in range(view.rank))
    out = np.empty(shape, dtype=numpy_dtype(view.dtype))
    if view.bytes:
        ctypes.memmove(out.ctypes.data, view.data, min(view.bytes, out.nbytes))
    return out
