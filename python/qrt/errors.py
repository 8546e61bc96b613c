"""Exceptions: one class per qrt_status, each carrying the status and qrt's message.

Every failure of the C API, and every check the package makes before calling it (an unknown
input name, a wrong dtype), raises a subclass of `qrt.Error`. The subclasses also derive from
the built-in exception a Python user would catch for that kind of failure: `ValueError` for
invalid arguments and models, `OSError` for files, `MemoryError` for the memory budget, and
`NotImplementedError` for what qrt does not support.
"""

from __future__ import annotations

# The values of qrt_status in include/qrt.h.
STATUS_NAMES = {
    0: "QRT_OK",
    1: "QRT_INVALID_ARGUMENT",
    2: "QRT_PARSE_ERROR",
    3: "QRT_VERIFY_ERROR",
    4: "QRT_IO_ERROR",
    5: "QRT_UNSUPPORTED",
    6: "QRT_RUNTIME_ERROR",
    7: "QRT_OUT_OF_MEMORY",
    8: "QRT_INTERNAL_ERROR",
}


class Error(Exception):
    """A failure reported by qrt. `status` is the qrt_status value, `status_name` its name
    (e.g. "QRT_PARSE_ERROR") and `message` qrt's description of what went wrong."""

    status = 8

    def __init__(self, message: str, status: int | None = None):
        if status is not None:
            self.status = status
        self.message = message
        super().__init__(f"{self.status_name}: {message}")

    @property
    def status_name(self) -> str:
        return STATUS_NAMES.get(self.status, "QRT_UNKNOWN_STATUS")


class InvalidArgumentError(Error, ValueError):
    """QRT_INVALID_ARGUMENT: a wrong name, dtype, shape, index, option or a closed object."""
    status = 1


class ParseError(Error, ValueError):
    """QRT_PARSE_ERROR: malformed model text or file."""
    status = 2


class VerifyError(Error, ValueError):
    """QRT_VERIFY_ERROR: the model breaks an IR rule (types, shapes, ops)."""
    status = 3


class IOError(Error, OSError):  # noqa: A001 - qrt.IOError, as the status is named
    """QRT_IO_ERROR: a file could not be read or written."""
    status = 4


class UnsupportedError(Error, NotImplementedError):
    """QRT_UNSUPPORTED: a valid request qrt does not support, e.g. an ISA the host lacks."""
    status = 5


class RuntimeError(Error):  # noqa: A001 - qrt.RuntimeError, as the status is named
    """QRT_RUNTIME_ERROR: a failure while running, e.g. an accumulator overflow."""
    status = 6


class OutOfMemoryError(Error, MemoryError):
    """QRT_OUT_OF_MEMORY: an allocation failed or the memory budget is exceeded."""
    status = 7


class InternalError(Error):
    """QRT_INTERNAL_ERROR: a bug in qrt; please report it with the message."""
    status = 8


_BY_STATUS = {c.status: c for c in (InvalidArgumentError, ParseError, VerifyError, IOError, UnsupportedError,
                                    RuntimeError, OutOfMemoryError, InternalError)}


def error_for_status(status: int, message: str) -> Error:
    """The exception for a failed call: the subclass of `status`, or `Error` for values
    this version does not know."""
    cls = _BY_STATUS.get(status)
    return cls(message) if cls else Error(message, status)
