// qopt — parses and verifies a qrt graph and prints its canonical MLIR text form.
// Uses only the public C API.
#include <qrt.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

namespace {

const char* kUsage =
    "usage: qopt FILE [-o OUT] [--emit text|binary] [--passes LIST] [--report]\n"
    "       e.g. qopt model.onnx -o model.qrt    (convert to the binary container)\n"
    "\n"
    "Reads FILE (qrt MLIR text, a .qrt binary, ONNX or TFLite; '-' reads standard input),\n"
    "verifies every rule of the qrt IR (quant types, per-axis integrity, op operand/result\n"
    "types and shapes) and writes it: by default the canonical text form — generic op syntax,\n"
    "types and floats formatted as mlir-opt prints them — which qopt, qrun and\n"
    "mlir-opt --allow-unregistered-dialect read back.\n"
    "\n"
    "options:\n"
    "  -o OUT      write to OUT instead of standard output\n"
    "  --emit F    text or binary: the .qrt container (FlatBuffers metadata and 64-byte\n"
    "              aligned weights, see docs/formats.md); binary needs -o. Default: binary\n"
    "              when OUT ends in .qrt, text otherwise\n"
    "  --passes L  run the comma-separated graph passes L before writing: fold-pad (explicit\n"
    "              pads into quantized convolutions), fold-qdq (dcast -> float op -> qcast\n"
    "              regions into integer ops); dead ops are removed after them\n"
    "  --report    print what the passes decided, one line each, on standard error\n"
    "  --version   print the version and exit\n"
    "  -h, --help  print this help and exit\n"
    "\n"
    "exit status: 0 on success, 1 on an invalid or unreadable graph, 2 on a usage error.\n"
    "Errors are one line on stderr: FILE:LINE:COL: error: MESSAGE.\n";

int fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "qopt: error: %s\n", message.c_str());
  return code;
}

}  // namespace

int run_main(int argc, char** argv) {
  std::string input, output, emit, passes;
  bool report = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
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
    } else if (a == "--report") {
      report = true;
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
  if (!passes.empty()) {
    char* lines = nullptr;
    if (qrt_model_apply_passes(model, passes.c_str(), report ? &lines : nullptr) != QRT_OK) {
      const std::string why = qrt_last_error_message();
      qrt_model_destroy(model);
      return fail(why);
    }
    if (lines) std::fputs(lines, stderr);
    qrt_free(lines);
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
