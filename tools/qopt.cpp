// qopt — parses and verifies a qrt graph and prints its canonical MLIR text form.
// Uses only the public C API.
#include <qrt.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

#include "qopt_calibrate.h"

namespace {

const char* kUsage =
    "usage: qopt FILE [-o OUT] [--emit text|binary] [--passes LIST | --pass NAME ...]\n"
    "            [--calibrate DATA.npy ... [--samples N] [--batch N] [--activations u8|i8]]\n"
    "            [--weight-only i8|u8|i4|u4 [--block N] [--symmetric] [--mse] [--f16-scales]]\n"
    "            [--report | --quant-report] [--print-ir-after-all] [--timing]\n"
    "       e.g. qopt model.onnx -o model.qrt    (convert to the binary container)\n"
    "            qopt model_f32.onnx --calibrate data.npy -o model_q.qrt --quant-report\n"
    "            qopt model_f32.onnx --weight-only i4 --block 32 -o model_w4.qrt --report\n"
    "\n"
    "Reads FILE (qrt MLIR text, a .qrt binary, ONNX or TFLite; '-' reads standard input),\n"
    "verifies every rule of the qrt IR (quant types, per-axis integrity, op operand/result\n"
    "types and shapes), optionally runs graph passes, and writes it: by default the canonical\n"
    "text form — generic op syntax, types and floats formatted as mlir-opt prints them — which\n"
    "qopt, qrun and mlir-opt --allow-unregistered-dialect read back.\n"
    "\n"
    "options:\n"
    "  -o OUT         write to OUT instead of standard output\n"
    "  --emit F       text or binary: the .qrt container (FlatBuffers metadata and 64-byte\n"
    "                 aligned weights, see docs/formats.md); binary needs -o. Default: binary\n"
    "                 when OUT ends in .qrt, text otherwise\n"
    "  --passes L     run the comma-separated passes L (\"default\": the plans' pipeline); a pass\n"
    "                 takes options in braces, e.g. propagate{activations=i8}. Passes:\n"
    "%s"
    "  --pass NAME    append one pass to the pipeline (repeatable)\n"
    "  --calibrate F  post-training quantization: run the float model on the samples in F\n"
    "                 (.npy, first dimension = sample; one file per model input, in order),\n"
    "                 record every float value's range, then run the calibration pipeline\n"
    "                 (%s) unless --passes/--pass say otherwise\n"
    "  --samples N    calibrate on the first N samples only (default: all)\n"
    "  --batch N      samples per calibration run (default 100)\n"
    "  --activations S  storage of calibrated activations: u8 (default) or i8\n"
    "  --weight-only S  weight-only quantization: float matmul weights and conv filters become\n"
    "                 S constants (i8, u8, i4 or u4; 4-bit ones packed two per byte), the\n"
    "                 activations stay float, and the weight-only kernels read the weights packed\n"
    "                 (bf16/f16 models: the weights and filters are expressed in that type).\n"
    "                 Runs the quantize-weights pass unless --passes/--pass say otherwise\n"
    "  --block N      weight-only matmuls: one scale and zero point per N weights along K (a\n"
    "                 sub-channel type; N must divide K, else per column). Default: per column\n"
    "  --symmetric    weight-only: zero point 0 (signed) or the middle (unsigned) and the\n"
    "                 scale from the largest magnitude. Default: asymmetric min/max\n"
    "  --mse          weight-only: search each group's clipping range for the least squared\n"
    "                 error (slower) instead of rounding the min/max range\n"
    "  --f16-scales   weight-only: every scale an f16 value (llama.cpp's Q4_0 form); the\n"
    "                 dynamic-i8 kernel then streams 16-bit scales (4-bit, blocks of 32,\n"
    "                 symmetric: 4.5 bits per weight instead of 5). Default: f32 scales\n"
    "  --numerics P   record numerics profile P in the output (default, stablehlo, tflite,\n"
    "                 tflite-single-rounding, onnx; docs/numerics.md): plans made from it\n"
    "                 compute that profile's formulas. Default: keep FILE's\n"
    "  --report       print what the passes decided, one line each, on standard error\n"
    "  --quant-report print the quantization report on standard error: per quantized value the\n"
    "                 type chosen and the rule that chose it, every rescale inserted and why,\n"
    "                 and the integer-path check\n"
    "  --print-ir-after-all  print the IR after every pass on standard error\n"
    "  --timing       print the time each pass took on standard error\n"
    "  --version      print the version and exit\n"
    "  -h, --help     print this help and exit\n"
    "\n"
    "exit status: 0 on success, 1 on an invalid or unreadable graph, 2 on a usage error.\n"
    "Errors are one line on stderr: FILE:LINE:COL: error: MESSAGE.\n";

int fail(const std::string& message, int code = 1) {
  // Messages without a source location come from the library as "error: …" already.
  const size_t skip = message.rfind("error: ", 0) == 0 ? 7 : 0;
  std::fprintf(stderr, "qopt: error: %s\n", message.c_str() + skip);
  return code;
}

// Every line with --report or --print-ir-after-all (the IR comes inside the report); else the
// propagation and integer-check lines for --quant-report and the timing lines for --timing.
void print_report(const char* lines, bool all, bool quant_only, bool timing) {
  const std::string text(lines);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const bool quant_line = line.rfind("propagate: ", 0) == 0 || line.rfind("check-integer: ", 0) == 0;
    if (all || (quant_only && quant_line) || (timing && line.rfind("timing: ", 0) == 0)) {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    start = end + 1;
  }
}

}  // namespace

int run_main(int argc, char** argv) {
  std::string input, output, emit, passes, activations, weight_bits, numerics;
  long long weight_block = 0;
  bool weight_symmetric = false, weight_mse = false, weight_f16_scales = false;
  bool report = false, quant_report = false, print_ir = false, timing = false, passes_given = false;
  qrt_tools::CalibrationOptions calibration;
  auto number = [&](int& i, long long& out) {
    if (i + 1 >= argc) return false;
    char* end = nullptr;
    out = std::strtoll(argv[++i], &end, 10);
    return *end == 0 && out > 0;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf(kUsage, qrt_passes_help(), qrt_calibration_pipeline());
      return 0;
    } else if (a == "--version") {
      std::printf("qopt (qrt) %s\n", qrt_version());
      return 0;
    } else if (a == "--emit") {
      if (i + 1 >= argc) return fail("--emit needs text or binary", 2);
      emit = argv[++i];
      if (emit != "text" && emit != "binary") return fail("--emit must be text or binary, got '" + emit + "'", 2);
    } else if (a == "--passes") {
      if (i + 1 >= argc) return fail("--passes needs a comma-separated list", 2);
      passes = argv[++i];
      passes_given = true;
    } else if (a == "--pass") {
      if (i + 1 >= argc) return fail("--pass needs a pass name", 2);
      passes += (passes.empty() ? "" : ",") + std::string(argv[++i]);
      passes_given = true;
    } else if (a == "--calibrate") {
      if (i + 1 >= argc) return fail("--calibrate needs a .npy file", 2);
      calibration.files.push_back(argv[++i]);
    } else if (a == "--samples") {
      if (!number(i, calibration.samples)) return fail("--samples needs a positive number", 2);
    } else if (a == "--batch") {
      if (!number(i, calibration.batch)) return fail("--batch needs a positive number", 2);
    } else if (a == "--activations") {
      if (i + 1 >= argc) return fail("--activations needs u8 or i8", 2);
      activations = argv[++i];
      if (activations != "u8" && activations != "i8") return fail("--activations must be u8 or i8, got '" + activations + "'", 2);
    } else if (a == "--weight-only") {
      if (i + 1 >= argc) return fail("--weight-only needs i8, u8, i4 or u4", 2);
      weight_bits = argv[++i];
      if (weight_bits != "i8" && weight_bits != "u8" && weight_bits != "i4" && weight_bits != "u4") {
        return fail("--weight-only must be i8, u8, i4 or u4, got '" + weight_bits + "'", 2);
      }
    } else if (a == "--block") {
      if (!number(i, weight_block)) return fail("--block needs a positive number of weights", 2);
    } else if (a == "--symmetric") {
      weight_symmetric = true;
    } else if (a == "--mse") {
      weight_mse = true;
    } else if (a == "--f16-scales") {
      weight_f16_scales = true;
    } else if (a == "--numerics") {
      if (i + 1 >= argc) return fail("--numerics needs a profile (default, stablehlo, tflite, tflite-single-rounding, onnx)", 2);
      numerics = argv[++i];
    } else if (a == "--report") {
      report = true;
    } else if (a == "--quant-report") {
      quant_report = true;
    } else if (a == "--print-ir-after-all") {
      print_ir = true;
    } else if (a == "--timing") {
      timing = true;
    } else if (a == "-o") {
      if (i + 1 >= argc) return fail("-o needs a file name", 2);
      output = argv[++i];
    } else if (a.size() > 1 && a[0] == '-') {
      return fail("unknown option '" + a + "' (see qopt --help)", 2);
    } else if (input.empty()) {
      input = a;
    } else {
      return fail("unexpected argument '" + a + "': only one FILE may be given", 2);
    }
  }
  if (input.empty()) return fail("no FILE given (see qopt --help)", 2);
  if (calibration.files.empty() && (calibration.samples > 0 || !activations.empty())) {
    return fail("--samples and --activations need --calibrate", 2);
  }
  if (weight_bits.empty() && (weight_block > 0 || weight_symmetric || weight_mse || weight_f16_scales)) {
    return fail("--block, --symmetric, --mse and --f16-scales need --weight-only", 2);
  }
  if (!weight_bits.empty() && !calibration.files.empty()) {
    return fail("--weight-only and --calibrate do not combine: weight-only keeps float activations", 2);
  }
  if (!weight_bits.empty() && !passes_given) {
    passes = "quantize-weights{bits=" + weight_bits + " block=" + std::to_string(weight_block) +
             " symmetric=" + (weight_symmetric ? "true" : "false") + " search=" + (weight_mse ? "mse" : "rtn") +
             (weight_f16_scales ? " scales=f16" : "") + "}";
  }
  // Without --emit, the output's extension decides: .qrt is binary, anything else text.
  if (emit.empty()) {
    emit = output.size() > 4 && output.compare(output.size() - 4, 4, ".qrt") == 0 ? "binary" : "text";
  }
  if (emit == "binary" && output.empty()) return fail("--emit binary needs -o OUT", 2);

  qrt_model_t* model = nullptr;
  qrt_status st;
  if (input == "-") {
    const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    st = qrt_model_load_buffer(text.data(), text.size(), "<stdin>", &model);
  } else {
    st = qrt_model_load_file(input.c_str(), &model);
  }
  if (st != QRT_OK) return fail(qrt_last_error_message());
  if (!numerics.empty() && qrt_model_set_numerics(model, numerics.c_str()) != QRT_OK) {
    const std::string why = qrt_last_error_message();
    qrt_model_destroy(model);
    return fail(why, 2);
  }
  if (!calibration.files.empty()) {
    std::string why;
    if (!qrt_tools::calibrate_from_npy(model, calibration, why)) {
      qrt_model_destroy(model);
      return fail(why);
    }
    if (!passes_given) {
      passes = qrt_calibration_pipeline();
      if (!activations.empty()) {
        const size_t at = passes.find("propagate");
        passes.replace(at, 9, "propagate{activations=" + activations + "}");
      }
    }
  }
  if (!passes.empty()) {
    char* lines = nullptr;
    const unsigned flags = (print_ir ? unsigned(QRT_PASSES_PRINT_IR_AFTER_ALL) : 0u) | (timing ? unsigned(QRT_PASSES_TIMING) : 0u);
    const bool want_lines = report || quant_report || print_ir || timing;
    if (qrt_model_apply_passes_ex(model, passes.c_str(), flags, want_lines ? &lines : nullptr) != QRT_OK) {
      const std::string why = qrt_last_error_message();
      qrt_model_destroy(model);
      return fail(why);
    }
    if (lines) print_report(lines, report || print_ir, quant_report, timing);
    qrt_free(lines);
  } else if (report || quant_report || print_ir || timing) {
    return fail("--report, --quant-report, --print-ir-after-all and --timing need passes to run", 2);
  }
  if (emit == "binary") {
    st = qrt_model_save(model, output.c_str(), QRT_FORMAT_BINARY);
    qrt_model_destroy(model);
    return st == QRT_OK ? 0 : fail(qrt_last_error_message());
  }
  char* text = nullptr;
  st = qrt_model_print(model, &text);
  qrt_model_destroy(model);
  if (st != QRT_OK) return fail(qrt_last_error_message());
  int rc = 0;
  if (output.empty()) {
    std::fputs(text, stdout);
  } else {
    FILE* f = std::fopen(output.c_str(), "wb");
    if (!f || std::fputs(text, f) < 0 || std::fclose(f) != 0) {
      rc = fail(output + ": cannot write: " + std::strerror(errno));
    }
  }
  qrt_free(text);
  return rc;
}

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what());
  }
}
