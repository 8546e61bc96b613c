// qrun — benchmark statistics, per-op profile and Chrome trace (see qrun_bench.h).
#include "qrun_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <vector>

namespace qrt_tools {

namespace {

// Escapes a string for JSON.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// The contract name of a kernel description (the text before " (").
std::string short_kernel(const char* kernel) {
  std::string k = kernel;
  return k.substr(0, k.find(" ("));
}

}  // namespace

std::string bench_and_profile(qrt_context_t* context, const qrt_plan_t* plan, size_t threads,
                              const BenchOptions& options) {
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  // Each op's time in each measured run. The profile prints per-op medians: a mean lets one
  // preempted run (a shared host's 45 ms stall) double the op it hit.
  std::vector<std::vector<double>> op_us(ops);
  auto add_op_times = [&] {
    for (size_t i = 0; i < ops; ++i) {
      uint64_t ns = 0;
      qrt_context_op_time(context, i, &ns);
      op_us[i].push_back(double(ns) / 1000.0);
    }
  };
  int measured = 0;
  if (options.iterations > 0) {
    std::vector<double> ms;
    for (int it = 0; it < options.iterations; ++it) {
      const auto start = std::chrono::steady_clock::now();
      if (qrt_context_run(context) != QRT_OK) return std::string("run failed: ") + qrt_last_error_message();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      add_op_times();
    }
    measured = options.iterations;
    std::sort(ms.begin(), ms.end());
    auto at = [&](double q) { return ms[std::min(ms.size() - 1, size_t(q * double(ms.size() - 1) + 0.5))]; };
    double sum = 0;
    for (double v : ms) sum += v;
    std::printf("bench: %d runs, %zu thread%s: latency ms min %.3f median %.3f p90 %.3f max %.3f; %.1f runs/s\n",
                options.iterations, threads, threads == 1 ? "" : "s", ms.front(), at(0.5), at(0.9), ms.back(),
                1000.0 * double(ms.size()) / sum);
  } else {
    add_op_times();  // the run already made
    measured = 1;
  }
  if (options.profile) {
    std::vector<double> op_median(ops, 0.0);
    double total = 0;
    for (size_t i = 0; i < ops; ++i) {
      std::vector<double>& v = op_us[i];
      std::sort(v.begin(), v.end());
      const size_t n = v.size();
      op_median[i] = n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
      total += op_median[i];
    }
    std::printf("profile (median of %d run%s per op; total: their sum):\n%5s  %-16s %-44s %10s %7s %8s\n", measured,
                measured == 1 ? "" : "s", "op", "name", "kernel", "time us", "share", "GOPS");
    for (size_t i = 0; i < ops; ++i) {
      qrt_op_info info;
      qrt_plan_op_info(plan, i, &info);
      const double us = op_median[i];
      if (us == 0.0) continue;  // constants and skipped ops
      char gops[32] = "";
      if (info.ops > 0) std::snprintf(gops, sizeof gops, "%.2f", double(info.ops) / (us * 1000.0));
      std::printf("%5zu  %-16s %-44s %10.1f %6.1f%% %8s\n", i, info.op, short_kernel(info.kernel).c_str(), us,
                  100.0 * us / total, gops);
    }
    std::printf("%5s  %-16s %-44s %10.1f\n", "", "total", "", total);
    qrt_memory_info mem;
    qrt_plan_memory_info(plan, &mem);
    std::printf("memory: arena %.1f KiB for intermediates of %.1f KiB in all (%.1f%%), %zu in place\n",
                double(mem.arena_bytes) / 1024.0, double(mem.naive_bytes) / 1024.0,
                mem.naive_bytes ? 100.0 * double(mem.arena_bytes) / double(mem.naive_bytes) : 0.0, mem.in_place);
    size_t shapes = 0;
    if (qrt_plan_num_specializations(plan, &shapes) == QRT_OK && shapes > 0) {
      // A dynamic-shape plan whose later runs took a static plan compiled for their shapes.
      std::printf("shapes: the runs took %zu static plan%s compiled for their input shapes (with fused regions and "
                  "an arena of their own; --no-specialize: the graph walk)\n",
                  shapes, shapes == 1 ? "" : "s");
    }
    qrt_weight_memory wm;
    wm.struct_size = sizeof wm;
    if (qrt_plan_weight_memory(plan, &wm) == QRT_OK) {
      // Resident weights: the constants as stored (shared with the model), their types'
      // quantization parameters, and what kernels prepared from them (packed or dequantized).
      const double resident = double(wm.constant_bytes + wm.parameter_bytes + wm.kernel_bytes);
      std::printf("memory: weights %.1f KiB resident = %.1f KiB constants as stored + %.1f KiB quantization parameters + "
                  "%.1f KiB prepared by kernels\n",
                  resident / 1024.0, double(wm.constant_bytes) / 1024.0, double(wm.parameter_bytes) / 1024.0,
                  double(wm.kernel_bytes) / 1024.0);
    }
  }
  if (!options.trace_path.empty()) {
    // Chrome trace event format: one complete ("X") event per op of the last run, in order.
    std::ofstream out(options.trace_path);
    if (!out) return options.trace_path + ": cannot write the trace";
    out << "{\"traceEvents\": [\n";
    double ts = 0;
    bool first = true;
    for (size_t i = 0; i < ops; ++i) {
      uint64_t ns = 0;
      qrt_context_op_time(context, i, &ns);
      if (ns == 0) continue;
      qrt_op_info info;
      qrt_plan_op_info(plan, i, &info);
      const double dur = double(ns) / 1000.0;
      out << (first ? "" : ",\n") << "  {\"name\": " << json_string(info.op) << ", \"cat\": "
          << json_string(short_kernel(info.kernel)) << ", \"ph\": \"X\", \"ts\": " << ts << ", \"dur\": " << dur
          << ", \"pid\": 1, \"tid\": 1, \"args\": {\"op\": " << i << "}}";
      ts += dur;
      first = false;
    }
    out << "\n], \"displayTimeUnit\": \"ms\"}\n";
    if (!out) return options.trace_path + ": write error";
  }
  return "";
}

}  // namespace qrt_tools
