// fuzz_load_text: the largest value of a signless or unsigned 63-bit type was computed as
// 2^63 - 1 in int64 (1 << 63 overflowed first); a 63-bit dense element now loads.
func.func @main() -> tensor<2xi63> {
  %c = "qrt.constant"() {value = dense<[5, 9223372036854775807]> : tensor<2xi63>} : () -> tensor<2xi63>
  return %c : tensor<2xi63>
}
