// qrt — lets Debian's static asmjit live in the shared libqrt.so. One object of libasmjit.a
// (globals.cpp.o) reads libc's `stderr` with a PC-relative load, which a shared object cannot
// resolve against libc; the build renames that reference to `qrt_asmjit_stderr` (objcopy
// --redefine-sym on a copy of the archive) and this file defines it, hidden, holding libc's
// stderr from load time on. Compiled into libqrt.so only.
#include <cstdio>

extern "C" {
__attribute__((visibility("hidden"))) FILE* qrt_asmjit_stderr = nullptr;
}

namespace {

__attribute__((constructor)) void bind_asmjit_stderr() { qrt_asmjit_stderr = stderr; }

}  // namespace
