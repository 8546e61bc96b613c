func.func @main() -> (tensor<4xf8E5M2>, tensor<3xf16>) {
  %c = "qrt.constant"() {value = dense<[1.000000e+00, 0xFF, 0xFE, 0x7D]> : tensor<4xf8E5M2>} : () -> tensor<4xf8E5M2>
  %h = "qrt.constant"() {value = dense<[0xFE01, 2.000000e+00, 0x7C01]> : tensor<3xf16>} : () -> tensor<3xf16>
  return %c, %h : tensor<4xf8E5M2>, tensor<3xf16>
}
