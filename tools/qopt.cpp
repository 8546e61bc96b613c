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
    "usage: qopt FILE [-o OUT]\n"
    "\n"
    "Parses FILE (MLIR text; '-' reads standard input), verifies every rule of the qrt IR\n"
    "(quant types, per-axis integrity, op operand/result types and shapes) and prints the\n"
    "canonical text form: generic op syntax, types and floats formatted as mlir-opt prints\n"
    "them. The output can be read back by qopt, qrun and mlir-opt --allow-unregistered-dialect.\n"
    "\n"
    "options:\n"
    "  -o OUT      write to OUT instead of standard output\n"
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
  std::string input, output;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--version") {
      std::printf("qopt (qrt) %s\n", qrt_version());
      return 0;
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

  qrt_model_t* model = nullptr;
  qrt_status st;
  if (input == "-") {
    const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    st = qrt_model_load_buffer(text.data(), text.size(), "<stdin>", &model);
  } else {
    st = qrt_model_load_file(input.c_str(), &model);
  }
  if (st != QRT_OK) return fail(qrt_last_error_message());
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
