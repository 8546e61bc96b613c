// A conv's dilation (3328832364318031873, the value CI's fuzz_load_binary found in a .qrt file)
// times the filter height overflowed int64 while the verifier computed the output size.
func.func @main(%x: tensor<1x8x8x3xf32>, %w: tensor<4x7x3x3xf32>) -> tensor<1x2x6x4xf32> {
  %y = "qrt.conv2d"(%x, %w) {dilations = [3328832364318031873, 1], pads = [0, 0, 0, 0], strides = [1, 1]} : (tensor<1x8x8x3xf32>, tensor<4x7x3x3xf32>) -> tensor<1x2x6x4xf32>
  return %y : tensor<1x2x6x4xf32>
}
