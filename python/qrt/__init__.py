"""qrt: a JIT-compiling quantized execution runtime, from Python.

    import numpy as np, qrt
    model = qrt.Model("models/onnx/digits_cnn_qdq_u8.onnx")
    plan = model.compile(threads=2)
    logits = plan.run({"input": np.zeros((1, 1, 8, 8), np.float32)})["logits"]

The package calls libqrt through its C API (include/qrt.h) with ctypes; see docs/python.md.
"""

from . import _capi
from .errors import (Error, InternalError, InvalidArgumentError, IOError, OutOfMemoryError, ParseError, RuntimeError,
                     UnsupportedError, VerifyError)
from .model import Model
from .plan import Context, OpInfo, OpTime, Plan
from .quantize import calibrate, calibration_pipeline, passes_help, quantize, quantize_weights
from .tensors import TensorInfo


def version() -> str:
    """The library's version, e.g. "0.1.0"."""
    return _capi.lib.qrt_version().decode()


def build_info() -> str:
    """A multi-line description of the build and the host (CPU features, LLVM)."""
    return _capi.lib.qrt_build_info().decode()


def host_isas() -> list[str]:
    """The ISA levels this host can run, most capable first, e.g. ["avx512-vnni", "avx2", "scalar"]."""
    return [s.strip() for s in _capi.lib.qrt_host_isas().decode().split(",") if s.strip()]


__version__ = version()
__all__ = ["Model", "Plan", "Context", "TensorInfo", "OpInfo", "OpTime", "calibrate", "quantize",
           "quantize_weights", "calibration_pipeline", "passes_help", "version", "build_info", "host_isas",
           "Error", "InvalidArgumentError", "ParseError", "VerifyError", "IOError", "UnsupportedError",
           "RuntimeError", "OutOfMemoryError", "InternalError"]
