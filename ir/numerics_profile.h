// qrt — numerics profiles: whose integers a graph reproduces (docs/numerics.md, "Profiles").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace qrt {

/// The set of reference formulas a graph is evaluated with. `kDefault` is qrt's own contract;
/// the others reproduce another stack's definitions where they differ from it.
enum class NumericsProfile : uint8_t {
  kDefault,               ///< docs/numerics.md's default formulas
  kStableHlo,             ///< the StableHLO specification (quantize adds the zero point before
                          ///< rounding; quantized ops are dequantize, float op, quantize)
  kTflite,                ///< TFLite's reference kernels with double rounding (its default build)
  kTfliteSingleRounding,  ///< TFLite's reference kernels built with TFLITE_SINGLE_ROUNDING
  kOnnx,                  ///< the ONNX reference definitions (QLinearMatMul / QLinearConv requantization)
};

/// True for the two TFLite profiles (they differ only in the rounding of the fixed-point
/// multiply).
inline bool is_tflite(NumericsProfile profile) {
  return profile == NumericsProfile::kTflite || profile == NumericsProfile::kTfliteSingleRounding;
}

/// The profile's name as the options and files spell it: "default", "stablehlo", "tflite",
/// "tflite-single-rounding", "onnx".
const char* numerics_profile_name(NumericsProfile profile);

/// The profile named `name`, or nullopt.
std::optional<NumericsProfile> parse_numerics_profile(std::string_view name);

/// Every profile name, comma separated, for messages and --help.
const char* numerics_profile_names();

}  // namespace qrt
