// Reference kernel of com.tessera FusedElementwise: interprets the program per element of the inputs'
// broadcast shape, in double (the oracle the CUDA kernel, which computes in float32, is tested against),
// and rounds each output once to its element type.
#include <fmt/format.h>

#include <algorithm>

#include "ops/fused/elementwise_program.h"
#include "runtime/broadcast.h"
#include "runtime/half.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace ir = tessera::ir;
namespace fused = tessera::ops::fused;

double load(const void* p, ir::DataType t, int64_t i) {
  switch (t) {
    case ir::DataType::kFloat:
      return static_cast<const float*>(p)[i];
    case ir::DataType::kDouble:
      return static_cast<const double*>(p)[i];
    case ir::DataType::kFloat16:
      return static_cast<float>(static_cast<const rt::Float16*>(p)[i]);
    case ir::DataType::kBFloat16:
      return static_cast<float>(static_cast<const rt::BFloat16*>(p)[i]);
    case ir::DataType::kBool:
      return static_cast<const bool*>(p)[i] ? 1.0 : 0.0;
    default:
      return 0.0;  // statement_types rejected every other type
  }
}

void store(void* p, ir::DataType t, int64_t i, double v) {
  switch (t) {
    case ir::DataType::kFloat:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      return;
    case ir::DataType::kDouble:
      static_cast<double*>(p)[i] = v;
      return;
    case ir::DataType::kFloat16:
      static_cast<rt::Float16*>(p)[i] = rt::Float16(static_cast<float>(v));
      return;
    case ir::DataType::kBFloat16:
      static_cast<rt::BFloat16*>(p)[i] = rt::BFloat16(static_cast<float>(v));
      return;
    default:
      return;
  }
}

fused::Program program_of(const rt::KernelInfo& info) {
  try {
    return fused::parse_program(info.get_string("program"), info.get_ints("results"), info.input_count());
  } catch (const fused::ProgramError& e) {
    throw rt::KernelError(fmt::format("attribute 'program': {}", e.what()));
  }
}

class FusedElementwise : public rt::OpKernel {
 public:
  explicit FusedElementwise(const rt::KernelInfo& info) : prog_(program_of(info)) {
    if (prog_.results.size() != info.output_count())
      throw rt::KernelError(
          fmt::format("'results' names {} values for {} outputs", prog_.results.size(), info.output_count()));
  }

  void compute(rt::KernelContext& ctx) const override {
    const size_t n_in = ctx.input_count();
    std::vector<const rt::Tensor*> ins;
    std::vector<const rt::Shape*> shapes;
    std::vector<ir::DataType> in_types;
    for (size_t i = 0; i < n_in; ++i) {
      ins.push_back(&ctx.input(i));
      shapes.push_back(&ins.back()->shape());
      in_types.push_back(ins.back()->dtype());
    }
    std::vector<ir::DataType> types;
    try {
      types = fused::statement_types(prog_, in_types);
    } catch (const fused::ProgramError& e) {
      ctx.fail(e.what());
    }
    const rt::Shape out = rt::broadcast_shapes(shapes);
    std::vector<std::vector<int64_t>> strides;
    for (const rt::Shape* s : shapes) strides.push_back(rt::broadcast_strides(*s, out));
    std::vector<void*> outs;
    for (size_t o = 0; o < prog_.results.size(); ++o)
      outs.push_back(ctx.output_uninitialized(o, types[static_cast<size_t>(prog_.results[o])], out).raw());
    int64_t total = 1;
    for (int64_t d : out) total *= d;
    ctx.threads().parallel_for(
        total, 4096, [&](int64_t b0, int64_t b1) { run_range(b0, b1, out, ins, strides, types, outs); });
  }

 private:
  // Elements [b0, b1) in row-major order, with the inputs' offsets carried along an index counter.
  void run_range(int64_t b0, int64_t b1, const rt::Shape& out, const std::vector<const rt::Tensor*>& ins,
                 const std::vector<std::vector<int64_t>>& strides, const std::vector<ir::DataType>& types,
                 const std::vector<void*>& outs) const {
    const size_t rank = out.size(), n_in = ins.size();
    std::vector<int64_t> idx(rank), off(n_in, 0);
    int64_t rest = b0;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rest % out[d];
      rest /= out[d];
      for (size_t i = 0; i < n_in; ++i) off[i] += idx[d] * strides[i][d];
    }
    std::vector<double> x(n_in), t(prog_.code.size());
    double args[3];
    for (int64_t e = b0; e < b1; ++e) {
      for (size_t i = 0; i < n_in; ++i) x[i] = load(ins[i]->raw(), ins[i]->dtype(), off[i]);
      for (size_t k = 0; k < prog_.code.size(); ++k) {
        const fused::Instr& in = prog_.code[k];
        for (size_t a = 0; a < in.args.size(); ++a) {
          const fused::Operand& o = in.args[a];
          args[a] = o.kind == fused::Operand::Kind::kInput  ? x[static_cast<size_t>(o.index)]
                    : o.kind == fused::Operand::Kind::kTemp ? t[static_cast<size_t>(o.index)]
                                                            : o.literal;
        }
        t[k] = fused::eval_statement(in, args);
      }
      for (size_t o = 0; o < outs.size(); ++o) {
        size_t r = static_cast<size_t>(prog_.results[o]);
        store(outs[o], types[r], e, t[r]);
      }
      for (size_t d = rank; d-- > 0;) {  // next index
        for (size_t i = 0; i < n_in; ++i) off[i] += strides[i][d];
        if (++idx[d] < out[d]) break;
        for (size_t i = 0; i < n_in; ++i) off[i] -= idx[d] * strides[i][d];
        idx[d] = 0;
      }
    }
  }

  fused::Program prog_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(fused_elementwise) {
  reg.add(tessera::rt::KernelDef::of<FusedElementwise>(fused::kFusedElementwiseOp).in_domain("com.tessera"));
}
