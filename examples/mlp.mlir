// A two-layer quantized MLP: x (f32) -> qcast -> i8 matmul + i32 bias, requantized -> relu
// -> i8 matmul -> dcast (f32). Weights are per-output-channel (axis 1 of [K, N]).
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %xq = "quant.qcast"(%x) : (tensor<2x4xf32>) -> tensor<2x4x!quant.uniform<i8:f32, 1.562500e-02:-2>>
  %w1 = "qrt.constant"() {value = dense<[[12, -7, 33, 5, 0], [-64, 18, 9, -3, 100], [7, 7, -1, 45, -20], [-2, 60, 14, -90, 3]]> : tensor<4x5xi8>} : () -> tensor<4x5x!quant.uniform<i8:f32:1, {1.000000e-02,2.000000e-02,1.500000e-02,5.000000e-03,1.000000e-02}>>
  %b1 = "qrt.constant"() {value = dense<[100, -200, 0, 50, 1000]> : tensor<5xi32>} : () -> tensor<5x!quant.uniform<i32:f32:0, {1.562500e-04,3.125000e-04,2.343750e-04,7.812500e-05,1.562500e-04}>>
  %h = "qrt.matmul"(%xq, %w1, %b1) : (tensor<2x4x!quant.uniform<i8:f32, 1.562500e-02:-2>>, tensor<4x5x!quant.uniform<i8:f32:1, {1.000000e-02,2.000000e-02,1.500000e-02,5.000000e-03,1.000000e-02}>>, tensor<5x!quant.uniform<i32:f32:0, {1.562500e-04,3.125000e-04,2.343750e-04,7.812500e-05,1.562500e-04}>>) -> tensor<2x5x!quant.uniform<i8:f32, 2.000000e-02:-10>>
  %r = "qrt.relu"(%h) : (tensor<2x5x!quant.uniform<i8:f32, 2.000000e-02:-10>>) -> tensor<2x5x!quant.uniform<i8:f32, 2.000000e-02:-10>>
  %w2 = "qrt.constant"() {value = dense<[[3, -3, 90], [-50, 11, 2], [64, 0, -8], [1, 1, 1], [-127, 127, 30]]> : tensor<5x3xi8>} : () -> tensor<5x3x!quant.uniform<i8:f32, 1.000000e-02>>
  %y = "qrt.matmul"(%r, %w2) : (tensor<2x5x!quant.uniform<i8:f32, 2.000000e-02:-10>>, tensor<5x3x!quant.uniform<i8:f32, 1.000000e-02>>) -> tensor<2x3x!quant.uniform<i8:f32, 2.500000e-02:3>>
  %out = "quant.dcast"(%y) : (tensor<2x3x!quant.uniform<i8:f32, 2.500000e-02:3>>) -> tensor<2x3xf32>
  return %out : tensor<2x3xf32>
}
