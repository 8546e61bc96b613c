// libFuzzer target: the model loaders through the public C API. QRT_FUZZ_NAME (e.g.
// "fuzz.onnx") picks the format as a file name would; "fuzz" lets the content decide (the
// .qrt container is always recognised by its magic). Whatever loads must print as MLIR text
// that loads again and prints identically: the printer and the parser agree on every graph
// the loaders accept.
#include <qrt.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#ifndef QRT_FUZZ_NAME
#define QRT_FUZZ_NAME "fuzz"
#endif

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_load (%s): %s\n%s\n", QRT_FUZZ_NAME, what, detail.c_str());
  std::abort();
}

std::string print(const qrt_model_t* model) {
  char* text = nullptr;
  if (qrt_model_print(model, &text) != QRT_OK) fail("a loaded model does not print", qrt_last_error_message());
  std::string s(text);
  qrt_free(text);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
#ifdef QRT_FUZZ_BINARY
  // The .qrt container is recognised by "QRTB" at byte 4 (docs/formats.md): every input gets
  // it, so that no mutation is spent on the magic and none falls through to the text parser.
  std::string forced(reinterpret_cast<const char*>(data), size);
  if (forced.size() < 8) forced.resize(8);
  forced.replace(4, 4, "QRTB");
  data = reinterpret_cast<const uint8_t*>(forced.data());
  size = forced.size();
#endif
  qrt_model_t* model = nullptr;
  if (qrt_model_load_buffer(data, size, QRT_FUZZ_NAME, &model) != QRT_OK) {
    // A failure must say what went wrong.
    if (qrt_last_error_message()[0] == '\0') fail("a load failed without a message", "");
    return 0;
  }
  const std::string text = print(model);
  qrt_model_destroy(model);
  qrt_model_t* again = nullptr;
  if (qrt_model_load_buffer(text.data(), text.size(), "printed.mlir", &again) != QRT_OK)
    fail("the printed text does not load again", std::string(qrt_last_error_message()) + "\n" + text);
  const std::string text2 = print(again);
  qrt_model_destroy(again);
  if (text2 != text) fail("printing is not a fixed point", text + "\n--- printed again ---\n" + text2);
  return 0;
}
