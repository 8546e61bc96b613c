// qrt — puts NCHW regions of a graph in NHWC, the layout qrt's convolution, depthwise and
// pooling kernels run on (ONNX models arrive NCHW; TFLite's are NHWC already).
#pragma once

#include <cstddef>

#include "ir/graph.h"

namespace qrt::passes {

/// What to_nhwc changed.
struct LayoutReport {
  size_t converted = 0;    ///< NCHW conv2d / max_pool2d / avg_pool2d ops now NHWC
  size_t followed = 0;     ///< element-wise, concat, transpose and reshape ops run in NHWC
  size_t transposes = 0;   ///< transposes added (filters' included), net of those cancelled
  size_t flattens = 0;     ///< flattens of [N, C, H, W] read in NHWC order by the matmuls after them
  size_t permuted = 0;     ///< matmuls whose constant weights' rows were put in that order
};

/// Rewrites every 4-D `layout = "NCHW"` conv2d, max_pool2d and avg_pool2d into its NHWC form
/// (the input transposed [0, 2, 3, 1], a filter OIHW -> OHWI, per-axis axes following their
/// dimension) and keeps their results NHWC for as long as their readers allow: relu, clamp,
/// requantize, qcast, dcast, and add/mul of two NHWC values of one shape run in NHWC; concat
/// along the mapped axis; a transpose composes with the pending one (cancelling when they
/// are inverse); a reshape of a value whose H and W are 1 (a Flatten after global pooling)
/// reads the NHWC value directly (same element order), and so does a flatten to [N, C·H·W]
/// that only quantized matmuls with constant weights read (a CNN's classifier): their weight
/// rows are permuted into the NHWC order at compile time (exact: integer sums do not depend on
/// the order of k). Any other reader, and each returned
/// value, gets one transpose back to NCHW. Identical results: only the order of stored
/// values changes.
Graph to_nhwc(const Graph& graph, LayoutReport* report = nullptr);

}  // namespace qrt::passes
