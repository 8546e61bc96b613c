// Tests' helpers for the runtime suites: models by path, deterministic inputs, one run's
// output bytes, and a compiled model (through the C API, as users reach the runtime).
#pragma once

#include <doctest/doctest.h>

#include <qrt.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace qrt_test {

inline const std::string kModels = MODELS_DIR;

// Deterministic inputs for every input of a model: floats in [-1, 1), stored values over the
// storage bounds; dynamic dimensions become 1.
struct Inputs {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<std::vector<int64_t>> dims;
  std::vector<qrt_dtype> dtypes;
};

inline Inputs make_inputs(qrt_model_t* model, uint32_t seed) {
  Inputs in;
  size_t n = 0;
  qrt_model_num_inputs(model, &n);
  std::mt19937 rng(seed);
  for (size_t i = 0; i < n; ++i) {
    qrt_tensor_info info;
    REQUIRE(qrt_model_input_info(model, i, &info) == QRT_OK);
    std::vector<int64_t> dims(info.dims, info.dims + info.rank);
    size_t count = 1;
    for (int64_t& d : dims) count *= size_t(d = d < 0 ? 1 : d);
    std::vector<uint8_t> bytes(count * qrt_dtype_size(info.dtype));
    for (size_t k = 0; k < count; ++k) {
      if (info.dtype == QRT_DTYPE_F32) {
        const float v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
        std::memcpy(bytes.data() + 4 * k, &v, 4);
      } else if (info.dtype == QRT_DTYPE_I8 || info.dtype == QRT_DTYPE_U8) {
        bytes[k] = uint8_t(std::uniform_int_distribution<int64_t>(info.storage_min, info.storage_max)(rng));
      } else {
        FAIL("unexpected input dtype in the test models");
      }
    }
    in.bytes.push_back(std::move(bytes));
    in.dims.push_back(dims);
    in.dtypes.push_back(info.dtype);
  }
  return in;
}

// The bytes of the `outputs` outputs of `ctx`'s last run.
inline std::vector<std::vector<uint8_t>> output_bytes(qrt_context_t* ctx, size_t outputs) {
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < outputs; ++i) {
    qrt_tensor_view view;
    REQUIRE(qrt_context_output(ctx, i, &view) == QRT_OK);
    const auto* p = static_cast<const uint8_t*>(view.data);
    out.emplace_back(p, p + view.bytes);
  }
  return out;
}

// Every output's bytes after one run of `ctx` on `in`.
inline std::vector<std::vector<uint8_t>> run_once(qrt_context_t* ctx, const Inputs& in, size_t outputs) {
  for (size_t i = 0; i < in.bytes.size(); ++i) {
    REQUIRE(qrt_context_bind_input(ctx, i, in.dtypes[i], in.dims[i].size(), in.dims[i].data(), in.bytes[i].data(),
                                   in.bytes[i].size()) == QRT_OK);
  }
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  return output_bytes(ctx, outputs);
}

struct Compiled {
  qrt_model_t* model = nullptr;
  qrt_plan_t* plan = nullptr;
  size_t outputs = 0;
  ~Compiled() {
    qrt_plan_destroy(plan);
    qrt_model_destroy(model);
  }
};

inline void compile(const std::string& path, size_t threads, Compiled& c, const char* isa = nullptr,
             qrt_backend backend = QRT_BACKEND_DEFAULT, const char* numerics = nullptr) {
  REQUIRE_MESSAGE(qrt_model_load_file((kModels + "/" + path).c_str(), &c.model) == QRT_OK, qrt_last_error_message());
  qrt_plan_options opts;
  qrt_plan_options_init(&opts);
  opts.threads = threads;
  opts.isa = isa;
  opts.backend = backend;
  opts.numerics = numerics;
  REQUIRE_MESSAGE(qrt_plan_create(c.model, &opts, &c.plan) == QRT_OK, qrt_last_error_message());
  qrt_model_num_outputs(c.model, &c.outputs);
}

}  // namespace qrt_test
