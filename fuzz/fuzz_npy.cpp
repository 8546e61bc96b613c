// libFuzzer target: the .npy reader qrun and qopt use (tools/npy.h). Every input either
// parses into an array whose byte count matches its shape, or fails with a message.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tools/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qrt_tools::NpyArray array;
  std::string error;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (!qrt_tools::parse_npy(bytes, "fuzz.npy", array, error)) {
    if (error.empty()) {
      std::fprintf(stderr, "fuzz_npy: a failure without a message\n");
      std::abort();
    }
    return 0;
  }
  size_t count = 1;
  for (int64_t d : array.shape) count *= static_cast<size_t>(d);
  if (array.data.size() != count * qrt_dtype_size(array.dtype)) {
    std::fprintf(stderr, "fuzz_npy: %zu data bytes for %zu elements of %s\n", array.data.size(), count,
                 qrt_dtype_name(array.dtype));
    std::abort();
  }
  return 0;
}
