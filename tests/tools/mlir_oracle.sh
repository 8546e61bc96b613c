#!/usr/bin/env bash
# The mlir-opt-19 oracle: for each graph, what qopt prints must be accepted by
# `mlir-opt-19 --allow-unregistered-dialect` and re-printed identically (SSA names aside:
# mlir-opt renumbers them). This pins qrt's printer — types, float formatting, dense
# literals, attribute order — to MLIR's. Skips (exit 77) when mlir-opt-19 is not installed.
set -euo pipefail
qopt=$1
shift
if ! command -v mlir-opt-19 >/dev/null 2>&1; then
  echo "mlir-opt-19 not found (Debian package mlir-19-tools): skipping the oracle"
  exit 77
fi
normalize() {
  sed -E 's/%[A-Za-z0-9_$.-]+/%/g; s/^ +//' | grep -v -e '^module {$' -e '^}$' -e '^$' || true
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
for graph in "$@"; do
  # QRT_EXE_WRAPPER: empty natively, qemu-user in a cross build (word-split on purpose).
  ${QRT_EXE_WRAPPER:-} "$qopt" "$graph" > "$tmp/qrt.mlir"
  if ! mlir-opt-19 --allow-unregistered-dialect --mlir-print-elementsattrs-with-hex-if-larger=64 \
       "$tmp/qrt.mlir" > "$tmp/mlir.mlir" 2> "$tmp/err.txt"; then
    echo "FAIL $graph: mlir-opt-19 rejected qopt's output:"
    cat "$tmp/err.txt"
    failed=$((failed + 1))
    continue
  fi
  if diff <(normalize < "$tmp/qrt.mlir") <(normalize < "$tmp/mlir.mlir") > "$tmp/diff.txt"; then
    passed=$((passed + 1))
  else
    echo "FAIL $graph: mlir-opt-19 prints it differently:"
    head -c 4000 "$tmp/diff.txt"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
