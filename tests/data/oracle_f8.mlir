// The mlir-opt-19 oracle on MLIR 19's f8 types and tf32: as expressed types of quantized
// types (per tensor and per axis), as plain element types, and as dense constants whose
// values round to each format (ties, overflow, subnormals, the formats without -0).
func.func @main(%a: tensor<4x!quant.uniform<i8:f8E4M3FN, 0.5:3>>, %b: tensor<4x!quant.uniform<u8:f8E5M2, 1.5e-3:128>>, %c: tensor<2x3x!quant.uniform<i8<-127:127>:f8E4M3FNUZ:1, {0.25, 0.125:1, 100.0:-1}>>, %d: tensor<4x!quant.uniform<i16:tf32, 3.0e-5>>, %e: tensor<4xf8E5M2FNUZ>, %f: tensor<4xf8E4M3B11FNUZ>, %g: tensor<4xf8E4M3>, %h: tensor<4xtf32>) -> (tensor<4xf8E4M3FN>, tensor<4xf8E5M2FNUZ>) {
  %c1 = "qrt.constant"() {value = dense<[1.0, 0.3, 448.0, 464.0, -0.0, 0.001953125, 17.0, -240.0]> : tensor<8xf8E4M3FN>} : () -> tensor<8xf8E4M3FN>
  %c2 = "qrt.constant"() {value = dense<[1.0, 0.3, 57344.0, -1.0e-5, 1.52587890625e-05, 3.0, 5.0, 7.0]> : tensor<8xf8E5M2>} : () -> tensor<8xf8E5M2>
  %c3 = "qrt.constant"() {value = dense<[1.0, 0.3, 240.0, -0.0, 0.0009765625, 0.0625, 0.1, -9.0]> : tensor<8xf8E4M3FNUZ>} : () -> tensor<8xf8E4M3FNUZ>
  %c4 = "qrt.constant"() {value = dense<[1.0, 0.3, 30.0, 0.0001, -2.5, 0.5]> : tensor<6xf8E4M3B11FNUZ>} : () -> tensor<6xf8E4M3B11FNUZ>
  %c5 = "qrt.constant"() {value = dense<[1.0, 0.3, 57344.0, -0.0, 3.0e-5]> : tensor<5xf8E5M2FNUZ>} : () -> tensor<5xf8E5M2FNUZ>
  %c6 = "qrt.constant"() {value = dense<[1.0, 0.3, 240.0, 0.001953125, -7.5]> : tensor<5xf8E4M3>} : () -> tensor<5xf8E4M3>
  %c7 = "qrt.constant"() {value = dense<[1.0, 0.1, 3.3e+38, 1.0e-40, -123.456]> : tensor<5xtf32>} : () -> tensor<5xtf32>
  %da = "quant.dcast"(%a) : (tensor<4x!quant.uniform<i8:f8E4M3FN, 0.5:3>>) -> tensor<4xf8E4M3FN>
  %qe = "quant.qcast"(%e) : (tensor<4xf8E5M2FNUZ>) -> tensor<4x!quant.uniform<i8:f8E5M2FNUZ, 0.75>>
  %de = "quant.dcast"(%qe) : (tensor<4x!quant.uniform<i8:f8E5M2FNUZ, 0.75>>) -> tensor<4xf8E5M2FNUZ>
  return %da, %de : tensor<4xf8E4M3FN>, tensor<4xf8E5M2FNUZ>
}
