// qrt — micro-kernels from the kernel templates (see kernel_templates.cpp): a fresh module
// holds the description as a constant and a wrapper with the micro-kernel ABI; the linker
// brings in, lazily from the embedded bitcode, only the template's entry and what it calls;
// everything linked is internalized, so the optimizer folds the description into the loops.
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <cstddef>
#include <cstring>
#include <mutex>

#include "jit/core/microkernel.h"
#include "jit/llvm/kernel_template_abi.h"
#include "jit/llvm/llvm_codegen.h"

#if QRT_LLVM_KERNEL_TEMPLATES
namespace qrt::jit::llvm_ir {
extern const unsigned char kKernelTemplates[];
extern const std::size_t kKernelTemplates_size;
}  // namespace qrt::jit::llvm_ir
#endif

namespace qrt::jit::llvm_ir {

namespace {

// The template entry of each kind (kernel_templates.cpp), or null where there is none.
const char* template_entry(KernelOp op) {
  switch (op) {
    case KernelOp::kQuantize:
    case KernelOp::kDequantize: return "qrt_kt_convert";
    case KernelOp::kGemm: return "qrt_kt_gemm";
    case KernelOp::kPackRows: return "qrt_kt_pack_rows";
    case KernelOp::kDepthwise: return "qrt_kt_depthwise";
    case KernelOp::kMaxPool:
    case KernelOp::kAvgPool: return "qrt_kt_pool";
    case KernelOp::kQAdd:
    case KernelOp::kQMul:
    case KernelOp::kRequantize: return "qrt_kt_elementwise";
    case KernelOp::kClamp: return "qrt_kt_clamp";
    case KernelOp::kF32Gemm: return "qrt_kt_f32_gemm";
    case KernelOp::kLut8: return "qrt_kt_lut8";
    case KernelOp::kF32Dwconv: return "qrt_kt_f32_dwconv";
    case KernelOp::kWoGemm: return "qrt_kt_wo_gemm";
    case KernelOp::kDynGemm: return "qrt_kt_dyn_gemm";
    case KernelOp::kRequantQ31: return "qrt_kt_requant_q31";
    case KernelOp::kRequantF64: return "qrt_kt_requant_f64";
    case KernelOp::kInterleavePlanes: return "qrt_kt_interleave_planes";
    case KernelOp::kDwInterleave:
    case KernelOp::kDwRows:
    case KernelOp::kEwProgram:
    case KernelOp::kCount: break;
  }
  return nullptr;
}

llvm::MemoryBufferRef template_bytes() {
#if QRT_LLVM_KERNEL_TEMPLATES
  return llvm::MemoryBufferRef(
      llvm::StringRef(reinterpret_cast<const char*>(kKernelTemplates), kKernelTemplates_size), "kernel_templates.bc");
#else
  return llvm::MemoryBufferRef(llvm::StringRef(), "kernel_templates.bc");
#endif
}

Result<std::unique_ptr<llvm::Module>> parse_templates(llvm::LLVMContext& ctx) {
  auto module = llvm::parseBitcodeFile(template_bytes(), ctx);
  if (!module) return Status::error("LLVM cannot read qrt's kernel templates: " + llvm::toString(module.takeError()));
  return std::move(*module);
}

// The layout facts the templates were compiled with must be the host compiler's: the
// description is handed over as raw bytes and the argument blocks by pointer.
std::string check_abi() {
  llvm::LLVMContext ctx;
  auto module = parse_templates(ctx);
  if (!module.is_ok()) return module.status().message();
  const llvm::GlobalVariable* abi = (*module)->getGlobalVariable("qrt_kernel_template_abi");
  // A std::array: a struct around the array of values.
  const llvm::Constant* init = abi && abi->hasInitializer() ? abi->getInitializer() : nullptr;
  if (init && init->getType()->isStructTy()) init = init->getAggregateElement(0u);
  const auto* values = init ? llvm::dyn_cast<llvm::ConstantDataArray>(init) : nullptr;
  const auto& host = kKernelTemplateAbi;
  const size_t count = host.size();
  if (!values || values->getNumElements() != count) return "the kernel templates carry no layout record";
  for (size_t i = 0; i < count; ++i) {
    if (values->getElementAsInteger(unsigned(i)) != host[i]) {
      return "the kernel templates were compiled with another struct layout (record " + std::to_string(i) + ": " +
             std::to_string(values->getElementAsInteger(unsigned(i))) + " bytes, the library " + std::to_string(host[i]) + ")";
    }
  }
  return "";
}

}  // namespace

bool kernel_templates_built() {
#if QRT_LLVM_KERNEL_TEMPLATES
  return true;
#else
  return false;
#endif
}

std::string kernel_templates_why_not() {
  if (!kernel_templates_built()) {
    return "this build has no LLVM kernel templates (clang++-19 or llvm-link-19 was missing when it was configured)";
  }
  static std::once_flag once;
  static std::string why;
  std::call_once(once, [] { why = check_abi(); });
  return why;
}

uint64_t kernel_templates_hash() {
  // FNV-1a over the bitcode: a rebuilt library with other templates never reuses old objects.
  static const uint64_t hash = [] {
    const llvm::StringRef bytes = template_bytes().getBuffer();
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
    return h;
  }();
  return hash;
}

std::string kernel_key(const KernelDesc& d) {
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &d.scale, 4);
  std::string key = d.name();
  for (int64_t v : {int64_t(d.op), int64_t(d.isa), int64_t(d.generator), int64_t(d.storage_signed), int64_t(scale_bits),
                    int64_t(d.zero_point), int64_t(d.qmin), int64_t(d.qmax), int64_t(d.path), int64_t(d.out), int64_t(d.mr),
                    int64_t(d.nr), int64_t(d.panel), int64_t(d.row_correction), int64_t(d.saturate), int64_t(d.b_signed), int64_t(d.taps),
                    int64_t(d.kh), int64_t(d.channels), int64_t(d.weight_bits), int64_t(d.weight_zp),
                    int64_t(d.weight_round), int64_t(d.q31), int64_t(d.single_rounding), int64_t(d.k_tail)}) {
    key += "," + std::to_string(v);
  }
  return key + "|templates " + std::to_string(kernel_templates_hash());
}

Result<std::unique_ptr<llvm::Module>> build_kernel_module(llvm::LLVMContext& ctx, const std::string& name,
                                                          const KernelDesc& desc) {
  const char* entry = template_entry(desc.op);
  if (!entry) return Status::error(desc.name() + ": no kernel template for this kind").with_code(ErrorCode::kUnsupported);
  // The templates are read lazily: the linker materializes the entry and what it calls, not
  // the other templates, twins and numerics (a full parse and an O2 over all of them took
  // most of a kernel's compile time).
  auto lazy = llvm::getLazyBitcodeModule(template_bytes(), ctx);
  if (!lazy) return Status::error("LLVM cannot read qrt's kernel templates: " + llvm::toString(lazy.takeError()));
  std::unique_ptr<llvm::Module> templates = std::move(*lazy);
  const llvm::Function* tmpl_in_templates = templates->getFunction(entry);
  if (!tmpl_in_templates) return Status::error(std::string("the kernel templates lack ") + entry);

  auto module = std::make_unique<llvm::Module>("qrt_kernel", ctx);
  module->setDataLayout(templates->getDataLayout());
  module->setTargetTriple(templates->getTargetTriple());
  llvm::Function* tmpl = llvm::Function::Create(tmpl_in_templates->getFunctionType(), llvm::GlobalValue::ExternalLinkage,
                                                entry, *module);

  // The description as a constant of its own bytes (padding zeroed).
  unsigned char bytes[sizeof(KernelDesc)] = {};
  std::memcpy(bytes, &desc, sizeof desc);
  auto* init = llvm::ConstantDataArray::get(ctx, llvm::ArrayRef<uint8_t>(bytes, sizeof bytes));
  auto* constant = new llvm::GlobalVariable(*module, init->getType(), /*isConstant=*/true,
                                            llvm::GlobalValue::PrivateLinkage, init, "qrt_kernel_desc");
  constant->setAlignment(llvm::Align(alignof(KernelDesc)));

  // fn(args, desc) with the micro-kernel ABI; it ignores the caller's desc.
  auto* fn = llvm::Function::Create(tmpl->getFunctionType(), llvm::GlobalValue::ExternalLinkage, name, *module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateCall(tmpl, {fn->getArg(0), constant});
  b.CreateRetVoid();

  if (llvm::Linker::linkModules(*module, std::move(templates), llvm::Linker::Flags::LinkOnlyNeeded)) {
    return Status::error(desc.name() + ": LLVM could not link the kernel templates");
  }
  tmpl = module->getFunction(entry);
  if (!tmpl || tmpl->isDeclaration()) return Status::error(std::string("the kernel templates lack ") + entry);
  tmpl->addFnAttr(llvm::Attribute::AlwaysInline);

  // Everything linked in becomes internal: the optimizer inlines the entry and folds every
  // `desc->` field into the loops.
  for (llvm::Function& f : *module) {
    if (!f.isDeclaration() && &f != fn) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  for (llvm::GlobalVariable& g : module->globals()) {
    if (!g.isDeclaration() && &g != constant) g.setLinkage(llvm::GlobalValue::InternalLinkage);
  }

  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) return Status::error(desc.name() + ": the kernel module does not verify: " + problems);
  return module;
}

}  // namespace qrt::jit::llvm_ir
