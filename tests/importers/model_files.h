// Test helpers shared by the bundled-model tests: the models' folder, reading one of its .npy
// files, and the C API's message for bytes that must not load.
#pragma once

#include <doctest/doctest.h>

#include <qrt.h>

#include <string>

#include "tools/npy.h"

namespace model_files {

/// The bundled models' folder (models/ in the source tree).
inline const std::string kModels = MODELS_DIR;

/// models/onnx/<file> as an array; fails the test when it cannot be read.
inline qrt_tools::NpyArray load(const std::string& file) {
  qrt_tools::NpyArray a;
  std::string error;
  REQUIRE_MESSAGE(qrt_tools::read_npy(kModels + "/onnx/" + file, a, error), error);
  return a;
}

/// Loads `bytes` (named `name`) through the C API, which must refuse them and leave no model;
/// returns its error message.
inline std::string load_error(const std::string& bytes, const char* name) {
  qrt_model_t* m = nullptr;
  CHECK(qrt_model_load_buffer(bytes.data(), bytes.size(), name, &m) != QRT_OK);
  CHECK(m == nullptr);
  return qrt_last_error_message();
}

}  // namespace model_files
