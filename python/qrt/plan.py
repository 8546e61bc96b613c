"""`qrt.Plan` (an immutable compiled graph) and `qrt.Context` (the state of one run)."""

from __future__ import annotations

import ctypes
import threading
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _capi
from .errors import InvalidArgumentError
from .tensors import TensorInfo, array_from_view, by_input_order, checked_array, dims_of

_lib = _capi.lib


@dataclass(frozen=True)
class OpInfo:
    """How a plan runs one op: `kernel` is the generated kernel's contract name (or
    "reference", with `reason` saying why); `ops` counts arithmetic operations per run
    (2 per multiply-accumulate of a matmul or convolution, else 0); `selection` says what each
    allowed ISA level answered when the kernel was chosen."""

    index: int
    op: str
    kernel: str
    reason: str
    ops: int
    selection: str


@dataclass(frozen=True)
class OpTime:
    """The time one op took in a profiled run."""

    index: int
    op: str
    kernel: str
    ns: int

    @property
    def us(self) -> float:
        return self.ns / 1000.0


class Context:
    """The state of one run at a time of a plan: its arena, bound inputs and op times.

    A context runs one call at a time (concurrent calls on one context wait for each other);
    use one context per thread, or `Plan.run`, which keeps one per thread.
    """

    def __init__(self, plan: "_PlanState"):
        # The plan's state, not the Plan: contexts keep the C plan alive, and a Plan's
        # per-thread contexts form no reference cycle with it (so the C objects are freed in
        # order: contexts, then the plan).
        self._plan = plan
        self._lock = threading.Lock()
        self._handle = None
        self._bound: list[Any] = []  # the input arrays qrt points into, kept alive
        with plan.lock:  # not while another thread closes the plan
            handle = ctypes.c_void_p()
            _lib.qrt_context_create(plan.handle, ctypes.byref(handle))
            self._handle = handle
            plan._contexts.add(self)

    def run(self, inputs: Any, *, profile: bool = False):
        """Runs the plan on `inputs`: a dict {input name: array}, a list of arrays in input
        order, or one array for a single-input model. Arrays must have the input's dtype
        (quantized inputs: the storage dtype, e.g. int8) and shape; C-contiguous arrays are
        read in place, others are copied once. Returns a dict {output name: array} of new
        arrays; with profile=True, returns (outputs, [qrt.OpTime per op])."""
        plan = self._plan
        arrays = by_input_order(plan.inputs, inputs, "run")
        checked = [checked_array(info, a, "run") for info, a in zip(plan.inputs, arrays)]
        with self._lock:
            handle = self._live_handle()
            self._bound = []
            for i, (info, array) in enumerate(zip(plan.inputs, checked)):
                dims = dims_of(array)
                _lib.qrt_context_bind_input(handle, i, info._qrt_dtype, array.ndim, dims, array.ctypes.data,
                                            array.nbytes)
                self._bound.append(array)
            outputs = {}
            for i, info in enumerate(plan.outputs):
                if info.is_static:  # filled by the run in place: no copy out of qrt's arena
                    out = np.empty(info.shape, dtype=info.dtype)
                    _lib.qrt_context_bind_output(handle, i, out.ctypes.data, out.nbytes)
                    outputs[info.name] = out
            _lib.qrt_context_run(handle)
            for i, info in enumerate(plan.outputs):
                if info.name not in outputs:
                    view = _capi.TensorView()
                    _lib.qrt_context_output(handle, i, ctypes.byref(view))
                    outputs[info.name] = array_from_view(view)
            if not profile:
                return outputs
            return outputs, self._op_times(handle)

    def _op_times(self, handle) -> list[OpTime]:
        times = []
        ns = ctypes.c_uint64()
        for info in self._plan.ops:
            _lib.qrt_context_op_time(handle, info.index, ctypes.byref(ns))
            times.append(OpTime(info.index, info.op, info.kernel, int(ns.value)))
        return times

    def _live_handle(self):
        if self._handle is None:
            raise InvalidArgumentError("the context is closed (its plan or the context was closed)")
        return self._handle

    def close(self) -> None:
        """Frees the context; a run in progress on another thread finishes first."""
        with self._lock:
            if self._handle is not None:
                _lib.qrt_context_destroy(self._handle)
                self._handle = None
                self._bound = []

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            _lib.qrt_context_destroy(self._handle)
            self._handle = None


class _PlanState:
    """The C plan and what is known about it, shared by the Plan and its contexts; frees the
    C plan when the last of them goes."""

    def __init__(self, handle: ctypes.c_void_p, inputs: list[TensorInfo], outputs: list[TensorInfo]):
        self._handle = handle
        self.inputs = inputs
        self.outputs = outputs
        self._contexts: "weakref.WeakSet[Context]" = weakref.WeakSet()
        # Held to create contexts, to query the plan and to close it, so that no thread uses
        # the C plan while another frees it.
        self.lock = threading.Lock()
        count = ctypes.c_size_t()
        _lib.qrt_plan_num_ops(handle, ctypes.byref(count))
        ops = []
        for i in range(count.value):
            info = _capi.OpInfo()
            _lib.qrt_plan_op_info(handle, i, ctypes.byref(info))
            selection = ctypes.c_char_p()
            _lib.qrt_plan_op_selection(handle, i, ctypes.byref(selection))
            ops.append(OpInfo(i, info.op.decode(), info.kernel.decode(), info.reason.decode(), int(info.ops),
                              (selection.value or b"").decode()))
        self.ops: list[OpInfo] = ops

    @property
    def handle(self) -> ctypes.c_void_p:
        if self._handle is None:
            raise InvalidArgumentError("the plan is closed (Plan.close() was called)")
        return self._handle

    def query(self, function, out):
        """Calls function(plan, byref(out)) with the plan kept open; returns out."""
        with self.lock:
            function(self.handle, ctypes.byref(out))
        return out

    def close(self) -> None:
        with self.lock:
            for context in list(self._contexts):
                context.close()  # waits for the context's run in progress
            if self._handle is not None:
                _lib.qrt_plan_destroy(self._handle)
                self._handle = None

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            _lib.qrt_plan_destroy(self._handle)
            self._handle = None


class Plan:
    """A compiled graph (`Model.compile()`): immutable and shared by any number of contexts.

    `run()` is thread-safe: each calling thread gets its own context, so runs from several
    threads proceed in parallel (the GIL is released while qrt runs). `ops`, `memory` and
    `weight_memory` describe what the plan chose.
    """

    def __init__(self, handle: ctypes.c_void_p, inputs: list[TensorInfo], outputs: list[TensorInfo]):
        self._state = _PlanState(handle, inputs, outputs)
        self._local = threading.local()

    @property
    def inputs(self) -> list[TensorInfo]:
        """The graph's inputs, in order."""
        return list(self._state.inputs)

    @property
    def outputs(self) -> list[TensorInfo]:
        """The graph's outputs, in order."""
        return list(self._state.outputs)

    @property
    def ops(self) -> list[OpInfo]:
        """How each op runs, in plan order."""
        return list(self._state.ops)

    @property
    def numerics(self) -> str:
        """The numerics profile the plan computes, e.g. "tflite"."""
        out = ctypes.c_char_p()
        _lib.qrt_plan_numerics(self.handle, ctypes.byref(out))
        return out.value.decode()

    @property
    def handle(self) -> ctypes.c_void_p:
        """The qrt_plan_t* (for this package's own use); a closed plan raises."""
        return self._state.handle

    @property
    def memory(self) -> dict:
        """The arena of each context: {"arena_bytes", "naive_bytes", "in_place"}."""
        info = self._state.query(_lib.qrt_plan_memory_info, _capi.MemoryInfo())
        return {"arena_bytes": info.arena_bytes, "naive_bytes": info.naive_bytes, "in_place": info.in_place}

    @property
    def specializations(self) -> int:
        """How many input shapes the plan runs on static plans compiled for them (a model
        with dynamic dimensions; `Model.compile(specialize=...)`)."""
        count = ctypes.c_size_t()
        self._state.query(_lib.qrt_plan_num_specializations, count)
        return count.value

    @property
    def weight_memory(self) -> dict:
        """What the plan keeps for constants: {"constant_bytes", "parameter_bytes",
        "kernel_bytes", "resident_bytes"} (resident = the sum of the three)."""
        info = _capi.WeightMemory()
        info.struct_size = ctypes.sizeof(info)
        self._state.query(_lib.qrt_plan_weight_memory, info)
        return {"constant_bytes": info.constant_bytes, "parameter_bytes": info.parameter_bytes,
                "kernel_bytes": info.kernel_bytes,
                "resident_bytes": info.constant_bytes + info.parameter_bytes + info.kernel_bytes}

    def create_context(self) -> Context:
        """A new context for runs of this plan (one run at a time)."""
        return Context(self._state)

    def run(self, inputs: Any, *, profile: bool = False):
        """Runs the plan in the calling thread's context; see `Context.run`."""
        context = getattr(self._local, "context", None)
        if context is None or context._handle is None:
            context = Context(self._state)
            self._local.context = context
        return context.run(inputs, profile=profile)

    def close(self) -> None:
        """Frees the plan and its contexts (waiting for runs in progress); later use raises."""
        self._state.close()

    def __enter__(self) -> "Plan":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"qrt.Plan({len(self.ops)} ops, inputs={[t.name for t in self.inputs]})"
