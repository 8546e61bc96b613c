// qopt — calibration from .npy files (see qopt_calibrate.h).
#include "qopt_calibrate.h"

#include <algorithm>

#include "npy.h"

namespace qrt_tools {

bool calibrate_from_npy(qrt_model_t* model, const CalibrationOptions& options, std::string& error) {
  size_t inputs = 0;
  qrt_model_num_inputs(model, &inputs);
  if (options.files.size() != inputs) {
    error = "the model has " + std::to_string(inputs) + " input(s): give one --calibrate FILE.npy for each, got " +
            std::to_string(options.files.size());
    return false;
  }
  std::vector<NpyArray> arrays(inputs);
  std::vector<std::vector<int64_t>> sample_dims(inputs);  // dims of one sample, as the model wants them
  long long count = -1;
  long long batch = options.batch;
  for (size_t i = 0; i < inputs; ++i) {
    if (!read_npy(options.files[i], arrays[i], error)) return false;
    const NpyArray& a = arrays[i];
    qrt_tensor_info info;
    qrt_model_input_info(model, i, &info);
    if (a.shape.empty()) {
      error = options.files[i] + ": a 0-d array has no sample dimension";
      return false;
    }
    long long per_sample = 1;
    for (size_t d = 1; d < a.shape.size(); ++d) per_sample *= a.shape[d];
    std::vector<int64_t> want(info.dims + (info.rank > 0 ? 1 : 0), info.dims + info.rank);
    long long want_elems = 1;
    for (int64_t d : want) want_elems *= d < 0 ? 1 : d;
    bool dynamic_inner = std::any_of(want.begin(), want.end(), [](int64_t d) { return d < 0; });
    if (info.rank == 0 || dynamic_inner || want_elems != per_sample) {
      error = options.files[i] + ": samples of shape [" + std::to_string(per_sample) + " elements] do not fit input '" +
              info.name + "' of type " + info.type;
      return false;
    }
    if (a.dtype != info.dtype) {
      error = options.files[i] + ": dtype " + qrt_dtype_name(a.dtype) + " does not match input '" + info.name +
              "' (" + qrt_dtype_name(info.dtype) + ")";
      return false;
    }
    sample_dims[i] = want;
    if (info.dims[0] >= 0) batch = info.dims[0];  // a static batch dimension fixes the batch
    count = count < 0 ? a.shape[0] : std::min<long long>(count, a.shape[0]);
  }
  if (options.samples >= 0) count = std::min(count, options.samples);
  if (count <= 0) {
    error = "no calibration samples";
    return false;
  }
  for (long long start = 0; start + (batch == options.batch ? 0 : batch - 1) < count; start += batch) {
    const long long n = std::min(batch, count - start);
    std::vector<std::vector<int64_t>> dims(inputs);
    std::vector<qrt_tensor_view> views(inputs);
    for (size_t i = 0; i < inputs; ++i) {
      dims[i] = {n};
      dims[i].insert(dims[i].end(), sample_dims[i].begin(), sample_dims[i].end());
      const size_t sample_bytes = arrays[i].data.size() / size_t(arrays[i].shape[0]);
      views[i] = {arrays[i].dtype, dims[i].size(), dims[i].data(), arrays[i].data.data() + size_t(start) * sample_bytes,
                  size_t(n) * sample_bytes};
    }
    if (qrt_model_calibrate(model, views.data(), inputs) != QRT_OK) {
      error = std::string("calibration failed: ") + qrt_last_error_message();
      return false;
    }
  }
  return true;
}

}  // namespace qrt_tools
