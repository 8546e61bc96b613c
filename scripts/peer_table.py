#!/usr/bin/env python3
"""Runs qrt's GEMM and convolution rows beside oneDNN (capped at the same ISA level) and
XNNPACK in one bench_qrt process per level and thread count, and prints docs/performance.md's
ratio tables: each contender's best repetition and the median, and qrt over the best peer.

    python3 scripts/peer_table.py                       # every level the host has, 1 and 2 threads
    python3 scripts/peer_table.py --levels avx2 --threads 1 --reps 15

At one thread the repetitions of all rows are randomly interleaved in one process, so a noisy
neighbour slows both sides alike; at several threads qrt and the peers run in alternating
processes of their own (run_level says why). The best of N is the figure least touched by
neighbours (a co-tenant only ever slows a run). XNNPACK's rows are single-threaded and pick their own ISA, so they count as a peer only
in the 1-thread tables. qrt's rows are the exact path (full-range s8 weights).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

# oneDNN's names for qrt's levels (ONEDNN_MAX_CPU_ISA).
ONEDNN_ISA = {"avx512-vnni": "AVX512_CORE_VNNI", "avx2-vnni": "AVX2_VNNI", "avx2": "AVX2"}

# The conv rows by their `shape:` index, as bench/bench_shapes.h lists them.
CONV_NAMES = [
    "conv 1x1 56²·64→64", "conv 3x3 56²·64→64", "depthwise 3x3 112²·32",
    "conv 3x3 s2 56²·64→128", "conv 7x7 s2 224²·3→64", "conv 3x3 s2 224²·3→32",
    "conv 1x1 112²·16→96", "conv 1x1 7²·160→960", "depthwise 3x3 56²·144",
    "depthwise 3x3 s2 112²·96",
]


def row_key(name):
    """The shape a benchmark measures ('gemm 256x256x256' or 'conv 3'), or None."""
    m = re.search(r"M:(\d+)/K:(\d+)/N:(\d+)", name)
    if m:
        return "gemm %sx%sx%s" % m.groups()
    m = re.search(r"shape:(\d+)", name)
    return "conv " + m.group(1) if m else None


def row_label(key):
    kind, shape = key.split(" ")
    if kind == "conv":
        i = int(shape)
        return CONV_NAMES[i] if i < len(CONV_NAMES) else "conv shape " + shape
    m, k, n = shape.split("x")
    return "%s×%s×%s" % (m, k, n) if not (m == k == n) else m + "³"


def list_rows(bench):
    """The levels the host has (from the qrt rows bench_qrt registers) and the rows' order."""
    out = subprocess.run([bench, "--benchmark_list_tests"], capture_output=True, text=True,
                         check=True).stdout
    found = {m.group(1) for m in re.finditer(r"^BM_qrt_gemm/([a-z0-9-]+)/", out, re.M)}
    order = []
    for line in out.splitlines():
        key = row_key(line) if line.startswith("BM_qrt_") else None
        if key and key not in order:
            order.append(key)
    return [lv for lv in ONEDNN_ISA if lv in found], order


def run_process(bench, flt, env, reps, min_time, runs, labels):
    """One bench_qrt process over the rows `flt` selects; adds each repetition's GOPS to `runs`."""
    cmd = [bench, "--benchmark_filter=" + flt, "--benchmark_min_time=%g" % min_time,
           "--benchmark_repetitions=%d" % reps, "--benchmark_enable_random_interleaving=true",
           "--benchmark_format=json"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("peer_table: %s failed (%d):\n%s" % (" ".join(cmd), proc.returncode,
                                                      proc.stderr[-2000:]))
    for b in json.loads(proc.stdout)["benchmarks"]:
        if b.get("run_type") != "iteration" or "GOPS" not in b:
            continue
        name = b["run_name"]
        who = "qrt" if name.startswith("BM_qrt") else (
            "oneDNN" if name.startswith("BM_onednn") else "XNNPACK")
        key = row_key(name)
        if key is None:
            continue
        runs.setdefault((who, key), []).append(b["GOPS"] / 1e9)
        if who == "oneDNN" and b.get("label"):
            labels[key] = b["label"]


def run_level(bench, level, threads, reps, min_time):
    """Every row at `level` on `threads` threads: (contender, row) -> GOPS per repetition.

    One thread: qrt and the peers in one process, repetitions interleaved. Several threads:
    oneDNN's OpenMP workers spin on the other CPUs for a while after each of its calls, and in
    a shared process they held the CPU qrt's pool wanted (qrt's 2-thread medians 0.88-0.95 of
    oneDNN's, 0.99-1.02 where OMP_WAIT_POLICY=passive stopped the spinning, which slowed oneDNN
    instead). So qrt and the peers run in processes of their own, alternating, half the
    repetitions each time."""
    qrt = "BM_qrt_(gemm|conv)/%s/(s16_exact/|shape).*threads:%d/" % (level, threads)
    peers = "BM_onednn_(conv|matmul)/"
    if threads == 1:
        peers += "|BM_xnnpack_(conv|fully_connected)/"
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA=ONEDNN_ISA[level], OMP_NUM_THREADS=str(threads))
    runs, labels = {}, {}
    if threads == 1:
        run_process(bench, qrt + "|" + peers, env, reps, min_time, runs, labels)
        return runs, labels
    for half in (reps - reps // 2, reps // 2):
        for flt in (qrt, peers):
            if half > 0:
                run_process(bench, flt, env, half, min_time, runs, labels)
    return runs, labels


def print_table(level, threads, runs, labels, order):
    keys = []
    for who, key in runs:
        if who == "qrt" and key not in keys:
            keys.append(key)
    keys.sort(key=lambda k: order.index(k) if k in order else len(order))
    print("\n%s, %d thread%s: GOPS, best / median of the repetitions; oneDNN capped at %s, "
          "XNNPACK at its own level\n" % (level, threads, "s" if threads > 1 else "",
                                            ONEDNN_ISA[level]))
    print("| row | qrt | oneDNN | XNNPACK | qrt ÷ oneDNN | qrt ÷ best peer | oneDNN kernel |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    mark = lambda r: ("**%.2f**" if r < 1.0 else "%.2f") % r
    for key in keys:
        q = runs[("qrt", key)]
        cells = {}
        for who in ("oneDNN", "XNNPACK"):
            if (who, key) in runs:
                p = runs[(who, key)]
                cells[who] = (max(p), statistics.median(p))
        fmt = lambda c: "%.0f / %.0f" % c if c else ""
        ratio = lambda c: "%s / %s" % (mark(max(q) / c[0]), mark(statistics.median(q) / c[1])) if c else ""
        best = max(cells.values()) if cells else None
        print("| %s | %s | %s | %s | %s | %s | %s |" %
              (row_label(key), fmt((max(q), statistics.median(q))), fmt(cells.get("oneDNN")),
               fmt(cells.get("XNNPACK")), ratio(cells.get("oneDNN")), ratio(best),
               labels.get(key, "")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", default="build/bench/bench_qrt", help="the bench_qrt binary")
    ap.add_argument("--levels", default="", help="comma-separated levels (default: the host's)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--reps", type=int, default=10, help="repetitions of each row")
    ap.add_argument("--min-time", type=float, default=0.02, help="seconds per repetition")
    args = ap.parse_args()
    if not os.access(args.bench, os.X_OK):
        sys.exit("peer_table: %s is not an executable (build first: bash scripts/bootstrap.sh)"
                 % args.bench)
    host, order = list_rows(args.bench)
    levels = args.levels.split(",") if args.levels else host
    for lv in levels:
        if lv not in ONEDNN_ISA:
            sys.exit("peer_table: unknown level '%s' (one of %s)" % (lv, ", ".join(ONEDNN_ISA)))
    for lv in levels:
        for t in (int(x) for x in args.threads.split(",")):
            runs, labels = run_level(args.bench, lv, t, args.reps, args.min_time)
            if not any(w == "qrt" for w, _ in runs):
                print("\n%s, %d threads: no qrt rows (the host lacks the level)" % (lv, t))
                continue
            print_table(lv, t, runs, labels, order)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
