#!/usr/bin/env python3
"""One-op TFLite models cut from whole ones, as seeds for fuzz_load_tflite (fuzz/make_corpus.sh).

    python3 fuzz/tflite_op_seeds.py SCHEMA.fbs OUT_DIR MODEL.tflite...

The bundled TFLite models are few and large (300 KB, 4 MB), so libFuzzer's mutations of them are
slow and mostly land in weight bytes. Each operator of each model becomes a model of its own:
that operator, the tensors it names (inputs that hold no constant data become the graph's
inputs), the buffers of its constants and its one operator code. flatc converts a model to JSON
with qrt's schema subset (importers/tflite_schema.fbs) and back, so fields outside that subset
are dropped: the importer does not read them. Operators whose model would exceed --max-bytes are
left out, and of operators alike (same code, options and tensor shapes) one is kept.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile


class FlatTable:
    """Just enough of a FlatBuffers reader to take the exact floats back from a model: flatc
    prints floats with 6 significant digits, which changes scales (a bias scale then no longer
    equals input scale x weight scale, and a scale of 1e-7 becomes 0)."""

    def __init__(self, data, pos):
        self.data, self.pos = data, pos
        self.vtable = pos - struct.unpack_from("<i", data, pos)[0]
        self.vtable_size = struct.unpack_from("<H", data, self.vtable)[0]

    def _field(self, index):
        entry = 4 + 2 * index
        if entry >= self.vtable_size:
            return None
        offset = struct.unpack_from("<H", self.data, self.vtable + entry)[0]
        return self.pos + offset if offset else None

    def _vector(self, index):
        p = self._field(index)
        if p is None:
            return None, 0
        start = p + struct.unpack_from("<I", self.data, p)[0]
        return start + 4, struct.unpack_from("<I", self.data, start)[0]

    def tables(self, index):
        start, n = self._vector(index)
        return [FlatTable(self.data, start + 4 * i + struct.unpack_from("<I", self.data, start + 4 * i)[0]) for i in range(n)]

    def table(self, index):
        p = self._field(index)
        return None if p is None else FlatTable(self.data, p + struct.unpack_from("<I", self.data, p)[0])

    def floats(self, index):
        start, n = self._vector(index)
        return None if start is None else list(struct.unpack_from("<%df" % n, self.data, start))


def exact_quantization(path, model):
    """Puts each tensor's exact min, max and scale (Model.subgraphs[].tensors[].quantization)
    into `model`, the JSON flatc wrote for `path`."""
    with open(path, "rb") as f:
        data = f.read()
    root = FlatTable(data, struct.unpack_from("<I", data, 0)[0])
    for g, subgraph in enumerate(root.tables(2)):  # Model.subgraphs
        for t, tensor in enumerate(subgraph.tables(0)):  # SubGraph.tensors
            quant = tensor.table(4)  # Tensor.quantization
            if quant is None:
                continue
            json_quant = model["subgraphs"][g]["tensors"][t].get("quantization")
            for field, name in ((0, "min"), (1, "max"), (2, "scale")):
                values = quant.floats(field)
                if values is not None and json_quant is not None and name in json_quant:
                    json_quant[name] = values


def one_op_model(model, subgraph, op):
    """The model holding only `op` of `subgraph` (JSON objects as flatc writes them)."""
    tensors, buffers = subgraph.get("tensors", []), model.get("buffers", [])
    new_tensors, new_buffers, remap = [], [{}], {}

    def has_data(t):
        b = t.get("buffer", 0)
        return 0 < b < len(buffers) and len(buffers[b].get("data", [])) > 0

    def keep(index):
        if index < 0 or index >= len(tensors):  # -1: an optional input left out
            return -1
        if index not in remap:
            t = dict(tensors[index])
            if has_data(t):
                new_buffers.append(buffers[t["buffer"]])
                t["buffer"] = len(new_buffers) - 1
            else:
                t["buffer"] = 0
            remap[index] = len(new_tensors)
            new_tensors.append(t)
        return remap[index]

    inputs = [keep(i) for i in op.get("inputs", [])]
    outputs = [keep(i) for i in op.get("outputs", [])]
    graph_inputs = [i for i in inputs if i >= 0 and new_tensors[i]["buffer"] == 0]
    new_op = dict(op, opcode_index=0, inputs=inputs, outputs=outputs)
    opcode = model["operator_codes"][op.get("opcode_index", 0)]
    return {
        "version": model.get("version", 3),
        "operator_codes": [opcode],
        "subgraphs": [{"tensors": new_tensors, "inputs": graph_inputs, "outputs": [o for o in outputs if o >= 0],
                       "operators": [new_op], "name": subgraph.get("name", "main")}],
        "description": "one operator of a bundled model (fuzz/tflite_op_seeds.py)",
        "buffers": new_buffers,
    }


def signature(model):
    """What makes two one-op models alike: the code, the options and the tensors' shapes and types."""
    sg = model["subgraphs"][0]
    op = sg["operators"][0]
    shapes = [(t.get("shape"), t.get("type")) for t in sg["tensors"]]
    options = {k: v for k, v in op.items() if k not in ("inputs", "outputs", "opcode_index")}
    return json.dumps([model["operator_codes"][0], options, shapes], sort_keys=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("schema")
    parser.add_argument("out_dir")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--max-bytes", type=int, default=65536, help="largest seed kept (default 65536)")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    seen, written = set(), 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.models:
            base = os.path.splitext(os.path.basename(path))[0]
            subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", tmp, args.schema, "--", path],
                           check=True)
            with open(os.path.join(tmp, base + ".json")) as f:
                model = json.load(f)
            exact_quantization(path, model)
            for g, subgraph in enumerate(model.get("subgraphs", [])):
                for k, op in enumerate(subgraph.get("operators", [])):
                    seed = one_op_model(model, subgraph, op)
                    key = signature(seed)
                    if key in seen:
                        continue
                    seen.add(key)
                    name = "%s_op%d_%d" % (base, g, k)
                    json_path = os.path.join(tmp, name + ".json")
                    with open(json_path, "w") as f:
                        json.dump(seed, f)
                    subprocess.run(["flatc", "-b", "-o", tmp, args.schema, json_path], check=True)
                    with open(os.path.join(tmp, name + ".bin"), "rb") as f:
                        data = f.read()
                    if len(data) > args.max_bytes:
                        continue
                    with open(os.path.join(args.out_dir, name + ".tflite"), "wb") as f:
                        f.write(data)
                    written += 1
    print("tflite_op_seeds: %d one-op models from %d models" % (written, len(args.models)), file=sys.stderr)


if __name__ == "__main__":
    main()
