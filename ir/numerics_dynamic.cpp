// qrt — dynamic i8 activation quantization (see numerics_dynamic.h).
#include "ir/numerics_dynamic.h"

#include <cmath>
#include <limits>

namespace qrt::numerics {

float quantize_block_i8(const float* x, int64_t n, int8_t* q, int32_t* sum) {
  float a = 0.0f;
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) {
    const float v = std::fabs(x[i]);
    finite = finite && std::isfinite(v);
    a = v > a ? v : a;
  }
  const float d = finite ? a / 127.0f : std::numeric_limits<float>::quiet_NaN();
  int32_t s = 0;
  for (int64_t i = 0; i < n; ++i) {
    int32_t v = 0;
    if (d > 0.0f) {
      // |x / d| ≤ 127 up to d's rounding (more where d is subnormal): the clamp bounds it.
      const float r = std::nearbyint(x[i] / d);  // the default rounding mode: ties to even
      v = r > 127.0f ? 127 : r < -127.0f ? -127 : int32_t(r);
    }
    q[i] = int8_t(v);
    s += v;
  }
  *sum = s;
  return d;
}

}  // namespace qrt::numerics
