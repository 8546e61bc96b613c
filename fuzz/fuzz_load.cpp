// libFuzzer target: the model loaders through the public C API, with load_check.h's oracle.
// QRT_FUZZ_NAME (e.g. "fuzz.onnx") picks the format as a file name would; QRT_FUZZ_BINARY
// fuzzes the .qrt container.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "load_check.h"

#ifndef QRT_FUZZ_NAME
#define QRT_FUZZ_NAME "fuzz"
#endif

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
  const std::string broken = qrt_fuzz::check_load(data, size, QRT_FUZZ_NAME);
  if (!broken.empty()) {
    std::fprintf(stderr, "fuzz_load (%s): %s\n", QRT_FUZZ_NAME, broken.c_str());
    std::abort();
  }
  return 0;
}
