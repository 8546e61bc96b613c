// qrt — calibration: runs a float model on sample inputs with the reference backend and
// records the range of every float value in quant.stats ops, for the calibrate and propagate
// passes to turn into quantization parameters.
#pragma once

#include <qrt.h>

#include "runtime/session.h"

namespace qrt::runtime {

/// Runs `model` once on `inputs` (one view per model input, any batch size its types allow)
/// and widens the quant.stats of every float value — graph inputs and op results — by what
/// the run saw (NaN elements are ignored). The model's graph is replaced; plans made earlier
/// keep theirs. Errors name the input at fault or the op that failed.
Status calibrate_model(Model& model, const qrt_tensor_view* inputs, size_t num_inputs);

}  // namespace qrt::runtime
