// qrt — ISA levels and host detection (see isa.h).
#include "jit/core/isa.h"

#include <array>
#include <fstream>
#include <string>

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace qrt::jit {

namespace {

// The L2 cache of CPU 0 from sysfs (the cache/indexN entry of level 2 that holds data), e.g.
// "2048K"; 0 where Linux does not say (containers without /sys, other systems).
int64_t sysfs_l2_bytes() {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) continue;
    if (level != 2 || type == "Instruction" || size.empty()) continue;
    int64_t value = 0;
    size_t i = 0;
    for (; i < size.size() && size[i] >= '0' && size[i] <= '9'; ++i) value = value * 10 + (size[i] - '0');
    const char unit = i < size.size() ? size[i] : 'B';
    return unit == 'K' ? value << 10 : unit == 'M' ? value << 20 : unit == 'G' ? value << 30 : value;
  }
  return 0;
}

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
    {Isa::kAvx512Amx, "avx512-amx", "avx512amx", 1},
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

#if defined(__x86_64__)
// CPUID leaf `leaf`, subleaf `sub`: eax, ebx, ecx, edx (no ISA header outside the backends).
void cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
  __asm__("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

// AMX-TILE and AMX-INT8 (CPUID leaf 7: EDX bits 24 and 25) with the tile state enabled in
// XCR0 (bits 17 and 18). GCC 12's __builtin_cpu_supports does not know AMX.
bool cpu_has_amx_int8() {
  unsigned r[4];
  cpuid(0, 0, r);
  if (r[0] < 7) return false;
  cpuid(7, 0, r);
  if (((r[3] >> 24) & 3u) != 3u) return false;
  cpuid(1, 0, r);
  if (!((r[2] >> 27) & 1u)) return false;  // OSXSAVE: xgetbv is allowed
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  return ((xcr0_lo >> 17) & 3u) == 3u;
}

// Asks Linux for the AMX tile data state (XFEATURE_XTILEDATA, feature 18): without the grant
// the first tile instruction faults. The grant is per process and lasts until exit; it fails
// (and the level stays off) on kernels before 5.16, or where a thread's signal stack is too
// small for the larger signal frame.
bool request_amx_permission() {
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}
#endif

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
    unsigned leaf1[4];
    cpuid(1, 0, leaf1);
    f.f16c = f.avx2 && ((leaf1[2] >> 29) & 1u);  // CPUID.1:ECX bit 29
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512_vnni = f.avx512f && f.avx512bw && __builtin_cpu_supports("avx512vl") &&
                    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni");
    f.avx_vnni = f.avx2 && __builtin_cpu_supports("avxvnni");
    f.avx512_vbmi = f.avx512bw && __builtin_cpu_supports("avx512vbmi");
    f.avx512_bf16 = f.avx512f && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
    f.amx_int8 = cpu_has_amx_int8();
    f.amx_granted = f.amx_int8 && f.avx512_vnni && request_amx_permission();
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
    f.l2_bytes = sysfs_l2_bytes();
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
    if (f.avx2 && f.avx512_vnni && f.amx_granted) s.add(Isa::kAvx512Amx);
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
  if ((cap == Isa::kAvx512Vnni || cap == Isa::kAvx512Amx) && isa == Isa::kAvx2Vnni) return false;
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
