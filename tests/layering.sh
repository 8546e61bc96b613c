#!/usr/bin/env bash
# Layer rules (STYLE.md): ir depends on nothing; passes on ir; jit on ir; runtime on all
# three; tools on the public C API only; asmjit only under jit/asmjit*, LLVM only under
# jit/llvm*. The meson libraries enforce the link graph; this check catches includes.
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
check "protobuf/ONNX outside importers/" '#include <(onnx|google/protobuf)/' $(git ls-files '*.h' '*.cpp' | grep -v -e '^importers/' -e '^tests/')
check "asmjit outside jit/asmjit*" '#include[[:space:]]*<asmjit' $(git ls-files '*.h' '*.cpp' '*.c' | grep -v '^jit/asmjit')
check "LLVM outside jit/llvm*" '#include[[:space:]]*<llvm/' $(git ls-files '*.h' '*.cpp' '*.c' | grep -v '^jit/llvm')
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
