// qrt — ISA levels and host detection (see isa.h).
#include "jit/core/isa.h"

#include <array>
#include <fstream>

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace qrt::jit {

namespace {

struct IsaRow {
  Isa isa;
  const char* name;
  const char* suffix;
  int arch;  // 0: any (scalar), 1: x86-64, 2: AArch64
};

constexpr std::array<IsaRow, size_t(Isa::kCount)> kIsas = {{
    {Isa::kScalar, "scalar", "scalar", 0},
    {Isa::kAvx2, "avx2", "avx2", 1},
    {Isa::kAvx2Vnni, "avx2-vnni", "avx2vnni", 1},
    {Isa::kAvx512Vnni, "avx512-vnni", "avx512vnni", 1},
    {Isa::kNeon, "neon", "neon", 2},
    {Isa::kNeonDot, "neon-dot", "neondot", 2},
    {Isa::kNeonI8mm, "neon-i8mm", "neoni8mm", 2},
}};

const IsaRow& row(Isa isa) { return kIsas[size_t(isa) < kIsas.size() ? size_t(isa) : 0]; }

// The brand string as the kernel reports it (no CPUID leaf parsing of our own).
std::string cpuinfo_field(const char* key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  const std::string k(key);
  while (std::getline(in, line)) {
    if (line.compare(0, k.size(), k) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

}  // namespace

const char* isa_name(Isa isa) { return row(isa).name; }
const char* isa_suffix(Isa isa) { return row(isa).suffix; }

std::optional<Isa> parse_isa(std::string_view name) {
  for (const IsaRow& r : kIsas) {
    if (name == r.name) return r.isa;
  }
  return std::nullopt;
}

std::string isa_names() {
  std::string s;
  for (const IsaRow& r : kIsas) s += (s.empty() ? "" : ", ") + std::string(r.name);
  return s;
}

std::vector<Isa> IsaSet::by_preference() const {
  std::vector<Isa> out;
  for (size_t i = kIsas.size(); i-- > 0;) {
    if (has(Isa(i))) out.push_back(Isa(i));
  }
  return out;
}

std::string IsaSet::to_string() const {
  std::string s;
  for (Isa isa : by_preference()) s += (s.empty() ? "" : ", ") + std::string(isa_name(isa));
  return s;
}

const CpuFeatures& host_cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
#if defined(__x86_64__)
    f.x86 = true;
    __builtin_cpu_init();
    // libgcc's detection also checks that the OS saves the wider registers (XGETBV).
    f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512_vnni = f.avx512f && f.avx512bw && __builtin_cpu_supports("avx512vl") &&
                    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni");
    f.avx_vnni = f.avx2 && __builtin_cpu_supports("avxvnni");
    f.avx512_vbmi = f.avx512bw && __builtin_cpu_supports("avx512vbmi");
    f.vendor = cpuinfo_field("vendor_id");
    f.brand = cpuinfo_field("model name");
#elif defined(__aarch64__)
    f.aarch64 = true;
    const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
    f.neon = (hwcap & HWCAP_ASIMD) != 0;
    f.neon_dot = f.neon && (hwcap & HWCAP_ASIMDDP) != 0;
#ifdef HWCAP2_I8MM
    f.neon_i8mm = f.neon_dot && (hwcap2 & HWCAP2_I8MM) != 0;
#else
    (void)hwcap2;
#endif
    f.vendor = cpuinfo_field("CPU implementer");
    f.brand = cpuinfo_field("CPU part");
#endif
    return f;
  }();
  return features;
}

const IsaSet& host_isas() {
  static const IsaSet set = [] {
    const CpuFeatures& f = host_cpu_features();
    IsaSet s;
    s.add(Isa::kScalar);
    if (f.avx2) s.add(Isa::kAvx2);
    if (f.avx_vnni) s.add(Isa::kAvx2Vnni);
    if (f.avx2 && f.avx512_vnni) s.add(Isa::kAvx512Vnni);
    if (f.neon) s.add(Isa::kNeon);
    if (f.neon_dot) s.add(Isa::kNeonDot);
    if (f.neon_i8mm) s.add(Isa::kNeonI8mm);
    return s;
  }();
  return set;
}

Isa host_best_isa() {
  const IsaSet& s = host_isas();
  // avx512-vnni is preferred to avx2-vnni where a host has both.
  return s.by_preference().front();
}

bool isa_includes(Isa cap, Isa isa) {
  if (isa == Isa::kScalar) return true;
  if (row(cap).arch != row(isa).arch) return false;
  if (cap == Isa::kAvx512Vnni && isa == Isa::kAvx2Vnni) return false;
  return unsigned(isa) <= unsigned(cap);
}

std::optional<IsaSet> capped_isas(Isa cap, std::string* why_not) {
  if (!host_isas().has(cap)) {
    if (why_not) {
      *why_not = std::string("this host cannot run ISA level '") + isa_name(cap) + "' (it has: " +
                 host_isas().to_string() + ")";
    }
    return std::nullopt;
  }
  IsaSet s;
  for (size_t i = 0; i < size_t(Isa::kCount); ++i) {
    if (host_isas().has(Isa(i)) && isa_includes(cap, Isa(i))) s.add(Isa(i));
  }
  return s;
}

}  // namespace qrt::jit
