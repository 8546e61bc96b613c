func.func @main() -> tensor<4xf8E5M2> {
  %c = "qrt.constant"() {value = dense<[1.000000e+00, 0xFE, 0x7D, -0.000000e+00]> : tensor<4xf8E5M2>} : () -> tensor<4xf8E5M2>
  return %c : tensor<4xf8E5M2>
}
