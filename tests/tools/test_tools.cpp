// Tests: qrun and qopt end to end, as a user runs them — .npy in and out, and bad input
// giving one clear line on stderr with a non-zero exit (never a crash).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/npy.h"

namespace fs = std::filesystem;

namespace {

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path temp_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("qrt_tools_test_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

Run run(const std::string& args) {
  const fs::path out = temp_dir() / "stdout.txt", err = temp_dir() / "stderr.txt";
  const std::string cmd = args + " > " + out.string() + " 2> " + err.string();
  const int status = std::system(cmd.c_str());
  Run r;
  REQUIRE_MESSAGE(WIFEXITED(status), "terminated by a signal: " << cmd);  // never a crash
  r.exit_code = WEXITSTATUS(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// EXE_WRAPPER: "" natively, the qemu-user command in cross builds (meson/aarch64-linux-gnu.ini).
const std::string kWrapper = std::string(EXE_WRAPPER).empty() ? std::string() : std::string(EXE_WRAPPER) + " ";
const std::string kQrun = kWrapper + QRUN_PATH;
const std::string kQopt = kWrapper + QOPT_PATH;
const std::string kExamples = EXAMPLES_DIR;

fs::path write_file(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

fs::path write_f32(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& v) {
  qrt_tools::NpyArray a;
  a.dtype = QRT_DTYPE_F32;
  a.shape = shape;
  a.data.resize(v.size() * 4);
  std::memcpy(a.data.data(), v.data(), a.data.size());
  std::string error;
  const fs::path p = temp_dir() / name;
  REQUIRE(qrt_tools::write_npy(p.string(), a, error));
  return p;
}

// One error line: "<tool>: error: ...\n" and nothing else.
void check_one_error_line(const Run& r, const std::string& tool, const std::string& fragment) {
  CHECK(r.exit_code != 0);
  CHECK(r.err.rfind(tool + ": error: ", 0) == 0);
  CHECK_MESSAGE(r.err.find("error: error:") == std::string::npos, r.err);  // one prefix, not the library's too
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_MESSAGE(r.err.find(fragment) != std::string::npos, r.err);
}

const char* kQcastGraph = R"(func.func @main(%x: tensor<4xf32>) -> (tensor<4x!quant.uniform<i8:f32, 0.5:-3>>, tensor<4xf32>) {
  %q = "quant.qcast"(%x) : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.5:-3>>
  %y = "quant.dcast"(%q) : (tensor<4x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<4xf32>
  return %q, %y : tensor<4x!quant.uniform<i8:f32, 0.5:-3>>, tensor<4xf32>
}
)";

}  // namespace

TEST_CASE("qrun --help and --version") {
  const Run help = run(kQrun + " --help");
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("usage: qrun MODEL") != std::string::npos);
  CHECK(help.out.find("--random SEED") != std::string::npos);
  const Run version = run(kQrun + " --version");
  CHECK(version.exit_code == 0);
  CHECK(version.out.find("qrt 0.1.0") != std::string::npos);
  // LLVM_BUILT: whether this build has the LLVM backend (-Dllvm=disabled builds say so).
  CHECK(version.out.find(LLVM_BUILT ? "llvm: 19" : "llvm: not built") != std::string::npos);
}

TEST_CASE("qrun: .npy in, stored integers and floats out") {
  const fs::path model = write_file("qcast.mlir", kQcastGraph);
  const fs::path x = write_f32("x.npy", {4}, {0.25f, 0.75f, 100.0f, -1.3f});
  const fs::path out = temp_dir() / "out";
  const Run r = run(kQrun + " " + model.string() + " --input x=" + x.string() + " --output-dir " + out.string());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  qrt_tools::NpyArray q, y;
  std::string error;
  REQUIRE(qrt_tools::read_npy((out / "q.npy").string(), q, error));
  REQUIRE(qrt_tools::read_npy((out / "y.npy").string(), y, error));
  CHECK(q.dtype == QRT_DTYPE_I8);
  CHECK(q.shape == std::vector<int64_t>{4});
  // rne(0.5) - 3, rne(1.5) - 3, saturated 197, rne(-2.6) - 3
  const std::vector<int8_t> expected_q = {-3, -1, 127, -6};
  CHECK(std::memcmp(q.data.data(), expected_q.data(), 4) == 0);
  CHECK(y.dtype == QRT_DTYPE_F32);
  const std::vector<float> expected_y = {0.0f, 1.0f, 65.0f, -1.5f};
  CHECK(std::memcmp(y.data.data(), expected_y.data(), 16) == 0);
  // The .npy header is what NumPy writes (version 1.0, 64-byte aligned data).
  const std::string raw = slurp(out / "q.npy");
  CHECK(raw.find("{'descr': '|i1', 'fortran_order': False, 'shape': (4,), }") == 10);
  CHECK((raw.size() - 4) % 64 == 0);
}

TEST_CASE("qrun prints and writes empty outputs: an input and a constant returned as they are") {
  // fuzz_c_api -seed=48 found qrun crashing on this ONNX model (a Dropout of a 3x0x5 input
  // with its mask): its outputs reached the C API as default views (rank 0, 4 bytes at null).
  const std::string model = std::string(FUZZ_FINDINGS_DIR) + "/capi-empty-outputs-input-and-constant.onnx";
  const fs::path out = temp_dir() / "empty_out";
  const Run r = run(kQrun + " " + model + " --random 1 --print --output-dir " + out.string());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // The first output is the input itself, so it takes the name output0 (docs/c-api.md).
  CHECK(r.out.find("output output0: tensor<3x0x5xf32> [3, 0, 5] f32\n[[], [], []]") != std::string::npos);
  CHECK(r.out.find("output z: tensor<3x0x5xi1> [3, 0, 5] bool\n[[], [], []]") != std::string::npos);
  for (const char* name : {"output0.npy", "z.npy"}) {
    CAPTURE(name);
    qrt_tools::NpyArray a;
    std::string error;
    REQUIRE_MESSAGE(qrt_tools::read_npy((out / name).string(), a, error), error);
    CHECK(a.shape == std::vector<int64_t>{3, 0, 5});
    CHECK(a.data.empty());
  }
}

TEST_CASE("qrun --print and --random are deterministic") {
  const Run a = run(kQrun + " " + kExamples + "/mlp.mlir --random 7");
  const Run b = run(kQrun + " " + kExamples + "/mlp.mlir --random 7 --print");
  const Run c = run(kQrun + " " + kExamples + "/mlp.mlir --random 8");
  REQUIRE_MESSAGE(a.exit_code == 0, a.err);
  CHECK(a.out == b.out);
  CHECK(a.out != c.out);
  CHECK(a.out.find("output out: tensor<2x3xf32> [2, 3] f32\n[[") != std::string::npos);
}

TEST_CASE("qrun bad input: one clear line, non-zero exit") {
  const fs::path model = write_file("qcast2.mlir", kQcastGraph);
  const fs::path x = write_f32("x2.npy", {4}, {1, 2, 3, 4});
  const fs::path x_shape = write_f32("x_shape.npy", {2, 2}, {1, 2, 3, 4});
  check_one_error_line(run(kQrun + " /nonexistent/m.mlir --random 1"), "qrun",
                       "/nonexistent/m.mlir: cannot open file: No such file or directory");
  // A layer norm whose scale is left dynamic gets one element from --random: refused at run
  // time, naming the op's line (fuzz_c_api -seed=49: the reference read past the scale).
  check_one_error_line(
      run(kQrun + " " +
          write_file("ln.mlir",
                     "func.func @main(%x: tensor<2x5xf32>, %w: tensor<?xf32>) -> tensor<2x5xf32> {\n"
                     "  %y = \"qrt.layer_norm\"(%x, %w) {axis = 1 : i64, epsilon = 1.0e-05 : f64} : "
                     "(tensor<2x5xf32>, tensor<?xf32>) -> tensor<2x5xf32>\n  return %y : tensor<2x5xf32>\n}\n")
              .string() +
          " --random 1"),
      "qrun", "ln.mlir:2:8: error: 'qrt.layer_norm' op scale has shape [1] at run time; the normalized dimensions are [5]");
  check_one_error_line(run(kQrun + " " + write_file("bad.mlir", "func.func @main(%x: tensor<4xf32>) -> f32 {\n  %0 = \"qrt.nope\"(%x) : (tensor<4xf32>) -> f32\n  return %0 : f32\n}\n").string() + " --random 1"),
                       "qrun", "bad.mlir:2:8: error: unknown op 'qrt.nope'");
  check_one_error_line(run(kQrun + " " + write_file("trunc.mlir", "func.func @main(%x: tensor<4x").string()),
                       "qrun", "trunc.mlir:1:30: error: expected a type, found end of input");
  check_one_error_line(run(kQrun + " " + model.string()), "qrun",
                       "input 'x' (tensor<4xf32>) is not bound: pass --input x=FILE.npy or --random SEED");
  check_one_error_line(run(kQrun + " " + model.string() + " --input x=/nonexistent.npy"), "qrun",
                       "/nonexistent.npy: cannot open file");
  check_one_error_line(run(kQrun + " " + model.string() + " --input x=" + x_shape.string()), "qrun",
                       "input 'x' expects rank 1 (tensor<4xf32>), got rank 2");
  check_one_error_line(run(kQrun + " " + model.string() + " --input x=" + write_file("junk.npy", "not an npy file").string()),
                       "qrun", "junk.npy: not a valid .npy file: missing \\x93NUMPY magic");
  {
    qrt_tools::NpyArray a;
    a.dtype = QRT_DTYPE_F64;
    a.shape = {4};
    a.data.assign(32, 0);
    std::string error;
    const fs::path p = temp_dir() / "f64.npy";
    REQUIRE(qrt_tools::write_npy(p.string(), a, error));
    check_one_error_line(run(kQrun + " " + model.string() + " --input x=" + p.string()), "qrun",
                         "input 'x' (tensor<4xf32>) needs dtype f32 ('<f4'), the file holds f64 ('<f8')");
    // A truncated file: drop the last 8 bytes of data.
    const std::string full = slurp(p);
    const fs::path t = write_file("truncated.npy", full.substr(0, full.size() - 8));
    check_one_error_line(run(kQrun + " " + model.string() + " --input x=" + t.string()), "qrun",
                         "data is truncated: the shape needs 32 bytes, the file has 24");
  }
  check_one_error_line(run(kQrun + " " + model.string() + " --input y=" + x.string()), "qrun",
                       "the model has no input 'y' (inputs: x)");
  const Run usage = run(kQrun + " " + model.string() + " --frobnicate");
  check_one_error_line(usage, "qrun", "unknown option '--frobnicate'");
  CHECK(usage.exit_code == 2);
  CHECK(run(kQrun).exit_code == 2);
  check_one_error_line(run(kQrun + " " + model.string() + " --random -5"), "qrun",
                       "--random needs a non-negative integer SEED");
  // Hostile sizes: refused or reported, never an abort.
  check_one_error_line(run(kQrun + " " + write_file("huge.mlir", "func.func @main(%x: tensor<99999999999x99999999999xf32>) -> tensor<99999999999x99999999999xf32> {\n  return %x : tensor<99999999999x99999999999xf32>\n}\n").string() + " --random 1"),
                       "qrun", "huge.mlir:1:21: error: tensor<99999999999x99999999999xf32> has more elements than qrt supports (2^48)");
  check_one_error_line(run(kQrun + " " + write_file("big.mlir", "func.func @main(%x: tensor<9999999x9999999xf32>) -> tensor<9999999x9999999xf32> {\n  return %x : tensor<9999999x9999999xf32>\n}\n").string() + " --random 1"),
                       "qrun", "--random: input 'x' [9999999, 9999999] needs 399999.9 GB, more than this machine's memory");
  check_one_error_line(run(kQopt + " " + write_file("splat.mlir", "func.func @main() -> tensor<99999999999xf32> {\n  %c = \"qrt.constant\"() {value = dense<1.0> : tensor<99999999999xf32>} : () -> tensor<99999999999xf32>\n  return %c : tensor<99999999999xf32>\n}\n").string()),
                       "qopt", "would hold 399999999996 bytes (the limit is 4 GiB)");
}

TEST_CASE("qrun --backend jit, llvm and ref give identical outputs") {
  const Run jit = run(kQrun + " " + kExamples + "/mlp.mlir --random 11 --backend jit");
  const Run ref = run(kQrun + " " + kExamples + "/mlp.mlir --random 11 --backend ref");
  REQUIRE_MESSAGE(ref.exit_code == 0, ref.err);
  REQUIRE_MESSAGE(jit.exit_code == 0, jit.err);  // the JIT runs on every host (scalar twins at least)
  CHECK(jit.out == ref.out);
  // The LLVM backend, where the build has it (qrun --version says), on a real model with
  // every kernel kind of an int8 CNN; otherwise one clear refusal.
  const std::string model = std::string(MODELS_DIR) + "/tflite-micro/person_detect.tflite";
  const bool llvm_built = run(kQrun + " --version").out.find("every kernel from LLVM: built") != std::string::npos;
  const Run llvm = run(kQrun + " " + model + " --random 5 --backend llvm --kernels");
  if (llvm_built) {
    REQUIRE_MESSAGE(llvm.exit_code == 0, llvm.err);
    CHECK(llvm.out.find("_dwconv_") != std::string::npos);
    CHECK(llvm.out.find("_llvm") != std::string::npos);
    const Run llvm_out = run(kQrun + " " + model + " --random 5 --backend llvm");
    const Run ref_out = run(kQrun + " " + model + " --random 5 --backend ref");
    REQUIRE_MESSAGE(llvm_out.exit_code == 0, llvm_out.err);
    CHECK(llvm_out.out == ref_out.out);
  } else {
    check_one_error_line(llvm, "qrun", "the LLVM backend is not in this build");
  }
  // --row-fusion: the reference's bytes; named by --kernels wherever the level runs the
  // depthwise ops on their rows kernels (u8/s8 quads).
  const Run fused = run(kQrun + " " + model + " --random 5 --row-fusion --kernels");
  REQUIRE_MESSAGE(fused.exit_code == 0, fused.err);
  const bool rows = run(kQrun + " " + model + " --random 5 --kernels").out.find("quads: exact") != std::string::npos;
  CHECK((fused.out.find("(row fusion: the intermediate is never written)") != std::string::npos) == rows);
  CHECK(run(kQrun + " " + model + " --random 5 --row-fusion").out == run(kQrun + " " + model + " --random 5 --backend ref").out);
  // --fixed-split (every op split as its kernel says) and the default measured choice, on 2
  // threads through a probe (--bench 10): the reference's bytes.
  const fs::path ref_dir = temp_dir() / "split_ref";
  REQUIRE(run(kQrun + " " + model + " --random 5 --backend ref --output-dir " + ref_dir.string()).exit_code == 0);
  REQUIRE_FALSE(fs::is_empty(ref_dir));
  for (const std::string split : {"--fixed-split", ""}) {
    const fs::path dir = temp_dir() / ("split" + split);
    const Run two = run(kQrun + " " + model + " --random 5 --threads 2 --bench 10 " + split + " --output-dir " + dir.string());
    REQUIRE_MESSAGE(two.exit_code == 0, two.err);
    CHECK(two.out.find("10 runs, 2 threads") != std::string::npos);
    for (const auto& f : fs::directory_iterator(ref_dir)) CHECK(slurp(dir / f.path().filename()) == slurp(f.path()));
  }
  const Run bad = run(kQrun + " " + kExamples + "/mlp.mlir --random 1 --backend gpu");
  check_one_error_line(bad, "qrun", "--backend must be jit, llvm or ref, got 'gpu'");
  CHECK(bad.exit_code == 2);
}

TEST_CASE("qrun --isa: every host level gives the same outputs; --kernels says what each level said") {
  const Run version = run(kQrun + " --version");
  REQUIRE(version.exit_code == 0);
  const size_t at = version.out.find("isa levels: ");
  REQUIRE(at != std::string::npos);
  const std::string line = version.out.substr(at + 12, version.out.find(" (best first", at) - at - 12);
  const std::string model = std::string(MODELS_DIR) + "/tflite-micro/person_detect.tflite";
  const Run best = run(kQrun + " " + model + " --random 3");
  REQUIRE_MESSAGE(best.exit_code == 0, best.err);
  for (size_t start = 0; start < line.size();) {
    const size_t comma = line.find(", ", start);
    const std::string level = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? line.size() : comma + 2;
    CAPTURE(level);
    const Run capped = run(kQrun + " " + model + " --random 3 --isa " + level);
    REQUIRE_MESSAGE(capped.exit_code == 0, capped.err);
    CHECK(capped.out == best.out);
  }
  const Run kernels = run(kQrun + " " + model + " --random 3 --isa scalar --kernels");
  REQUIRE(kernels.exit_code == 0);
  CHECK(kernels.out.find("_gemm_") != std::string::npos);
  CHECK(kernels.out.find("__scalar") != std::string::npos);
  CHECK(kernels.out.find("isa: scalar: chosen") != std::string::npos);
  check_one_error_line(run(kQrun + " " + model + " --random 3 --isa avx9000"), "qrun", "unknown ISA level 'avx9000'");
  check_one_error_line(run(kQrun + " " + model + " --random 3 --isa"), "qrun", "--isa needs a level");
}

TEST_CASE("qrun refuses an accumulator overflow at run time") {
  const char* text = R"(func.func @main(%a: tensor<1x1x!quant.uniform<i8:f32, 1.0>>) -> tensor<1x1x!quant.uniform<i32:f32, 1.0>> {
  %w = "qrt.constant"() {value = dense<[[1]]> : tensor<1x1xi8>} : () -> tensor<1x1x!quant.uniform<i8:f32, 1.0>>
  %b = "qrt.constant"() {value = dense<[2147483647]> : tensor<1xi32>} : () -> tensor<1x!quant.uniform<i32:f32, 1.0>>
  %y = "qrt.matmul"(%a, %w, %b) : (tensor<1x1x!quant.uniform<i8:f32, 1.0>>, tensor<1x1x!quant.uniform<i8:f32, 1.0>>, tensor<1x!quant.uniform<i32:f32, 1.0>>) -> tensor<1x1x!quant.uniform<i32:f32, 1.0>>
  return %y : tensor<1x1x!quant.uniform<i32:f32, 1.0>>
}
)";
  const fs::path model = write_file("overflow.mlir", text);
  const fs::path a = temp_dir() / "a.npy";
  qrt_tools::NpyArray arr;
  arr.dtype = QRT_DTYPE_I8;
  arr.shape = {1, 1};
  arr.data = {5};
  std::string error;
  REQUIRE(qrt_tools::write_npy(a.string(), arr, error));
  check_one_error_line(run(kQrun + " " + model.string() + " --input a=" + a.string()), "qrun",
                       "'qrt.matmul' op int32 accumulator overflow at output row 0, column 0 (value 2147483652)");
}

TEST_CASE("qopt prints the canonical form; its output reads back unchanged") {
  const fs::path model = write_file("q.mlir", kQcastGraph);
  const Run once = run(kQopt + " " + model.string());
  REQUIRE_MESSAGE(once.exit_code == 0, once.err);
  CHECK(once.out.find("tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-3>>") != std::string::npos);
  const fs::path printed = temp_dir() / "printed.mlir";
  REQUIRE(run(kQopt + " " + model.string() + " -o " + printed.string()).exit_code == 0);
  CHECK(slurp(printed) == once.out);
  const Run twice = run(kQopt + " " + printed.string());
  CHECK(twice.out == once.out);
  const Run stdin_run = run(kQopt + " - < " + printed.string());
  CHECK(stdin_run.out == once.out);
  CHECK(run(kQopt + " --help").out.find("usage: qopt FILE [-o OUT]") != std::string::npos);
}

TEST_CASE("qopt --emit binary writes a .qrt that qrun and qopt read back identically") {
  const fs::path qrt = temp_dir() / "mlp.qrt";
  REQUIRE(run(kQopt + " " + kExamples + "/mlp.mlir -o " + qrt.string()).exit_code == 0);  // binary by extension
  CHECK(slurp(qrt).compare(4, 4, "QRTB") == 0);
  const fs::path explicit_qrt = temp_dir() / "mlp.bin";
  REQUIRE(run(kQopt + " " + kExamples + "/mlp.mlir --emit binary -o " + explicit_qrt.string()).exit_code == 0);
  CHECK(slurp(explicit_qrt) == slurp(qrt));
  CHECK(run(kQopt + " " + qrt.string()).out == run(kQopt + " " + kExamples + "/mlp.mlir").out);
  const Run text = run(kQrun + " " + kExamples + "/mlp.mlir --random 3");
  const Run binary = run(kQrun + " " + qrt.string() + " --random 3");
  REQUIRE_MESSAGE(binary.exit_code == 0, binary.err);
  CHECK(binary.out == text.out);
  const std::string bytes = slurp(qrt);
  check_one_error_line(run(kQrun + " " + write_file("cut.qrt", bytes.substr(0, bytes.size() / 2)).string() + " --random 1"),
                       "qrun", "cut.qrt: error: corrupted .qrt file");
  check_one_error_line(run(kQrun + " " + write_file("empty.qrt", "").string()), "qrun",
                       "empty.qrt: cannot map an empty or unreadable file");
  check_one_error_line(run(kQopt + " " + kExamples + "/mlp.mlir --emit binary"), "qopt", "--emit binary needs -o OUT");
  check_one_error_line(run(kQopt + " " + kExamples + "/mlp.mlir --emit pdf -o x"), "qopt", "--emit must be text or binary");
}

TEST_CASE("qopt bad input") {
  check_one_error_line(run(kQopt + " /nonexistent/x.mlir"), "qopt", "/nonexistent/x.mlir: cannot open file");
  check_one_error_line(run(kQopt + " " + write_file("t.mlir", "func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 1.0:300>>) -> f32 {}").string()),
                       "qopt", "t.mlir:1:30: error: zero point 300 is outside the storage bounds [-128, 127]");
  check_one_error_line(run(kQopt + " " + write_file("e.mlir", "").string()), "qopt",
                       "e.mlir:1:1: error: empty input");
  check_one_error_line(run(kQopt + " " + write_file("bin.mlir", std::string("\x00\x01\xff\xfe", 4)).string()), "qopt",
                       "bin.mlir:1:1: error: expected 'func.func'");
  CHECK(run(kQopt + " a.mlir b.mlir").exit_code == 2);
  CHECK(run(kQopt + " -x").exit_code == 2);
}

TEST_CASE("qopt --calibrate: post-training quantization of a float graph from .npy samples") {
  const fs::path model = write_file("float.mlir", R"(func.func @main(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %w = "qrt.constant"() {value = dense<[[0.5, -1.0], [0.25, 0.75], [-0.5, 1.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %b = "qrt.constant"() {value = dense<[0.1, -0.2]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = "qrt.matmul"(%x, %w, %b) : (tensor<?x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %y = "qrt.relu"(%m) : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
)");
  std::vector<float> samples;
  for (int i = 0; i < 30; ++i) samples.push_back(float(i % 7) * 0.3f - 1.0f);
  const fs::path x = write_f32("samples.npy", {10, 3}, samples);
  const fs::path out = temp_dir() / "quantized.mlir";
  const Run r = run(kQopt + " " + model.string() + " --calibrate " + x.string() + " -o " + out.string() +
                    " --quant-report --timing --batch 4");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("propagate: %x_q : !quant.uniform<u8:f32") != std::string::npos);
  CHECK(r.err.find("propagate: %w : !quant.uniform<i8:f32:1") != std::string::npos);
  CHECK(r.err.find("propagate: %b : !quant.uniform<i32:f32:0") != std::string::npos);
  CHECK(r.err.find("check-integer: 1 integer kernel(s), 1 quantize(s), 1 dequantize(s) of integer results, 0 float path(s)") !=
        std::string::npos);
  CHECK(r.err.find("timing: propagate") != std::string::npos);
  const std::string q = slurp(out);
  CHECK(q.find("\"qrt.matmul\"(%x_q, %w_q, %b_q)") != std::string::npos);
  // The quantized graph runs.
  const Run ran = run(kQrun + " " + out.string() + " --input x=" + x.string());
  CHECK_MESSAGE(ran.exit_code == 0, ran.err);
  // --activations i8 and the IR after every pass.
  const Run i8 = run(kQopt + " " + model.string() + " --calibrate " + x.string() + " --activations i8 --print-ir-after-all");
  CHECK(i8.exit_code == 0);
  CHECK(i8.err.find("// -----// IR after propagate{activations=i8}") == std::string::npos);
  CHECK(i8.err.find("// -----// IR after propagate //----- //") != std::string::npos);
  CHECK(i8.out.find("!quant.uniform<i8:f32") != std::string::npos);
}

TEST_CASE("qopt --calibrate bad input: one clear line") {
  const fs::path model = write_file("float2.mlir", R"(func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %y = "qrt.relu"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
)");
  const fs::path wrong = write_f32("wrong.npy", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  check_one_error_line(run(kQopt + " " + model.string() + " --calibrate " + wrong.string()), "qopt",
                       "wrong.npy: samples of shape [4 elements] do not fit input 'x' of type tensor<?x3xf32>");
  check_one_error_line(run(kQopt + " " + model.string() + " --calibrate /nonexistent/d.npy"), "qopt", "/nonexistent/d.npy");
  CHECK(run(kQopt + " " + model.string() + " --samples 3").exit_code == 2);
  CHECK(run(kQopt + " " + model.string() + " --calibrate " + wrong.string() + " --activations u4").exit_code == 2);
  // A placeholder type left unresolved cannot run: qrun says which value and what to do.
  const fs::path placeholder = write_file("cal.mlir", R"(func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %q = "quant.qcast"(%x) : (tensor<2xf32>) -> tensor<2x!quant.calibrated<f32<-1.0:1.0>>>
  %y = "quant.dcast"(%q) : (tensor<2x!quant.calibrated<f32<-1.0:1.0>>>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
)");
  const Run r = run(kQrun + " " + placeholder.string() + " --random 1 --passes ''");
  check_one_error_line(r, "qrun", "value %q has the placeholder type tensor<2x!quant.calibrated<f32<-1.000000e+00:1.000000e+00>>>");
  // Function arguments of placeholder types are valid MLIR: qopt verifies and prints them;
  // qrun refuses to plan them, naming the argument.
  const char* any_text = "func.func @main(%x: tensor<4x!quant.any<i8:f32>>, %c: tensor<4x!quant.calibrated<f32<-1.000000e+00:1.000000e+00>>>) -> tensor<4x!quant.any<i8:f32>> {\n"
                         "  return %x : tensor<4x!quant.any<i8:f32>>\n}\n";
  const fs::path args = write_file("placeholder_args.mlir", any_text);
  const Run printed = run(kQopt + " " + args.string());
  REQUIRE_MESSAGE(printed.exit_code == 0, printed.err);
  CHECK(printed.out == any_text);
  check_one_error_line(run(kQrun + " " + args.string() + " --random 1"), "qrun",
                       "argument %x has the placeholder type tensor<4x!quant.any<i8:f32>>");
}

TEST_CASE("qrun --bench prints the startup costs, the latency statistics and throughput") {
  const Run r = run(kQrun + " " + kExamples + "/mlp.mlir --random 7 --bench 3 --output-dir " +
                    (temp_dir() / "bench_out").string());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  double load = -1, plan = -1, first = -1;
  const size_t at = r.out.find("startup: ");
  REQUIRE_MESSAGE(at != std::string::npos, r.out);
  CHECK(std::sscanf(r.out.c_str() + at, "startup: load %lf ms, plan %lf ms, first run %lf ms", &load, &plan, &first) == 3);
  CHECK(load >= 0);
  CHECK(plan > 0);
  CHECK(first > 0);
  CHECK(r.out.find("bench: 3 runs, 1 thread: latency ms min ") != std::string::npos);
  CHECK(r.out.find(" runs/s") != std::string::npos);
  // Without --bench there is no timing line: outputs stay comparable between runs.
  const Run quiet = run(kQrun + " " + kExamples + "/mlp.mlir --random 7");
  CHECK(quiet.out.find("startup:") == std::string::npos);
}

TEST_CASE("qrun --profile prints each op's median over the runs, and their sum as the total") {
  const Run r = run(kQrun + " " + kExamples + "/mlp.mlir --random 7 --bench 5 --profile");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const size_t head = r.out.find("profile (median of 5 runs per op; total: their sum):\n");
  REQUIRE_MESSAGE(head != std::string::npos, r.out);
  // The op rows end in "time share% [GOPS]"; the total row's one number is their sum.
  std::istringstream lines(r.out.substr(head));
  std::string line;
  std::getline(lines, line);  // the header
  std::getline(lines, line);  // the column names
  double sum = 0, share = 0, total = -1;
  int rows = 0;
  while (std::getline(lines, line) && total < 0) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    REQUIRE(!w.empty());
    if (w[0] == "total") {
      total = std::stod(w.back());
      break;
    }
    const size_t pct = w.back().back() == '%' ? w.size() - 1 : w.size() - 2;
    REQUIRE_MESSAGE(w[pct].back() == '%', line);
    sum += std::stod(w[pct - 1]);
    share += std::stod(w[pct].substr(0, w[pct].size() - 1));
    ++rows;
  }
  CHECK(rows >= 2);
  CHECK(total > 0);
  CHECK(std::abs(sum - total) <= 0.05 * rows + 0.1);  // each row printed to 0.1 us
  CHECK(std::abs(share - 100.0) <= 0.05 * rows + 0.1);
}

TEST_CASE("parse_npy: hostile headers give an error, never an exception or a wrapped size") {
  auto npy = [](const std::string& header) {
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    return bytes + header;
  };
  qrt_tools::NpyArray a;
  std::string error;
  // 'fortran_order' is the header's last text: no value after it.
  CHECK_FALSE(qrt_tools::parse_npy(npy("{'descr': '<f4', 'shape': (1,), 'fortran_order'"), "x.npy", a, error));
  CHECK(error.find("x.npy") != std::string::npos);
  // 2^32 * 2^32 elements wraps size_t to 0: refused, not read as an empty array.
  error.clear();
  CHECK_FALSE(qrt_tools::parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
                                   "x.npy", a, error));
  CHECK(error.find("too large") != std::string::npos);
  // A well-formed file still reads.
  std::string ok = npy("{'descr': '<i1', 'fortran_order': False, 'shape': (2,), }") + std::string("\x01\x02", 2);
  REQUIRE(qrt_tools::parse_npy(ok, "ok.npy", a, error));
  CHECK(a.shape == std::vector<int64_t>{2});
  CHECK(a.data == std::vector<uint8_t>{1, 2});
}

TEST_CASE("qrun --max-memory: a budget the model exceeds is one clear error, a bad size a usage error") {
  const fs::path mlp = fs::path(kExamples) / "mlp.mlir";
  Run r = run(kQrun + " " + mlp.string() + " --random 1 --max-memory 64M");
  CHECK(r.exit_code == 0);
  // The file itself is larger than 100 bytes: refused before it is read.
  r = run(kQrun + " " + mlp.string() + " --random 1 --max-memory 100");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("memory budget") != std::string::npos);
  CHECK(r.err.find("mlp.mlir:") != std::string::npos);
  for (const char* bad : {"0", "-5", "12X", "G", "1.5Q"}) {
    r = run(kQrun + " " + mlp.string() + " --random 1 --max-memory " + bad);
    CHECK_MESSAGE(r.exit_code == 2, bad);
    CHECK(r.err.find("--max-memory") != std::string::npos);
  }
}

TEST_CASE("qopt --weight-only: 4-bit block-wise weights that qrun runs packed, with the memory line of --profile") {
  const fs::path model = write_file("wo_float.mlir", R"(func.func @main(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = "qrt.constant"() {value = dense<[[0.5, -1.0, 0.1], [0.25, 0.75, -0.3], [-0.5, 1.0, 0.2], [0.05, -0.6, 0.9]]> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %y = "qrt.matmul"(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
)");
  const fs::path out = temp_dir() / "wo_i4.qrt";
  const Run r = run(kQopt + " " + model.string() + " --weight-only i4 --block 2 --mse -o " + out.string() + " --report");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.err.find("quantize-weights: qrt.matmul %y: weights 4x3 -> i4, blocks of 2 along K, mean squared error ") !=
                    std::string::npos,
                r.err);
  const Run text = run(kQopt + " " + out.string());
  REQUIRE(text.exit_code == 0);
  CHECK_MESSAGE(text.out.find("tensor<4x3x!quant.uniform<i4:f32:{0:2, 1:1}, {{") != std::string::npos, text.out);
  const Run ran = run(kQrun + " " + out.string() + " --random 3 --profile --kernels");
  REQUIRE_MESSAGE(ran.exit_code == 0, ran.err);
  CHECK(ran.out.find("f32_qs4w_") != std::string::npos);
  CHECK(ran.out.find("memory: weights ") != std::string::npos);
  CHECK(ran.out.find(" constants as stored + ") != std::string::npos);
  // The same outputs on the reference.
  const Run jit = run(kQrun + " " + out.string() + " --random 3");
  const Run ref = run(kQrun + " " + out.string() + " --random 3 --backend ref");
  CHECK(jit.out == ref.out);
  // --f16-scales: llama.cpp's Q4_0 form; the dynamic-i8 kernel's records then hold the scales
  // as f16 (symmetric: no zero points), and the outputs are still the reference's.
  const fs::path q40 = temp_dir() / "wo_i4_f16s.qrt";
  const Run h = run(kQopt + " " + model.string() + " --weight-only i4 --block 2 --symmetric --f16-scales -o " + q40.string());
  REQUIRE_MESSAGE(h.exit_code == 0, h.err);
  const std::string dyn = " --passes 'lower-hybrid{mode=dynamic-i8}'";
  const Run hk = run(kQrun + " " + q40.string() + " --random 3 --kernels" + dyn);
  REQUIRE_MESSAGE(hk.exit_code == 0, hk.err);
  CHECK_MESSAGE(hk.out.find("_h_f32_dyngemm_") != std::string::npos, hk.out);
  CHECK_MESSAGE(hk.out.find(" bytes with f16 scales; ") != std::string::npos, hk.out);
  CHECK(run(kQrun + " " + q40.string() + " --random 3" + dyn).out == run(kQrun + " " + q40.string() + " --random 3 --backend ref" + dyn).out);
  // Without it the same model's dynamic kernel keeps f32 scales.
  const Run fk = run(kQrun + " " + out.string() + " --random 3 --kernels" + dyn);
  CHECK_MESSAGE(fk.out.find(" bytes with f32 scales") != std::string::npos, fk.out);

  // Bad combinations are usage errors (exit 2) with one line.
  CHECK(run(kQopt + " " + model.string() + " --weight-only i3").exit_code == 2);
  CHECK(run(kQopt + " " + model.string() + " --block 32").exit_code == 2);
  CHECK(run(kQopt + " " + model.string() + " --f16-scales").exit_code == 2);
  const Run both = run(kQopt + " " + model.string() + " --weight-only i8 --calibrate x.npy");
  check_one_error_line(both, "qopt", "--weight-only and --calibrate do not combine");
}

TEST_CASE("qopt --weight-only on a bf16 model: weights expressed in bf16, run packed (weight-only and dynamic i8), as the reference computes them") {
  const fs::path model = write_file("wo_bf16.mlir", R"(func.func @main(%x: tensor<2x4xbf16>) -> tensor<2x3xbf16> {
  %w = "qrt.constant"() {value = dense<[[0.5, -1.0, 0.1], [0.25, 0.75, -0.3], [-0.5, 1.0, 0.2], [0.05, -0.6, 0.9]]> : tensor<4x3xbf16>} : () -> tensor<4x3xbf16>
  %y = "qrt.matmul"(%x, %w) : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  return %y : tensor<2x3xbf16>
}
)");
  const fs::path out = temp_dir() / "wo_bf16_i4.qrt";
  const Run r = run(kQopt + " " + model.string() + " --weight-only i4 --block 2 -o " + out.string() + " --report");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.err.find("quantize-weights: qrt.matmul %y: weights 4x3 -> i4, blocks of 2 along K") != std::string::npos, r.err);
  const Run text = run(kQopt + " " + out.string());
  REQUIRE(text.exit_code == 0);
  CHECK_MESSAGE(text.out.find("tensor<4x3x!quant.uniform<i4:bf16:{0:2, 1:1}, {{") != std::string::npos, text.out);
  const Run ran = run(kQrun + " " + out.string() + " --random 3 --kernels");
  REQUIRE_MESSAGE(ran.exit_code == 0, ran.err);
  CHECK_MESSAGE(ran.out.find("_bf16_f32_wogemm_") != std::string::npos, ran.out);
  const Run jit = run(kQrun + " " + out.string() + " --random 3");
  const Run ref = run(kQrun + " " + out.string() + " --random 3 --backend ref");
  REQUIRE(jit.exit_code == 0);
  CHECK(jit.out == ref.out);
  // The dynamic-i8 form of the same weights: the bf16 rows widened, quantized to i8 per call,
  // the kDynGemm kernel, the result rounded once to bf16, as the reference computes it.
  const std::string dyn = " --passes 'lower-hybrid{mode=dynamic-i8}'";
  const Run dk = run(kQrun + " " + out.string() + " --random 3 --kernels" + dyn);
  REQUIRE_MESSAGE(dk.exit_code == 0, dk.err);
  CHECK_MESSAGE(dk.out.find("_dyngemm_") != std::string::npos, dk.out);
  CHECK_MESSAGE(dk.out.find("bf16 activations widened to f32") != std::string::npos, dk.out);
  const Run dj = run(kQrun + " " + out.string() + " --random 3" + dyn);
  const Run dr = run(kQrun + " " + out.string() + " --random 3 --backend ref" + dyn);
  REQUIRE(dj.exit_code == 0);
  CHECK(dj.out == dr.out);
}

TEST_CASE("qrun on an f16 model and its weight-only form: convolution and matmul on the f32 kernels, as the reference") {
  const fs::path model = write_file("conv_f16.mlir", R"(func.func @main(%x: tensor<1x4x4x2xf16>) -> tensor<1x3xf16> {
  %f = "qrt.constant"() {value = dense<[[[[0.5, -1.0], [0.25, 0.125]], [[-0.75, 2.0], [1.5, -0.5]]], [[[0.1, 0.2], [0.3, 0.4]], [[-0.1, -0.2], [-0.3, -0.4]]]]> : tensor<2x2x2x2xf16>} : () -> tensor<2x2x2x2xf16>
  %b = "qrt.constant"() {value = dense<[0.5, -0.25]> : tensor<2xf16>} : () -> tensor<2xf16>
  %c = "qrt.conv2d"(%x, %f, %b) {dilations = [1, 1], groups = 1 : i64, layout = "NHWC", pads = [0, 0, 0, 0], strides = [1, 1]} : (tensor<1x4x4x2xf16>, tensor<2x2x2x2xf16>, tensor<2xf16>) -> tensor<1x3x3x2xf16>
  %r = "qrt.reshape"(%c) : (tensor<1x3x3x2xf16>) -> tensor<1x18xf16>
  %w = "qrt.constant"() {value = dense<0.0625> : tensor<18x3xf16>} : () -> tensor<18x3xf16>
  %y = "qrt.matmul"(%r, %w) : (tensor<1x18xf16>, tensor<18x3xf16>) -> tensor<1x3xf16>
  return %y : tensor<1x3xf16>
}
)");
  const Run kernels = run(kQrun + " " + model.string() + " --random 5 --kernels");
  REQUIRE_MESSAGE(kernels.exit_code == 0, kernels.err);
  // Both on generated kernels (the reference would be named instead of a kernel).
  CHECK_MESSAGE(kernels.out.find("qrt.conv2d: f32_f32_f32_conv_im2col_") != std::string::npos, kernels.out);
  CHECK_MESSAGE(kernels.out.find("qrt.matmul: f32_f32_f32_gemm_") != std::string::npos, kernels.out);
  CHECK_MESSAGE(kernels.out.find("f16 operands widened to f32, results rounded once to f16") != std::string::npos, kernels.out);
  const Run jit = run(kQrun + " " + model.string() + " --random 5");
  const Run ref = run(kQrun + " " + model.string() + " --random 5 --backend ref");
  REQUIRE(jit.exit_code == 0);
  CHECK(jit.out == ref.out);
  // Its weight-only form: the filter and the weights quantized to i8, expressed in f16.
  const fs::path quantized = temp_dir() / "conv_f16_i8.qrt";
  const Run q = run(kQopt + " " + model.string() + " --weight-only i8 -o " + quantized.string() + " --report");
  REQUIRE_MESSAGE(q.exit_code == 0, q.err);
  CHECK_MESSAGE(q.err.find("qrt.conv2d %c: filter 2x2x2x2 -> i8, per output channel") != std::string::npos, q.err);
  const Run qk = run(kQrun + " " + quantized.string() + " --random 5 --kernels");
  REQUIRE_MESSAGE(qk.exit_code == 0, qk.err);
  CHECK_MESSAGE(qk.out.find("qrt.conv2d: f32_qc8w_f32_conv_im2col_") != std::string::npos, qk.out);
  const Run qj = run(kQrun + " " + quantized.string() + " --random 5");
  const Run qr = run(kQrun + " " + quantized.string() + " --random 5 --backend ref");
  REQUIRE(qj.exit_code == 0);
  CHECK(qj.out == qr.out);
}

TEST_CASE("qrun on a bf16 and an f16 head (pooling, layer norm, mean, softmax): every op on a kernel, as the reference") {
  for (const std::string kind : {"bf16", "f16"}) {
    CAPTURE(kind);
    std::string text = R"(func.func @main(%x: tensor<1x16x16x8xT>, %g: tensor<64xT>) -> tensor<1x8xT> {
  %p = "qrt.max_pool2d"(%x) {kernel = [2, 2], strides = [2, 2]} : (tensor<1x16x16x8xT>) -> tensor<1x8x8x8xT>
  %a = "qrt.avg_pool2d"(%p) {kernel = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x8x8x8xT>) -> tensor<1x8x8x8xT>
  %r = "qrt.reshape"(%a) : (tensor<1x8x8x8xT>) -> tensor<8x64xT>
  %n = "qrt.layer_norm"(%r, %g) {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<8x64xT>, tensor<64xT>) -> tensor<8x64xT>
  %m = "qrt.mean"(%n) {axes = [1]} : (tensor<8x64xT>) -> tensor<8xT>
  %s = "qrt.reshape"(%m) : (tensor<8xT>) -> tensor<1x8xT>
  %y = "qrt.softmax"(%s) {axis = -1 : i64} : (tensor<1x8xT>) -> tensor<1x8xT>
  return %y : tensor<1x8xT>
}
)";
    for (size_t at = text.find("xT>"); at != std::string::npos; at = text.find("xT>", at)) text.replace(at + 1, 1, kind);
    const fs::path model = write_file("head_" + kind + ".mlir", text);
    const Run kernels = run(kQrun + " " + model.string() + " --random 11 --kernels");
    REQUIRE_MESSAGE(kernels.exit_code == 0, kernels.err);
    for (const std::string& name : std::vector<std::string>{"_maxpool_2x2", "_avgpool_3x3", "_layernorm", "_mean", "_" + kind + "_softmax__"}) {
      CHECK_MESSAGE(kernels.out.find(": " + kind + name) != std::string::npos, name << "\n" << kernels.out);
    }
    CHECK_MESSAGE(kernels.out.find(": reference") == std::string::npos, kernels.out);
    const Run jit = run(kQrun + " " + model.string() + " --random 11");
    const Run ref = run(kQrun + " " + model.string() + " --random 11 --backend ref");
    REQUIRE(jit.exit_code == 0);
    CHECK(jit.out == ref.out);
  }
}

TEST_CASE("qrun/qopt --numerics: the profile's integers, recorded by qopt, named by --kernels") {
  const fs::path model = write_file("qcast_profiles.mlir", kQcastGraph);
  const fs::path x = write_f32("xp.npy", {4}, {0.25f, 0.75f, 100.0f, -1.3f});
  // x / 0.5 = [0.5, 1.5, 200, -2.6], zero point -3.
  const std::vector<std::pair<std::string, std::vector<int8_t>>> cases = {
      {"default", {-3, -1, 127, -6}},    // rne, then the zero point
      {"stablehlo", {-2, -2, 127, -6}},  // the zero point, then rne: rne(-2.5), rne(-1.5)
      {"tflite", {-2, -1, 127, -6}},     // round half away from zero, then the zero point
  };
  for (const auto& [profile, expected] : cases) {
    CAPTURE(profile);
    const fs::path out = temp_dir() / ("out_" + profile);
    const Run r = run(kQrun + " " + model.string() + " --input x=" + x.string() + " --numerics " + profile +
                      " --kernels --output-dir " + out.string());
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("numerics profile: " + profile) != std::string::npos);
    // Both have portable kernels of their formulas.
    if (profile == "stablehlo") CHECK(r.out.find("stablehlo dequantize-op-quantize: quantize (portable C++)") != std::string::npos);
    if (profile == "tflite") CHECK(r.out.find("quantize with tflite's formula") != std::string::npos);
    qrt_tools::NpyArray q;
    std::string error;
    REQUIRE(qrt_tools::read_npy((out / "q.npy").string(), q, error));
    CHECK(std::memcmp(q.data.data(), expected.data(), 4) == 0);
  }
  // qopt records the profile (text and .qrt); qrun then uses it without being told.
  const Run text = run(kQopt + " " + model.string() + " --numerics stablehlo");
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(text.out.rfind("module attributes {qrt.numerics = \"stablehlo\"} {\n", 0) == 0);
  const fs::path qrt_file = temp_dir() / "profiled.qrt";
  REQUIRE(run(kQopt + " " + model.string() + " --numerics stablehlo -o " + qrt_file.string()).exit_code == 0);
  const fs::path out = temp_dir() / "out_recorded";
  const Run r = run(kQrun + " " + qrt_file.string() + " --input x=" + x.string() + " --output-dir " + out.string());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  qrt_tools::NpyArray q;
  std::string error;
  REQUIRE(qrt_tools::read_npy((out / "q.npy").string(), q, error));
  const std::vector<int8_t> stablehlo = {-2, -2, 127, -6};
  CHECK(std::memcmp(q.data.data(), stablehlo.data(), 4) == 0);
  CHECK(run(kQrun + " --version").out.find("numerics profiles: default, stablehlo, tflite") != std::string::npos);
  check_one_error_line(run(kQrun + " " + model.string() + " --random 1 --numerics gemmlowp"), "qrun",
                       "unknown numerics profile 'gemmlowp'");
  check_one_error_line(run(kQopt + " " + model.string() + " --numerics gemmlowp"), "qopt",
                       "unknown numerics profile 'gemmlowp'");
}

TEST_CASE("qrun on a dynamic-batch ONNX model: later runs take a static plan, --no-specialize keeps the walk") {
  const std::string models = MODELS_DIR;
  const std::string model = models + "/onnx/digits_cnn_qdq_u8.onnx --input input=" + models + "/onnx/digits_test_x.npy";
  const fs::path fast = temp_dir() / "specialized", walk = temp_dir() / "walk";
  const Run r = run(kQrun + " " + model + " --bench 3 --profile --output-dir " + fast.string());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.out.find("shapes: the runs took 1 static plan compiled for their input shapes") != std::string::npos, r.out);
  const Run w = run(kQrun + " " + model + " --bench 3 --profile --no-specialize --output-dir " + walk.string());
  REQUIRE_MESSAGE(w.exit_code == 0, w.err);
  CHECK(w.out.find("shapes:") == std::string::npos);
  // The last run's logits (a static plan's, the walk's) are the same bytes.
  CHECK(slurp(fast / "logits.npy") == slurp(walk / "logits.npy"));
  CHECK(slurp(fast / "logits.npy").size() > 540 * 10 * 4);
}
