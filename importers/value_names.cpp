// qrt — SSA names for imported values (see value_names.h).
#include "importers/value_names.h"

namespace qrt::importers {

std::string unique_ssa_name(const std::string& raw, const char* prefix, std::set<std::string>& used) {
  std::string s;
  for (char c : raw) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-' || c == '$';
    s += ok ? c : '_';
  }
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s = prefix + s;
  std::string unique = s;
  for (int k = 1; !used.insert(unique).second; ++k) unique = s + "_" + std::to_string(k);
  return unique;
}

}  // namespace qrt::importers
