// qopt — post-training calibration from .npy sample files, through the C API.
#pragma once

#include <string>
#include <vector>

#include <qrt.h>

namespace qrt_tools {

/// How qopt calibrates.
struct CalibrationOptions {
  std::vector<std::string> files;  ///< one .npy per model input, in input order
  long long samples = -1;          ///< use the first N samples (-1: all)
  long long batch = 100;           ///< samples per qrt_model_calibrate call
};

/// Feeds the samples to qrt_model_calibrate batch by batch. Each file's first dimension is the
/// sample index; when the model's input has another rank, each sample is reshaped to the
/// input's non-batch dimensions if the element counts agree. Returns false with `error` set to
/// one line naming the file or the C API's message.
bool calibrate_from_npy(qrt_model_t* model, const CalibrationOptions& options, std::string& error);

}  // namespace qrt_tools
