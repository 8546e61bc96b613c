#!/usr/bin/env bash
# Layer rules (STYLE.md): ir depends on nothing; passes on ir; jit on ir; runtime on all
# three; tools and the fuzzers (fuzz/) on the public C API only; asmjit only under jit/asmjit*, LLVM only under
# jit/llvm*. Inside jit/ (docs/architecture.md): the core (jit/core) knows no ISA, no backend
# and no operator; the reference and scalar twins (jit/ref) see only the core; the operator
# layer (jit/ops) sees no backend folder; no ISA header (intrinsics, cpuid) outside a
# backend folder; and no header includes itself through others (no include circle). The
# meson libraries enforce the link graph; this check catches includes.
set -uo pipefail
cd "$(dirname "$0")/.."
failed=0
passed=0
check() {  # check DESCRIPTION PATTERN FILES...
  local what=$1 pattern=$2
  shift 2
  local hits
  hits=$(grep -nE "$pattern" "$@" 2>/dev/null || true)
  if [ -n "$hits" ]; then
    echo "FAIL: $what"
    echo "$hits"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
}
check "ir/ includes another layer" '#include "(passes|jit|runtime|importers|tools)/' ir/*.h ir/*.cpp
check "passes/ includes jit, runtime, importers or tools" '#include "(jit|runtime|importers|tools)/' passes/*.h passes/*.cpp
check "importers/ includes passes, jit, runtime or tools" '#include "(passes|jit|runtime|tools)/' importers/*.h importers/*.cpp
check "jit/ includes passes, runtime, importers or tools" '#include "(passes|runtime|importers|tools)/' $(find jit -name '*.h' -o -name '*.cpp')
check "tools/ includes qrt internals" '#include "(ir|passes|jit|runtime|importers)/' tools/*.h tools/*.cpp
check "fuzz/ includes qrt internals (it drives the public C API)" '#include "(ir|passes|jit|runtime|importers)/' fuzz/*.h fuzz/*.cpp
check "protobuf/ONNX outside importers/" '#include <(onnx|google/protobuf)/' $(git ls-files '*.h' '*.cpp' | grep -v -e '^importers/' -e '^tests/')
check "asmjit outside jit/asmjit*" '#include[[:space:]]*<asmjit' $(git ls-files '*.h' '*.cpp' '*.c' | grep -v '^jit/asmjit')
check "LLVM outside jit/llvm*" '#include[[:space:]]*<llvm/' $(git ls-files '*.h' '*.cpp' '*.c' | grep -v '^jit/llvm')
jit_sources=$(git ls-files 'jit/*.h' 'jit/*.cpp')
backend_dirs='^jit/(asmjit_[a-z0-9]+|llvm)/'
check "ISA header outside a jit backend folder" '#include[[:space:]]*<(immintrin|x86intrin|emmintrin|xmmintrin|smmintrin|tmmintrin|nmmintrin|wmmintrin|avxintrin|avx2intrin|avx512[a-z]*intrin|cpuid|arm_neon|arm_acle|arm_sve)\.h>' \
  $(git ls-files '*.h' '*.cpp' '*.c' | grep -v -E "$backend_dirs")
check "jit/core includes ops, ref, a backend or the kernel list" '#include "jit/(ops|ref|asmjit_[a-z0-9]+|llvm|kernel_list)' \
  $(echo "$jit_sources" | grep '^jit/core/')
check "jit/ref includes ops, a backend or the kernel list" '#include "jit/(ops|asmjit_[a-z0-9]+|llvm|kernel_list)' \
  $(echo "$jit_sources" | grep '^jit/ref/')
check "jit/ops includes a backend folder" '#include "jit/(asmjit_[a-z0-9]+|llvm)/' \
  $(echo "$jit_sources" | grep '^jit/ops/')
check "a jit backend includes the operator layer" '#include "jit/(ops/|kernel_list)' \
  $(echo "$jit_sources" | grep -E "$backend_dirs")
# Include circles among the project's own headers (a depth-first search over quoted includes).
cycle=$(python3 - <<'PY'
import re, subprocess, sys
files = subprocess.run(["git", "ls-files", "*.h"], capture_output=True, text=True).stdout.split()
graph = {}
for f in files:
    with open(f, encoding="utf-8", errors="replace") as fh:
        graph[f] = [m for m in re.findall(r'#include "([^"]+)"', fh.read()) if m in set(files)]
state = {}
def visit(f, path):
    state[f] = 1
    for g in graph.get(f, []):
        if state.get(g) == 1:
            print(" -> ".join(path[path.index(g):] + [g]) if g in path else f + " -> " + g)
            sys.exit(0)
        if g not in state:
            visit(g, path + [g])
    state[f] = 2
for f in files:
    if f not in state:
        visit(f, [f])
PY
)
if [ -n "$cycle" ]; then
  echo "FAIL: include circle: $cycle"
  failed=$((failed + 1))
else
  passed=$((passed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
