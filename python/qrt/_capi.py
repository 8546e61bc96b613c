"""ctypes declarations of qrt's C API (include/qrt.h) and how the package finds libqrt.

Everything in the package talks to qrt through this module and only through the functions
declared in include/qrt.h, the stable boundary. Each call that returns a qrt_status raises
the matching `qrt.Error` subclass, carrying the status and qrt's message, when it fails.
ctypes releases the GIL during every foreign call, so runs on different contexts proceed in
parallel from Python threads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t,
                    c_uint, c_uint64, c_void_p)
from pathlib import Path

from .errors import error_for_status

# Enum values of include/qrt.h.
QRT_OK = 0
QRT_FORMAT_TEXT, QRT_FORMAT_BINARY = 0, 1
QRT_QUANT_NONE, QRT_QUANT_PER_TENSOR, QRT_QUANT_PER_AXIS = 0, 1, 2
QRT_PLAN_NO_FUSION = 1
QRT_PLAN_NO_SPECIALIZATION = 2
QRT_PLAN_ROW_FUSION = 4
QRT_PLAN_FIXED_SPLIT = 8
QRT_PASSES_PRINT_IR_AFTER_ALL, QRT_PASSES_TIMING = 1, 2
BACKENDS = {"default": 0, "ref": 1, "jit": 2, "llvm": 3}


class TensorInfo(Structure):
    """qrt_tensor_info."""
    _fields_ = [("name", c_char_p), ("type", c_char_p), ("dtype", c_int), ("rank", c_size_t),
                ("dims", POINTER(c_int64)), ("quant", c_int), ("quant_axis", c_int32),
                ("quant_count", c_size_t), ("scales", POINTER(c_double)),
                ("zero_points", POINTER(c_int64)), ("storage_min", c_int64), ("storage_max", c_int64)]


class TensorView(Structure):
    """qrt_tensor_view."""
    _fields_ = [("dtype", c_int), ("rank", c_size_t), ("dims", POINTER(c_int64)), ("data", c_void_p),
                ("bytes", c_size_t)]


class PlanOptions(Structure):
    """qrt_plan_options."""
    _fields_ = [("struct_size", c_size_t), ("backend", c_int), ("threads", c_size_t), ("passes", c_char_p),
                ("isa", c_char_p), ("flags", c_uint), ("max_memory", c_size_t), ("numerics", c_char_p)]


class MemoryInfo(Structure):
    """qrt_memory_info."""
    _fields_ = [("arena_bytes", c_size_t), ("naive_bytes", c_size_t), ("in_place", c_size_t)]


class WeightMemory(Structure):
    """qrt_weight_memory."""
    _fields_ = [("struct_size", c_size_t), ("constant_bytes", c_size_t), ("parameter_bytes", c_size_t),
                ("kernel_bytes", c_size_t)]


class OpInfo(Structure):
    """qrt_op_info."""
    _fields_ = [("op", c_char_p), ("kernel", c_char_p), ("reason", c_char_p), ("ops", c_uint64)]


class LoadOptions(Structure):
    """qrt_load_options."""
    _fields_ = [("struct_size", c_size_t), ("max_memory", c_size_t)]


def _candidates() -> list[str]:
    """Where libqrt may be, in the order tried."""
    found = []
    env = os.environ.get("QRT_LIBRARY")
    if env:
        return [env]  # an explicit choice is the only one tried, so a wrong path is an error
    try:  # written by `meson install`: the library installed beside this package
        from . import _build_config  # type: ignore[attr-defined]
        found.append(_build_config.LIBRARY)
    except ImportError:
        pass
    # A source checkout: python/qrt/ next to build/runtime/ (scripts/bootstrap.sh's build).
    found.append(str(Path(__file__).resolve().parents[2] / "build" / "runtime" / "libqrt.so"))
    system = ctypes.util.find_library("qrt")
    if system:
        found.append(system)
    return found


def _load() -> ctypes.CDLL:
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (no such file)")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("qrt: cannot load libqrt; tried " + "; ".join(tried or ["nothing"]) +
                      ". Build it (bash scripts/bootstrap.sh), install it (meson install -C build) "
                      "or set QRT_LIBRARY to the path of libqrt.so")


lib = _load()


def _check(status, func, args):
    if status != QRT_OK:
        raise error_for_status(status, lib.qrt_last_error_message().decode("utf-8", "replace"))
    return status


def _declare(name: str, argtypes: list, restype=c_int) -> None:
    f = getattr(lib, name)
    f.argtypes = argtypes
    f.restype = restype
    if restype is c_int:  # every int-returning function of qrt.h returns a qrt_status
        f.errcheck = _check


_model_p, _plan_p, _context_p = c_void_p, c_void_p, c_void_p
for _name, _args, _res in [
    ("qrt_host_isas", [], c_char_p),
    ("qrt_version", [], c_char_p),
    ("qrt_build_info", [], c_char_p),
    ("qrt_status_string", [c_int], c_char_p),
    ("qrt_last_error_message", [], c_char_p),
    ("qrt_dtype_size", [c_int], c_size_t),
    ("qrt_dtype_name", [c_int], c_char_p),
    ("qrt_free", [c_void_p], None),
    ("qrt_load_options_init", [POINTER(LoadOptions)], None),
    ("qrt_model_load_file_ex", [c_char_p, POINTER(LoadOptions), POINTER(_model_p)], c_int),
    ("qrt_model_load_buffer_ex", [c_char_p, c_size_t, c_char_p, POINTER(LoadOptions), POINTER(_model_p)], c_int),
    ("qrt_model_destroy", [_model_p], None),
    ("qrt_model_save", [_model_p, c_char_p, c_int], c_int),
    ("qrt_model_print", [_model_p, POINTER(POINTER(c_char))], c_int),
    ("qrt_model_apply_passes_ex", [_model_p, c_char_p, c_uint, POINTER(POINTER(c_char))], c_int),
    ("qrt_passes_help", [], c_char_p),
    ("qrt_calibration_pipeline", [], c_char_p),
    ("qrt_model_calibrate", [_model_p, POINTER(TensorView), c_size_t], c_int),
    ("qrt_model_num_inputs", [_model_p, POINTER(c_size_t)], c_int),
    ("qrt_model_num_outputs", [_model_p, POINTER(c_size_t)], c_int),
    ("qrt_model_input_info", [_model_p, c_size_t, POINTER(TensorInfo)], c_int),
    ("qrt_model_output_info", [_model_p, c_size_t, POINTER(TensorInfo)], c_int),
    ("qrt_plan_options_init", [POINTER(PlanOptions)], None),
    ("qrt_plan_create", [_model_p, POINTER(PlanOptions), POINTER(_plan_p)], c_int),
    ("qrt_plan_num_ops", [_plan_p, POINTER(c_size_t)], c_int),
    ("qrt_plan_numerics", [_plan_p, POINTER(c_char_p)], c_int),
    ("qrt_model_numerics", [_model_p, POINTER(c_char_p)], c_int),
    ("qrt_model_set_numerics", [_model_p, c_char_p], c_int),
    ("qrt_plan_op_info", [_plan_p, c_size_t, POINTER(OpInfo)], c_int),
    ("qrt_plan_op_selection", [_plan_p, c_size_t, POINTER(c_char_p)], c_int),
    ("qrt_plan_memory_info", [_plan_p, POINTER(MemoryInfo)], c_int),
    ("qrt_plan_num_specializations", [_plan_p, POINTER(c_size_t)], c_int),
    ("qrt_plan_weight_memory", [_plan_p, POINTER(WeightMemory)], c_int),
    ("qrt_plan_destroy", [_plan_p], None),
    ("qrt_context_create", [_plan_p, POINTER(_context_p)], c_int),
    ("qrt_context_destroy", [_context_p], None),
    ("qrt_context_bind_input", [_context_p, c_size_t, c_int, c_size_t, POINTER(c_int64), c_void_p, c_size_t], c_int),
    ("qrt_context_bind_output", [_context_p, c_size_t, c_void_p, c_size_t], c_int),
    ("qrt_context_run", [_context_p], c_int),
    ("qrt_context_output", [_context_p, c_size_t, POINTER(TensorView)], c_int),
    ("qrt_context_op_time", [_context_p, c_size_t, POINTER(c_uint64)], c_int),
]:
    _declare(_name, _args, _res)


def take_string(p) -> str:
    """The text of a char* qrt allocated (qrt_model_print, reports), freed with qrt_free."""
    if not p:
        return ""
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        lib.qrt_free(p)


def status_name(status: int) -> str:
    """"QRT_PARSE_ERROR" for 2, as qrt_status_string names it."""
    return lib.qrt_status_string(status).decode()
