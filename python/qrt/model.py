"""`qrt.Model`: a graph loaded from a file or from bytes (MLIR text, .qrt, ONNX, TFLite)."""

from __future__ import annotations

import ctypes
import os
import tempfile
from typing import Iterable

from . import _capi
from .errors import InvalidArgumentError
from .tensors import TensorInfo, tensor_info_from_c

_lib = _capi.lib


def _passes_string(passes) -> str | None:
    """A pass pipeline as qrt takes it: a comma-separated string or a list of pass names."""
    if passes is None or isinstance(passes, str):
        return passes
    return ",".join(passes)


class Model:
    """A quantized (or float) graph.

    `Model(path)` loads a file: MLIR text (.mlir), the .qrt binary container (mapped, weights
    used in place), ONNX (.onnx) or TFLite (.tflite); other names are recognised by content.
    `Model(data)` loads the same formats from bytes. `max_memory` bounds the bytes the model's
    constants may take (0: the host's physical memory).

    `inputs` and `outputs` describe the graph's tensors (`qrt.TensorInfo`). `compile()` makes a
    `qrt.Plan` to run it. A model can be used as a context manager; `close()` frees it early
    (plans made from it stay valid).
    """

    def __init__(self, source: str | os.PathLike | bytes | bytearray | memoryview, *, max_memory: int = 0,
                 name: str | None = None):
        self._handle = None
        options = _capi.LoadOptions()
        _lib.qrt_load_options_init(ctypes.byref(options))
        options.max_memory = int(max_memory)
        handle = ctypes.c_void_p()
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            label = (name or "<bytes>").encode()
            _lib.qrt_model_load_buffer_ex(data, len(data), label, ctypes.byref(options), ctypes.byref(handle))
        elif isinstance(source, (str, os.PathLike)):
            _lib.qrt_model_load_file_ex(os.fsencode(source), ctypes.byref(options), ctypes.byref(handle))
        else:
            raise InvalidArgumentError(f"qrt.Model: expected a path or bytes, got {type(source).__name__}")
        self._handle = handle
        self._describe()

    def _describe(self) -> None:
        """Copies the inputs' and outputs' descriptions out of the C model."""
        infos = []
        for count_fn, info_fn in ((_lib.qrt_model_num_inputs, _lib.qrt_model_input_info),
                                  (_lib.qrt_model_num_outputs, _lib.qrt_model_output_info)):
            count = ctypes.c_size_t()
            count_fn(self._handle, ctypes.byref(count))
            described = []
            for i in range(count.value):
                info = _capi.TensorInfo()
                info_fn(self._handle, i, ctypes.byref(info))
                described.append(tensor_info_from_c(info))
            infos.append(described)
        self._inputs, self._outputs = infos

    @property
    def handle(self) -> ctypes.c_void_p:
        """The qrt_model_t* (for this package's own use); a closed model raises."""
        if self._handle is None:
            raise InvalidArgumentError("the model is closed (Model.close() was called)")
        return self._handle

    @property
    def inputs(self) -> list[TensorInfo]:
        """The graph's inputs, in order."""
        return list(self._inputs)

    @property
    def outputs(self) -> list[TensorInfo]:
        """The graph's outputs, in order."""
        return list(self._outputs)

    def to_mlir(self) -> str:
        """The canonical MLIR text of the graph (what `qopt MODEL` prints)."""
        text = ctypes.POINTER(ctypes.c_char)()
        _lib.qrt_model_print(self.handle, ctypes.byref(text))
        return _capi.take_string(text)

    def save(self, path: str | os.PathLike, format: str | None = None) -> None:
        """Writes the graph: format "binary" (the .qrt container) or "text" (MLIR); by default
        binary for names ending in .qrt, text otherwise."""
        path = os.fspath(path)
        if format is None:
            format = "binary" if path.endswith(".qrt") else "text"
        formats = {"text": _capi.QRT_FORMAT_TEXT, "binary": _capi.QRT_FORMAT_BINARY}
        if format not in formats:
            raise InvalidArgumentError(f"Model.save: format must be 'text' or 'binary', got {format!r}")
        _lib.qrt_model_save(self.handle, os.fsencode(path), formats[format])

    def copy(self) -> "Model":
        """An independent copy of the graph as it is now (through the .qrt form)."""
        with tempfile.TemporaryDirectory(prefix="qrt-") as tmp:
            path = os.path.join(tmp, "model.qrt")
            self.save(path, "binary")
            with open(path, "rb") as f:
                return Model(f.read(), name="<copy>")

    def apply_passes(self, passes: str | Iterable[str], *, timing: bool = False) -> str:
        """Rewrites the graph with graph passes ("default" for the plans' default pipeline,
        or names with options, e.g. "propagate{activations=i8}"; `qrt.passes_help()` lists
        them) and returns the passes' report, one line per decision."""
        report = ctypes.POINTER(ctypes.c_char)()
        flags = _capi.QRT_PASSES_TIMING if timing else 0
        _lib.qrt_model_apply_passes_ex(self.handle, _passes_string(passes).encode(), flags, ctypes.byref(report))
        self._describe()
        return _capi.take_string(report)

    def compile(self, *, threads: int = 1, isa: str | None = None, passes: str | Iterable[str] | None = None,
                backend: str = "default", fusion: bool = True, max_memory: int = 0,
                numerics: str | None = None, specialize: bool = True, row_fusion: bool = False,
                measured_split: bool = True) -> "Plan":
        """Compiles the graph into an immutable `qrt.Plan`.

        threads: threads per run, the calling thread included. isa: the highest ISA level the
        JIT may use ("scalar", "avx2", "avx2-vnni", "avx512-vnni", "avx512-amx", "neon",
        "neon-dot", "neon-i8mm"; `qrt.host_isas()` lists this host's); None: the host's best. passes: the
        graph passes run before kernels are chosen (None: the default pipeline, "" or []:
        none). backend: "default", "jit", "llvm" or "ref" (the reference interpreter).
        fusion: fuse element-wise chains (results are identical either way). max_memory: the
        plan's memory budget in bytes (0: the host's physical memory). numerics: the numerics
        profile ("default", "stablehlo", "tflite", "tflite-single-rounding", "onnx";
        docs/numerics.md "Profiles"); None: the model's own (`Model.numerics`). specialize:
        a model with dynamic dimensions runs, from the third run of a context on one input
        shape, on a static plan compiled for that shape (the same results; `Plan.specializations`
        counts them); False keeps every run on the graph walk. row_fusion: 1x1 convolutions
        read only by a depthwise convolution make their rows as it needs them (a smaller arena,
        the same results; `QRT_PLAN_ROW_FUSION` in docs/c-api.md). measured_split: on several
        threads each op runs on the pool or on the calling thread alone, whichever measured
        faster over a probe of 8 runs (repeated every 4096); False splits every op as its
        kernel's task thresholds say (`QRT_PLAN_FIXED_SPLIT`; the same results either way).
        """
        from .plan import Plan
        if backend not in _capi.BACKENDS:
            raise InvalidArgumentError(f"Model.compile: backend must be one of {sorted(_capi.BACKENDS)}, got {backend!r}")
        if int(threads) < 1:
            raise InvalidArgumentError(f"Model.compile: threads must be at least 1, got {threads}")
        options = _capi.PlanOptions()
        _lib.qrt_plan_options_init(ctypes.byref(options))
        options.backend = _capi.BACKENDS[backend]
        options.threads = int(threads)
        passes = _passes_string(passes)
        options.passes = passes.encode() if passes is not None else None
        options.isa = isa.encode() if isa is not None else None
        options.flags = ((0 if fusion else _capi.QRT_PLAN_NO_FUSION) | (0 if specialize else _capi.QRT_PLAN_NO_SPECIALIZATION) |
                         (_capi.QRT_PLAN_ROW_FUSION if row_fusion else 0) | (0 if measured_split else _capi.QRT_PLAN_FIXED_SPLIT))
        options.max_memory = int(max_memory)
        options.numerics = numerics.encode() if numerics is not None else None
        handle = ctypes.c_void_p()
        _lib.qrt_plan_create(self.handle, ctypes.byref(options), ctypes.byref(handle))
        return Plan(handle, self.inputs, self.outputs)

    @property
    def numerics(self) -> str:
        """The numerics profile recorded in the model ("default" when none is)."""
        out = ctypes.c_char_p()
        _lib.qrt_model_numerics(self.handle, ctypes.byref(out))
        return out.value.decode()

    @numerics.setter
    def numerics(self, profile: str) -> None:
        """Records `profile` in the model (saved with it; plans made afterwards use it)."""
        _lib.qrt_model_set_numerics(self.handle, str(profile).encode())

    def close(self) -> None:
        """Frees the model now; later use raises qrt.InvalidArgumentError. Plans stay valid."""
        if self._handle is not None:
            _lib.qrt_model_destroy(self._handle)
            self._handle = None

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self._handle is None else f"inputs={self._inputs}, outputs={self._outputs}"
        return f"qrt.Model({state})"
