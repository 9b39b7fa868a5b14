// com.tessera FusedElementwise on the GPU (what the fuse_elementwise rule makes). Per signature (input
// and output element types, each input's broadcast pattern) the program becomes one generated kernel,
// compiled by NVRTC when the session is built for the shapes inference found, and otherwise on the first
// run that meets a new pattern; where NVRTC fails, the interpreter kernel runs the same program.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

#include "backends/cuda/fused_elementwise.h"
#include "backends/cuda/fused_elementwise_codegen.h"
#include "backends/cuda/kernel_table.h"
#include "backends/cuda/kernel_util.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "ops/fused/elementwise_program.h"
#include "ops/layout/blocked.h"
#include "runtime/broadcast.h"

namespace tessera::cuda {

namespace {

namespace fused = ops::fused;

std::optional<FusedType> fused_type(rt::DataType t) {
  switch (t) {
    case rt::DataType::kFloat:
      return FusedType::kFloat;
    case rt::DataType::kFloat16:
      return FusedType::kHalf;
    case rt::DataType::kBFloat16:
      return FusedType::kBFloat16;
    case rt::DataType::kBool:
      return FusedType::kBool;
    default:
      return std::nullopt;
  }
}

fused::Program program_of(const rt::KernelInfo& info) {
  return fused::parse_program(info.get_string("program"), info.get_ints("results"), info.input_count());
}

// The program parses and fits the kernel's limits; where inference knows the types, they are ones the
// kernel loads and stores (no double). Unknown types (a rule asking before inference) are accepted: the
// session asks again with the inferred ones before it places the node.
bool supports_fused(const rt::KernelInfo& info) {
  fused::Program p;
  try {
    p = program_of(info);
  } catch (const std::exception&) {
    return false;
  }
  if (info.input_count() < 1 || info.input_count() > static_cast<size_t>(kFusedMaxInputs) ||
      info.output_count() > static_cast<size_t>(kFusedMaxOutputs) ||
      p.code.size() > static_cast<size_t>(kFusedMaxStatements) || p.results.size() != info.output_count())
    return false;
  std::vector<rt::DataType> types;
  for (size_t i = 0; i < info.input_count(); ++i) {
    if (!info.has_input(i)) return false;
    types.push_back(info.input_dtype(i));
    if (types.back() == rt::DataType::kUndefined) return true;
    if (!fused_type(types.back())) return false;
    const auto& shape = info.input_type(i).shape;
    if (shape && shape->size() > static_cast<size_t>(kFusedMaxRank)) return false;
  }
  try {
    fused::statement_types(p, types);
  } catch (const fused::ProgramError&) {
    return false;
  }
  return true;
}

// Input `in` against the output `out` (shapes aligned on the right): how the kernel indexes it.
FusedMode classify(const rt::Shape& in, const rt::Shape& out, int64_t& div, int64_t& mod) {
  const size_t r = out.size(), lead = r - in.size();
  auto dim = [&](size_t d) { return d < lead ? int64_t{1} : in[d - lead]; };
  int64_t numel = 1;
  for (int64_t d : in) numel *= d;
  if (numel == 1) return FusedMode::kScalar;
  bool same = true;
  for (size_t d = 0; d < r; ++d) same &= dim(d) == out[d];
  if (same) return FusedMode::kSame;
  // The dimensions the input does not broadcast along, which must form one block [a, b).
  size_t a = r, b = 0;
  for (size_t d = 0; d < r; ++d)
    if (dim(d) != 1) {
      a = std::min(a, d);
      b = d + 1;
    }
  div = 1;
  mod = 1;
  for (size_t d = a; d < b; ++d) {
    if (dim(d) != out[d]) return FusedMode::kStrided;  // a broadcast axis inside the block
    mod *= out[d];
  }
  for (size_t d = b; d < r; ++d) div *= out[d];
  return div == 1 ? FusedMode::kRow : FusedMode::kCol;
}

// Blocks of 256 threads for a grid-stride loop over `work` items.
unsigned blocks_for(int64_t work) {
  int64_t b = (work + 255) / 256;
  return static_cast<unsigned>(std::clamp<int64_t>(b, 1, 65535 * 32));
}

struct Compiled {
  CompiledKernel scalar, vec;
  std::string error;  // why NVRTC failed: the interpreter runs instead
};

class FusedElementwiseKernel : public rt::OpKernel {
 public:
  explicit FusedElementwiseKernel(const rt::KernelInfo& info) : prog_(program_of(info)) {
    // Compile now for the shapes and types inference found, so that the first run does not wait.
    std::vector<rt::DataType> types;
    std::vector<rt::Shape> shapes;
    for (size_t i = 0; i < info.input_count(); ++i) {
      const ir::Type& t = info.input_type(i);
      if (!t.shape || t.elem == rt::DataType::kUndefined) return;
      rt::Shape s;
      for (const auto& d : *t.shape) {
        if (!d.is_static()) return;
        s.push_back(d.value);
      }
      types.push_back(t.elem);
      shapes.push_back(std::move(s));
    }
    try {
      std::vector<const rt::Shape*> ptrs;
      for (const auto& s : shapes) ptrs.push_back(&s);
      rt::Shape out = rt::broadcast_shapes(ptrs);
      FusedParams p{};
      FusedSignature sig = signature(types, shapes, out, p);
      compiled(sig);
    } catch (const std::exception&) {
      // Inconsistent inferred types: the run reports them.
    }
  }

  void compute(rt::KernelContext& ctx) const override {
    std::vector<rt::DataType> types;
    std::vector<rt::Shape> shapes;
    std::vector<const rt::Shape*> ptrs;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      types.push_back(ctx.input(i).dtype());
      shapes.push_back(ctx.input(i).shape());
    }
    for (const auto& s : shapes) ptrs.push_back(&s);
    const rt::Shape out = rt::broadcast_shapes(ptrs);
    FusedParams p{};
    FusedSignature sig;
    try {
      sig = signature(types, shapes, out, p);
    } catch (const std::exception& e) {
      ctx.fail(e.what());
    }
    for (size_t k = 0; k < ctx.input_count(); ++k) p.in[k] = ctx.input(k).raw();
    for (size_t o = 0; o < prog_.results.size(); ++o)
      p.out[o] = ctx.output_uninitialized(o, rt_type(sig.outputs[o]), out).raw();
    if (p.n == 0) return;
    const Compiled& c = compiled(sig);
    cudaStream_t s = native(ctx.stream());
    if (!c.scalar) {
      launch_fused_interp(interpreter_program(sig), p, s);
      ctx.set_path("interpreter");
    } else {
      bool vec = vector_ok(sig, p);
      void* args[] = {&p};
      int64_t work = vec ? p.n / fused_vector_width(sig) : p.n;
      try {
        (vec ? c.vec : c.scalar).launch(blocks_for(work), 256, args, s);
      } catch (const NvrtcError& e) {
        ctx.fail(e.what());
      }
      ctx.set_path(vec ? "nvrtc vector" : "nvrtc");
    }
    check_launch(ctx);
  }

 private:
  static rt::DataType rt_type(FusedType t) {
    switch (t) {
      case FusedType::kFloat:
        return rt::DataType::kFloat;
      case FusedType::kHalf:
        return rt::DataType::kFloat16;
      case FusedType::kBFloat16:
        return rt::DataType::kBFloat16;
      case FusedType::kBool:
        return rt::DataType::kBool;
    }
    return rt::DataType::kFloat;
  }

  // The signature of a run, filling the broadcast part of its parameters.
  FusedSignature signature(const std::vector<rt::DataType>& types, const std::vector<rt::Shape>& shapes,
                           const rt::Shape& out, FusedParams& p) const {
    FusedSignature sig;
    std::vector<rt::DataType> stmt = fused::statement_types(prog_, types);
    for (int64_t r : prog_.results) {
      auto t = fused_type(stmt[static_cast<size_t>(r)]);
      if (!t || *t == FusedType::kBool) throw rt::KernelError("an output type the CUDA kernel cannot store");
      sig.outputs.push_back(*t);
    }
    p.n = 1;
    for (int64_t d : out) p.n *= d;
    p.small = p.n <= (int64_t{1} << 30);  // an index plus a grid's stride (< 2^30) stays below 2^31
    for (size_t k = 0; k < types.size(); ++k) {
      auto t = fused_type(types[k]);
      if (!t)
        throw rt::KernelError(
            fmt::format("input {} is {}, which the CUDA kernel does not take", k, ir::dtype_name(types[k])));
      sig.inputs.push_back(*t);
      sig.modes.push_back(classify(shapes[k], out, p.div[k], p.mod[k]));
      if (sig.modes.back() != FusedMode::kStrided) continue;
      if (out.size() > static_cast<size_t>(kFusedMaxRank))
        throw rt::KernelError(
            fmt::format("input {} {} broadcasts to {} in a pattern the CUDA kernel takes up to "
                        "rank {} only",
                        k, rt::shape_str(shapes[k]), rt::shape_str(out), kFusedMaxRank));
      p.rank = static_cast<int32_t>(out.size());
      auto st = rt::broadcast_strides(shapes[k], out);
      for (size_t d = 0; d < out.size(); ++d) {
        p.dims[d] = out[d];
        p.strides[k][d] = st[d];
      }
    }
    return sig;
  }

  // The vector kernel needs whole vectors everywhere: sizes, row lengths, column blocks, alignment.
  static bool vector_ok(const FusedSignature& sig, const FusedParams& p) {
    if (!fused_has_vector_kernel(sig)) return false;
    const int64_t w = fused_vector_width(sig);
    if (p.n % w != 0) return false;
    auto aligned = [&](const void* ptr, FusedType t) {
      int64_t bytes = w * (t == FusedType::kFloat ? 4 : t == FusedType::kBool ? 1 : 2);
      return reinterpret_cast<uintptr_t>(ptr) % static_cast<uintptr_t>(bytes) == 0;
    };
    for (size_t k = 0; k < sig.inputs.size(); ++k) {
      FusedMode m = sig.modes[k];
      if (m == FusedMode::kRow && p.mod[k] % w != 0) return false;
      if (m == FusedMode::kCol && p.div[k] % w != 0) return false;
      if ((m == FusedMode::kSame || m == FusedMode::kRow) && !aligned(p.in[k], sig.inputs[k])) return false;
    }
    for (size_t o = 0; o < sig.outputs.size(); ++o)
      if (!aligned(p.out[o], sig.outputs[o])) return false;
    return true;
  }

  const Compiled& compiled(const FusedSignature& sig) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(sig);
    if (it != cache_.end()) return it->second;
    Compiled c;
    // TESSERA_DISABLE_NVRTC=1 runs every program on the interpreter (its tests; a broken NVRTC).
    const char* off = std::getenv("TESSERA_DISABLE_NVRTC");
    if (off && *off && std::string_view(off) != "0") {
      c.error = "NVRTC switched off by TESSERA_DISABLE_NVRTC";
      return cache_.emplace(sig, std::move(c)).first->second;
    }
    try {
      std::string source = generate_fused_source(prog_, sig);
      c.scalar = compile_kernel(source, kFusedScalarKernel);
      if (fused_has_vector_kernel(sig)) c.vec = compile_kernel(source, kFusedVectorKernel);
    } catch (const NvrtcError& e) {
      c = Compiled{};
      c.error = e.what();
    }
    return cache_.emplace(sig, std::move(c)).first->second;
  }

  FusedInterpProgram interpreter_program(const FusedSignature& sig) const {
    FusedInterpProgram ip{};
    ip.n_inputs = static_cast<int32_t>(sig.inputs.size());
    ip.n_code = static_cast<int32_t>(prog_.code.size());
    ip.n_outputs = static_cast<int32_t>(sig.outputs.size());
    for (size_t k = 0; k < sig.inputs.size(); ++k) {
      ip.in_type[k] = static_cast<int32_t>(sig.inputs[k]);
      ip.in_mode[k] = static_cast<int32_t>(sig.modes[k]);
    }
    for (size_t o = 0; o < sig.outputs.size(); ++o) {
      ip.out_type[o] = static_cast<int32_t>(sig.outputs[o]);
      ip.out_reg[o] = ip.n_inputs + static_cast<int32_t>(prog_.results[o]);
    }
    for (size_t s = 0; s < prog_.code.size(); ++s) {
      const fused::Instr& in = prog_.code[s];
      FusedInstr& f = ip.code[s];
      f.op = static_cast<int32_t>(in.op);
      f.to = static_cast<int32_t>(in.to == rt::DataType::kFloat16    ? FusedType::kHalf
                                  : in.to == rt::DataType::kBFloat16 ? FusedType::kBFloat16
                                                                     : FusedType::kFloat);
      for (size_t a = 0; a < 3; ++a) {
        f.arg[a] = -1;
        if (a >= in.args.size()) continue;
        const fused::Operand& o = in.args[a];
        if (o.kind == fused::Operand::Kind::kInput) f.arg[a] = o.index;
        if (o.kind == fused::Operand::Kind::kTemp) f.arg[a] = ip.n_inputs + o.index;
        if (o.kind == fused::Operand::Kind::kLiteral) f.lit[a] = static_cast<float>(o.literal);
      }
    }
    return ip;
  }

  fused::Program prog_;
  mutable std::mutex mu_;
  mutable std::map<FusedSignature, Compiled> cache_;
};

}  // namespace

void register_fused_elementwise_kernels(KernelTable& t) {
  auto d = cuda_def(fused::kFusedElementwiseOp, supports_fused, [](const rt::KernelInfo& i) -> rt::KernelPtr {
    return std::make_unique<FusedElementwiseKernel>(i);
  });
  d.domain = ops::layout::kDomain;
  t.add(std::move(d));
}

}  // namespace tessera::cuda
