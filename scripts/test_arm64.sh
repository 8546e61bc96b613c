#!/usr/bin/env bash
# AArch64 without ARM hardware (docs/aarch64.md): cross-builds qrt for aarch64-linux-gnu, runs
# the test suite under qemu-user on three CPU models (max, with dot product and i8mm, runs the
# suite; neoverse-n1 and cortex-a53 run their own level and the tests that run uncapped), and
# checks that every bundled model gives the x86 build's bytes: same plan, same numerics, a
# different machine. Exits non-zero on any failure.
#   bash scripts/test_arm64.sh                       # QEMU CPUs: cortex-a53 neoverse-n1 max
#   QRT_QEMU_CPUS=max bash scripts/test_arm64.sh     # one CPU model
#   QRT_ARM64_LLVM=1 bash scripts/test_arm64.sh      # with the LLVM ORC backend (build-arm64-llvm)
# QRT_TEST_EMULATED=1 tells data-heavy tests to use a slice of their data sets (400 test samples,
# tests/slow_host.h); every ISA level still runs.
# The x86 comparison needs build/tools/qrun (scripts/bootstrap.sh); without it, it is skipped
# and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
export QRT_ARM64_LLVM=${QRT_ARM64_LLVM:-0}
if [ "$QRT_ARM64_LLVM" = 1 ]; then
  export QRT_ARM64_SYSROOT=${QRT_ARM64_SYSROOT:-$PWD/build-arm64-llvm-sysroot}
  build=build-arm64-llvm
  llvm_options=(--cross-file "$QRT_ARM64_SYSROOT/llvm.ini" -Dllvm=enabled -Dllvm_kernels=enabled)
else
  export QRT_ARM64_SYSROOT=${QRT_ARM64_SYSROOT:-$PWD/build-arm64-sysroot}
  build=build-arm64
  llvm_options=(-Dllvm=disabled -Dllvm_kernels=disabled)
fi
sysroot=$QRT_ARM64_SYSROOT
bash scripts/arm64_sysroot.sh
if [ ! -f $build/build.ninja ]; then
  # By default LLVM's ORC backend is not cross-built: the arm64 tree has the asmjit a64 backend
  # and the scalar twins (qrun --version says "llvm: not built"); QRT_ARM64_LLVM=1 builds it
  # against the arm64 LLVM 19 (docs/aarch64.md). A unity build, one source file per target, as
  # CI's other test-only trees (.ci/run); for incremental work on ARM code,
  # `meson configure build-arm64 -Dunity=off`.
  meson setup $build --cross-file "$sysroot/sysroot.ini" --cross-file meson/aarch64-linux-gnu.ini \
    "${llvm_options[@]}" -Dbench=disabled -Dunity=on -Dunity_size=10000
fi
ninja -C $build

# `max` has every AArch64 level, so it runs the whole suite but the levels the smaller CPUs
# run themselves: each jit-<level> test caps the JIT to its level, and the importer and runtime
# tests run every level the CPU has. The CPUs without i8mm (neoverse-n1) or dot product
# (cortex-a53) run what their features change: the level that is their best (an uncapped
# plan's choice, and detection) and the tests that run qrun and the C API uncapped. The
# ISA-free tests (ir, layering, the text oracle) run once. qrun uncapped on each CPU is the
# bundled-models step below, so the smaller CPUs leave the tools and fuzz_diff tests (whose
# levels `max` runs capped) to `max`. QRT_QEMU_FULL=1 runs everything on each CPU.
cpus=${QRT_QEMU_CPUS:-cortex-a53 neoverse-n1 max}
tests_for() {
  [ "${QRT_QEMU_FULL:-0}" = 1 ] && return
  case $1 in
    cortex-a53) echo "c_api jit-neon" ;;
    neoverse-n1) echo "c_api jit-neon-dot" ;;
    max)
      local skip=" "
      [[ " $cpus " == *" cortex-a53 "* ]] && skip+="jit-neon "
      [[ " $cpus " == *" neoverse-n1 "* ]] && skip+="jit-neon-dot "
      [ "$skip" = " " ] && return
      # Every test name (meson's list: "qrt:suite / name") but those; the x86 levels skip
      # on an AArch64 CPU anyway.
      meson test -C $build --no-rebuild --list 2>/dev/null | sed -n 's|^qrt:[^ ]* / ||p' |
        grep -v -x -e 'jit-avx.*' $(for t in $skip; do echo "-e $t"; done) | tr '\n' ' ' ;;
  esac
}

failed=0
# run_on CPU PROCESSES: the CPU's tests, logged as $build/meson-logs/testlog-CPU.json.
run_on() {
  local cpu=$1 processes=$2
  echo "== $(date -u +%H:%M:%S) the test suite under qemu-aarch64, QEMU_CPU=$cpu ($(tests_for "$cpu" | grep . || echo every test))"
  # shellcheck disable=SC2046  # the test names split into arguments
  QRT_TEST_EMULATED=1 QEMU_CPU=$cpu meson test -C $build --no-rebuild --print-errorlogs --num-processes "$processes" \
    --timeout-multiplier 3 --logbase "testlog-$cpu" $(tests_for "$cpu")
}
# The smaller CPUs run one long test each (their jit level) beside a few short ones: on two
# cores they run side by side, a process each, where one after the other left a core idle for
# minutes; then `max` takes both.
small=() big=()
for cpu in $cpus; do
  if [ "$cpu" = cortex-a53 ] || [ "$cpu" = neoverse-n1 ]; then small+=("$cpu"); else big+=("$cpu"); fi
done
if [ ${#small[@]} -gt 0 ]; then
  pids=()
  for cpu in "${small[@]}"; do
    if [ ${#small[@]} -gt 1 ]; then
      # Each one's output whole, after it ends, not interleaved with the other's.
      run_on "$cpu" 1 > "$build/meson-logs/qemu-$cpu.out" 2>&1 & pids+=($!)
    else
      run_on "$cpu" 2 & pids+=($!)
    fi
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed=1
    [ ${#small[@]} -gt 1 ] && cat "$build/meson-logs/qemu-${small[$i]}.out"
  done
fi
for cpu in "${big[@]}"; do
  run_on "$cpu" 2 || failed=1
done

echo "== $(date -u +%H:%M:%S) bundled models: AArch64 bytes against x86, on every QEMU CPU"
if [ ! -x build/tools/qrun ]; then
  echo "SKIPPED: no x86 build/tools/qrun to compare with (bash scripts/bootstrap.sh builds it)"
else
  out=$(mktemp -d)
  outputs() { (cd "$1" && cat $(ls)); }  # a run's outputs, in name order, as one byte stream
  for model in models/onnx/*.onnx models/tflite-micro/*.tflite examples/*.mlir; do
    name=$(basename "$model")
    inputs=(--random 1)
    # Token ids must index the embedding table: the encoder runs on its bundled inputs.
    [ "$name" = encoder_dynamic_int8.onnx ] && inputs=(--input input_ids=models/onnx/encoder_dynamic_int8_ids.npy
                                                      --input attention_mask=models/onnx/encoder_dynamic_int8_mask.npy)
    # x86 at its best level and at the scalar level; AArch64 at the best level of each CPU.
    mkdir -p "$out/$name"
    build/tools/qrun "$model" "${inputs[@]}" --output-dir "$out/$name/x86" > /dev/null
    build/tools/qrun "$model" "${inputs[@]}" --isa scalar --output-dir "$out/$name/x86-scalar" > /dev/null
    same=1
    cmp -s <(outputs "$out/$name/x86") <(outputs "$out/$name/x86-scalar") || same=0
    for cpu in ${QRT_QEMU_CPUS:-cortex-a53 neoverse-n1 max}; do
      env QEMU_CPU="$cpu" QEMU_LD_PREFIX=/usr/aarch64-linux-gnu \
        "QEMU_SET_ENV=LD_LIBRARY_PATH=$sysroot/usr/lib/aarch64-linux-gnu:$sysroot/lib/aarch64-linux-gnu" \
        qemu-aarch64-static $build/tools/qrun "$model" "${inputs[@]}" --output-dir "$out/$name/$cpu" > /dev/null
      cmp -s <(outputs "$out/$name/x86") <(outputs "$out/$name/$cpu") || same=0
    done
    if [ $same -eq 1 ]; then
      echo "identical: $model ($(ls "$out/$name/x86" | wc -l) outputs; x86, x86 scalar, ${QRT_QEMU_CPUS:-cortex-a53 neoverse-n1 max})"
    else
      echo "DIFFERENT: $model"; failed=1
    fi
  done
  rm -rf "$out"
fi
exit $failed
