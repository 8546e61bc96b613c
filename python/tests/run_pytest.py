"""Runs the Python package's tests (a meson test): skipped, exit 77, where the interpreter
lacks numpy or pytest (Debian: python3-numpy, python3-pytest; scripts/bootstrap.sh installs
them)."""

import sys
from pathlib import Path

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"SKIP: the Python package's tests need numpy and pytest ({e})")
    sys.exit(77)

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent))  # the package from the source tree
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", str(here)] + sys.argv[1:]))
