// The loader fuzz targets' oracle (see load_check.h).
#include "load_check.h"

#include <qrt.h>

namespace qrt_fuzz {

namespace {

bool print(const qrt_model_t* model, std::string* text) {
  char* raw = nullptr;
  if (qrt_model_print(model, &raw) != QRT_OK) return false;
  *text = raw;
  qrt_free(raw);
  return true;
}

}  // namespace

std::string check_load(const uint8_t* data, size_t size, const char* name) {
  // A small budget: constants are printed element by element, so a model may print at about
  // ten times its size.
  qrt_load_options options;
  qrt_load_options_init(&options);
  options.max_memory = size_t{16} << 20;
  qrt_model_t* model = nullptr;
  if (qrt_model_load_buffer_ex(data, size, name, &options, &model) != QRT_OK) {
    return qrt_last_error_message()[0] == '\0' ? "a load failed without a message" : "";
  }
  std::string text;
  const bool printed = print(model, &text);
  qrt_model_destroy(model);
  if (!printed) return std::string("a loaded model does not print: ") + qrt_last_error_message();
  qrt_model_t* again = nullptr;
  options.max_memory = 0;  // the text is larger than the model; its constants are the same
  if (qrt_model_load_buffer_ex(text.data(), text.size(), "printed.mlir", &options, &again) != QRT_OK)
    return std::string("the printed text does not load again: ") + qrt_last_error_message() + "\n" + text;
  std::string text2;
  const bool printed2 = print(again, &text2);
  qrt_model_destroy(again);
  if (!printed2) return std::string("a reloaded model does not print: ") + qrt_last_error_message();
  if (text2 != text) return "printing is not a fixed point:\n" + text + "\n--- printed again ---\n" + text2;
  return "";
}

}  // namespace qrt_fuzz
