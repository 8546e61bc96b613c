#!/usr/bin/env bash
# Seed corpora for the libFuzzer targets, made from the bundled models and examples:
#   bash fuzz/make_corpus.sh BUILD_DIR OUT_DIR
# BUILD_DIR holds qopt and qrt-fuzz-diff (any build of this tree). OUT_DIR gets one folder per
# target: text (MLIR; also every bundled model converted by qopt and a few generated graphs),
# binary (.qrt containers of the same), onnx, tflite (the models under 400 KB, and every
# operator of every bundled TFLite model as a model of its own, fuzz/tflite_op_seeds.py), npy,
# c_api (a mix of all formats) and diff (empty: the structured target's bytes are choices).
# QRT_CORPUS_ONNX_NODE_TESTS=1 also seeds onnx and c_api with ONNX's backend node tests
# (libonnx-testdata: about 930 one-op models of 0.5 KB on average, every ONNX op the importer
# reads and many it refuses), for the long runs outside CI (docs/testing.md).
set -euo pipefail
build=$1
out=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
qopt="$build/tools/qopt"
mkdir -p "$out"/{text,binary,onnx,tflite,npy,c_api,diff}
cp "$root"/examples/*.mlir "$root"/tests/data/*.mlir "$out/text/"
cp "$root"/tests/data/fuzz_regressions/*.mlir "$out/text/" 2>/dev/null || true
cp "$root"/models/onnx/*.onnx "$out/onnx/"
find "$root/models" -name '*.tflite' -size -400k -exec cp {} "$out/tflite/" \;
python3 "$root/fuzz/tflite_op_seeds.py" "$root/importers/tflite_schema.fbs" "$out/tflite" "$root"/models/*/*.tflite
find "$root/models" "$root/examples" -name '*.npy' -size -64k -exec cp {} "$out/npy/" \;
# Generated graphs: one file per graph from the differential fuzzer's generator.
"$build/fuzz/qrt-fuzz-diff" --seed 1 --count 12 --max-ops 4 --no-llvm --threads 1 --show |
  awk -v dir="$out/text" '/^\/\/ seed /{n++} n{print > (dir "/generated_" n ".mlir")}'
for model in "$out"/onnx/*.onnx "$out"/tflite/*.tflite "$out"/text/*.mlir; do
  name=$(basename "$model")
  case "$model" in *.mlir) ;; *) "$qopt" "$model" -o "$out/text/$name.mlir" ;; esac
  "$qopt" "$model" -o "$out/binary/${name%.*}.qrt" 2>/dev/null || true
done
cp "$out"/text/*.mlir "$out"/binary/*.qrt "$out"/onnx/*.onnx "$out"/tflite/*.tflite "$out/c_api/"
if [ "${QRT_CORPUS_ONNX_NODE_TESTS:-0}" = 1 ]; then
  node_tests=/usr/share/libonnx-testdata/data/node
  [ -d "$node_tests" ] || { echo "make_corpus.sh: no $node_tests (apt-get install libonnx-testdata)" >&2; exit 1; }
  for model in "$node_tests"/*/model.onnx; do
    name=node_$(basename "$(dirname "$model")").onnx
    cp "$model" "$out/onnx/$name"
    cp "$model" "$out/c_api/$name"
  done
fi
for d in "$out"/*/; do echo "$(basename "$d"): $(ls "$d" | wc -l) files"; done
