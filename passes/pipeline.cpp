// qrt — the pass manager (see pipeline.h).
#include "passes/pipeline.h"

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <sstream>

#include "ir/ops.h"
#include "ir/text_format.h"
#include "passes/activation_storage.h"
#include "passes/calibrate.h"
#include "passes/check_integer.h"
#include "passes/dead_code.h"
#include "passes/expand_batch_groups.h"
#include "passes/fake_quant.h"
#include "passes/fold_pad.h"
#include "passes/fold_qdq.h"
#include "passes/fuse_clamp.h"
#include "passes/layout_nhwc.h"
#include "passes/lower_hybrid.h"
#include "passes/lower_reduce.h"
#include "passes/propagate.h"
#include "passes/quantize_weights.h"

namespace qrt::passes {

std::string PassOptions::get(const std::string& key, const std::string& fallback) const {
  auto it = values.find(key);
  return it == values.end() ? fallback : it->second;
}

Result<std::string> PassOptions::choice(const std::string& pass, const std::string& key,
                                        const std::vector<std::string>& allowed, const std::string& fallback) const {
  const std::string v = get(key, fallback);
  std::string list;
  for (const std::string& a : allowed) {
    if (a == v) return v;
    list += (list.empty() ? "" : ", ") + a;
  }
  return Status::error("pass '" + pass + "': option " + key + "=" + v + " must be one of " + list)
      .with_code(ErrorCode::kInvalidArgument);
}

namespace {

Result<Graph> run_fake_quant(const Graph& g, const PassOptions&, PassLog& log) { return convert_fake_quant(g, log); }

Result<Graph> run_calibrate(const Graph& g, const PassOptions&, PassLog& log) { return stats_to_calibrated(g, log); }

Result<Graph> run_propagate(const Graph& g, const PassOptions& o, PassLog& log) {
  PropagateOptions options;
  QRT_ASSIGN_OR_RETURN(std::string act, o.choice("propagate", "activations", {"u8", "i8"}, "u8"));
  QRT_ASSIGN_OR_RETURN(std::string w, o.choice("propagate", "weights", {"per-channel", "per-tensor"}, "per-channel"));
  parse_storage(act, options.scheme.activations);
  options.scheme.per_channel_weights = w == "per-channel";
  PropagationReport report;
  QRT_ASSIGN_OR_RETURN(Graph out, propagate_quant_params(g, default_constraint_table(options.scheme), options, &report));
  for (std::string& line : format_report(report)) log.push_back(std::move(line));
  return out;
}

Result<Graph> run_fold_pad(const Graph& g, const PassOptions&, PassLog& log) {
  size_t folded = 0;
  Graph out = fold_pad_into_conv(g, &folded);
  log.push_back(std::to_string(folded) + " pad(s) folded into convolutions");
  return out;
}

Result<Graph> run_fold_qdq(const Graph& g, const PassOptions&, PassLog& log) {
  QdqFoldReport r;
  Graph out = fold_qdq(g, &r);
  log.push_back(std::to_string(r.folded) + " region(s) folded");
  for (const std::string& line : r.lines) log.push_back("  " + line);
  return out;
}

Result<Graph> run_expand_batch_groups(const Graph& g, const PassOptions&, PassLog& log) {
  return expand_batch_groups(g, log);
}

Result<Graph> run_fuse_clamp(const Graph& g, const PassOptions&, PassLog& log) {
  size_t fused = 0;
  Graph out = fuse_clamp_into_producers(g, &fused);
  log.push_back(std::to_string(fused) + " clamp(s) fused into their producers");
  return out;
}

Result<Graph> run_to_nhwc(const Graph& g, const PassOptions&, PassLog& log) {
  LayoutReport r;
  Graph out = to_nhwc(g, &r);
  log.push_back(std::to_string(r.converted) + " NCHW conv/pool op(s) now NHWC, " + std::to_string(r.followed) +
                " reader(s) follow in NHWC, " + std::to_string(r.transposes) + " transpose(s) added" +
                (r.flattens ? ", " + std::to_string(r.flattens) + " flatten(s) read NHWC by " + std::to_string(r.permuted) +
                                  " matmul(s) on permuted weight rows"
                            : ""));
  return out;
}

Result<Graph> run_lower_hybrid(const Graph& g, const PassOptions& o, PassLog& log) {
  QRT_ASSIGN_OR_RETURN(std::string mode,
                       o.choice("lower-hybrid", "mode", {"weight-only", "dynamic-range", "dynamic-i8"}, "weight-only"));
  const HybridMode m = mode == "dynamic-range" ? HybridMode::kDynamicRange
                       : mode == "dynamic-i8"  ? HybridMode::kDynamicI8
                                               : HybridMode::kWeightOnly;
  return lower_hybrid(g, m, log);
}

Result<Graph> run_quantize_weights(const Graph& g, const PassOptions& o, PassLog& log) {
  WeightQuantOptions w;
  QRT_ASSIGN_OR_RETURN(std::string bits, o.choice("quantize-weights", "bits", {"i8", "u8", "i4", "u4"}, "i8"));
  w.bits = bits[1] == '8' ? 8 : 4;
  w.is_signed = bits[0] == 'i';
  const std::string block = o.get("block", "0");
  char* end = nullptr;
  const long long b = std::strtoll(block.c_str(), &end, 10);
  if (block.empty() || *end != '\0' || b < 0 || b > (1ll << 40)) {
    return Status::error("pass 'quantize-weights': option block=" + block + " must be a block size >= 0 (0: per column)")
        .with_code(ErrorCode::kInvalidArgument);
  }
  w.block = b;
  QRT_ASSIGN_OR_RETURN(std::string sym, o.choice("quantize-weights", "symmetric", {"false", "true"}, "false"));
  w.symmetric = sym == "true";
  QRT_ASSIGN_OR_RETURN(std::string search, o.choice("quantize-weights", "search", {"rtn", "mse"}, "rtn"));
  w.mse = search == "mse";
  QRT_ASSIGN_OR_RETURN(std::string scales, o.choice("quantize-weights", "scales", {"f32", "f16"}, "f32"));
  w.f16_scales = scales == "f16";
  return quantize_weights(g, w, log);
}

Result<Graph> run_lower_reduce(const Graph& g, const PassOptions&, PassLog& log) { return lower_reduce(g, log); }

Result<Graph> run_activation_storage(const Graph& g, const PassOptions& o, PassLog& log) {
  QRT_ASSIGN_OR_RETURN(std::string to, o.choice("activation-storage", "to", {"u8", "i8"}, "u8"));
  ActivationStorageReport r;
  Graph out = retype_activation_storage(g, to == "u8", &r);
  log.push_back(std::to_string(r.values) + " value(s) in " + std::to_string(r.groups) + " group(s) now stored as " + to +
                ", " + std::to_string(r.kept_groups) + " group(s) kept");
  for (const std::string& line : r.lines) log.push_back("  " + line);
  return out;
}

Result<Graph> run_check_integer(const Graph& g, const PassOptions&, PassLog& log) {
  Graph live = eliminate_dead_ops(g);  // what folding left unused does not count
  check_integer(live, log);
  return live;
}

}  // namespace

const std::vector<PassInfo>& registered_passes() {
  static const std::vector<PassInfo> passes = {
      {"calibrate", "quant.stats at region boundaries -> qcast/dcast to !quant.calibrated; inside regions dropped", {},
       run_calibrate},
      {"fake-quant", "qrt.fake_quant -> qcast/dcast with the nudged !quant.uniform type", {}, run_fake_quant},
      {"propagate", "resolve calibrated/any types from the constraint table; quantize weights and biases; rescales",
       {"activations", "weights"}, run_propagate},
      {"lower-hybrid", "float x dcast(quantized weights) matmul -> hybrid (mode=weight-only) or, asked for, dynamic range "
                       "(mode=dynamic-range: u8 per tensor; mode=dynamic-i8: i8 per row and weight block)",
       {"mode"}, run_lower_hybrid},
      {"quantize-weights", "float matmul weights and conv filters -> 8- or 4-bit constants, per column or block-wise along K (weight-only)",
       {"bits", "block", "symmetric", "search", "scales"}, run_quantize_weights},
      {"lower-reduce", "dcast -> mean -> qcast -> quantized mean accumulating in i32 (explicit accumulator type)", {},
       run_lower_reduce},
      {"fold-pad", "explicit pads into quantized convolutions", {}, run_fold_pad},
      {"fold-qdq", "dcast -> float op -> qcast regions into integer ops; rescale chains into requantize", {},
       run_fold_qdq},
      {"expand-batch-groups", "conv2d with batch_groups B > 1 -> B convolutions of batch and channel slices and a concat",
       {}, run_expand_batch_groups},
      {"to-nhwc", "NCHW conv/pool regions to NHWC: transposes only at region borders, inverse pairs cancelled, "
                  "flattens into quantized matmuls read NHWC (weight rows permuted)", {},
       run_to_nhwc},
      {"fuse-clamp", "clamp/relu into the conv2d, matmul (quantized or float), add or mul (quantized) it reads (clamp_min/clamp_max)", {},
       run_fuse_clamp},
      {"activation-storage", "internal 8-bit activations re-stored as u8 (to=u8, zero point + 128) or i8 (to=i8), the "
                             "storage the target's kernels read without a flip; values, not bits, are kept",
       {"to"}, run_activation_storage},
      {"check-integer", "report every qcast/dcast left between integer kernels, and why", {}, run_check_integer},
  };
  return passes;
}

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (const PassInfo& p : registered_passes()) names.push_back(p.name);
  return names;
}

namespace {

struct PassCall {
  const PassInfo* info;
  PassOptions options;
};

Result<std::vector<PassCall>> parse_spec(const std::string& spec) {
  std::vector<PassCall> calls;
  size_t i = 0;
  auto known = [] {
    std::string s;
    for (const std::string& n : pass_names()) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  while (i < spec.size()) {
    size_t end = i;
    while (end < spec.size() && spec[end] != ',' && spec[end] != '{') ++end;
    const std::string name = spec.substr(i, end - i);
    PassOptions options;
    if (end < spec.size() && spec[end] == '{') {
      const size_t close = spec.find('}', end);
      if (close == std::string::npos) {
        return Status::error("pass '" + name + "': options opened with '{' are not closed").with_code(ErrorCode::kInvalidArgument);
      }
      std::stringstream ss(spec.substr(end + 1, close - end - 1));
      for (std::string kv; ss >> kv;) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos) {
          return Status::error("pass '" + name + "': option '" + kv + "' must be key=value").with_code(ErrorCode::kInvalidArgument);
        }
        options.values[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      end = close + 1;
    }
    if (!name.empty()) {
      const PassInfo* info = nullptr;
      for (const PassInfo& p : registered_passes()) {
        if (name == p.name) info = &p;
      }
      if (!info) {
        return Status::error("unknown pass '" + name + "' (passes: " + known() + ")").with_code(ErrorCode::kInvalidArgument);
      }
      for (const auto& [key, value] : options.values) {
        bool ok = false;
        for (const char* k : info->options) ok = ok || key == k;
        if (!ok) {
          return Status::error("pass '" + name + "' has no option '" + key + "'").with_code(ErrorCode::kInvalidArgument);
        }
      }
      calls.push_back({info, std::move(options)});
    }
    i = end < spec.size() && spec[end] == ',' ? end + 1 : end;
  }
  return calls;
}

}  // namespace

Result<Graph> run_pipeline(const Graph& graph, const std::string& spec_in, const PipelineOptions& options) {
  const std::string spec = spec_in == "default" ? kDefaultPipeline : spec_in;
  QRT_ASSIGN_OR_RETURN(std::vector<PassCall> calls, parse_spec(spec));
  Graph g = graph;
  std::vector<std::string> timings;
  for (const PassCall& call : calls) {
    PassLog log;
    const auto start = std::chrono::steady_clock::now();
    auto out = call.info->run(g, call.options, log);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!out.is_ok()) {
      const std::string& m = out.status().message();
      if (m.rfind("pass '", 0) == 0) return out.status();
      return Status::error("pass '" + std::string(call.info->name) + "': " + m).with_code(out.status().code());
    }
    g = std::move(out).value();
    g.numerics = graph.numerics;  // passes rewrite ops, never the profile their formulas follow
    share_dense_attributes(g);  // constants a pass made (e.g. quantized weights) are copied next
    if (Status s = verify_graph(g); !s.is_ok()) {
      return Status::error("pass '" + std::string(call.info->name) + "' produced an invalid graph: " + s.to_string());
    }
    if (options.report) {
      for (const std::string& line : log) options.report->push_back(std::string(call.info->name) + ": " + line);
      if (options.print_ir_after_all) {
        options.report->push_back("// -----// IR after " + std::string(call.info->name) + " //----- //");
        options.report->push_back(print_graph(g));
      }
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, "timing: %-14s %9.3f ms", call.info->name, ms);
    timings.push_back(buf);
  }
  size_t removed = 0;
  g = eliminate_dead_ops(g, &removed);
  if (options.report && !calls.empty()) options.report->push_back("dead ops removed: " + std::to_string(removed));
  if (options.report && options.timing) {
    for (std::string& t : timings) options.report->push_back(std::move(t));
  }
  return g;
}

Result<Graph> run_pipeline(const Graph& graph, const std::string& spec, std::vector<std::string>* report) {
  PipelineOptions options;
  options.report = report;
  return run_pipeline(graph, spec, options);
}

}  // namespace qrt::passes
