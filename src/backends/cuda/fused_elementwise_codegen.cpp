#include "backends/cuda/fused_elementwise_codegen.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

#include "backends/cuda/fused_elementwise_device.h"

namespace tessera::cuda {

namespace {

using ops::fused::EwOp;
using ops::fused::Instr;
using ops::fused::Operand;

const char* type_name(FusedType t) {
  switch (t) {
    case FusedType::kFloat:
      return "float";
    case FusedType::kHalf:
      return "tf_h16";
    case FusedType::kBFloat16:
      return "tf_b16";
    case FusedType::kBool:
      return "unsigned char";
  }
  return "float";
}

int type_size(FusedType t) {
  switch (t) {
    case FusedType::kFloat:
      return 4;
    case FusedType::kHalf:
    case FusedType::kBFloat16:
      return 2;
    case FusedType::kBool:
      return 1;
  }
  return 4;
}

// A float32 literal by its bits: exact, and no locale or spelling of inf/nan to worry about.
std::string literal(double v) {
  float f = static_cast<float>(v);
  uint32_t bits = std::bit_cast<uint32_t>(f);
  return fmt::format("__uint_as_float(0x{:08x}u)", bits);
}

std::string arg(const Operand& o) {
  if (o.kind == Operand::Kind::kInput) return fmt::format("x{}", o.index);
  if (o.kind == Operand::Kind::kTemp) return fmt::format("t{}", o.index);
  return literal(o.literal);
}

std::string expression(const Instr& in) {
  std::string a = arg(in.args[0]);
  std::string b = in.args.size() > 1 ? arg(in.args[1]) : "", c = in.args.size() > 2 ? arg(in.args[2]) : "";
  switch (in.op) {
    case EwOp::kAdd:
      return fmt::format("{} + {}", a, b);
    case EwOp::kSub:
      return fmt::format("{} - {}", a, b);
    case EwOp::kMul:
      return fmt::format("{} * {}", a, b);
    case EwOp::kDiv:
      return fmt::format("{} / {}", a, b);
    case EwOp::kPow:
      return fmt::format("tf_pow({}, {})", a, b);
    case EwOp::kMax:
      return fmt::format("tf_max({}, {})", a, b);
    case EwOp::kMin:
      return fmt::format("tf_min({}, {})", a, b);
    case EwOp::kWhere:
      return fmt::format("{} != 0.0f ? {} : {}", a, b, c);
    case EwOp::kClip:
      return fmt::format("tf_clip({}, {}, {})", a, b, c);
    case EwOp::kLeakyRelu:
      return fmt::format("tf_leaky_relu({}, {})", a, b);
    case EwOp::kRelu:
      return fmt::format("tf_relu({})", a);
    case EwOp::kSigmoid:
      return fmt::format("tf_sigmoid({})", a);
    case EwOp::kTanh:
      return fmt::format("tanhf({})", a);
    case EwOp::kExp:
      return fmt::format("expf({})", a);
    case EwOp::kLog:
      return fmt::format("logf({})", a);
    case EwOp::kNeg:
      return fmt::format("-{}", a);
    case EwOp::kAbs:
      return fmt::format("fabsf({})", a);
    case EwOp::kSqrt:
      return fmt::format("sqrtf({})", a);
    case EwOp::kErf:
      return fmt::format("erff({})", a);
    case EwOp::kReciprocal:
      return fmt::format("1.0f / {}", a);
    case EwOp::kCast:
      if (in.to == ir::DataType::kFloat16) return fmt::format("tf_round_h16({})", a);
      if (in.to == ir::DataType::kBFloat16) return fmt::format("tf_round_b16({})", a);
      return a;
  }
  return a;
}

// The statements and the stores, given that x<k> are defined; `out` maps output o to its lvalue.
std::string body(const ops::fused::Program& p, const std::vector<std::string>& out, const char* indent) {
  std::string s;
  for (size_t k = 0; k < p.code.size(); ++k)
    s += fmt::format("{}const float t{} = {};\n", indent, k, expression(p.code[k]));
  for (size_t o = 0; o < p.results.size(); ++o)
    s += fmt::format("{}tf_to({}, t{});\n", indent, out[o], p.results[o]);
  return s;
}

std::string header(const FusedSignature& sig) {
  std::string s = TESSERA_FUSED_DEVICE_CODE(TESSERA_FUSED_STRINGIFY);
  s += "\n";
  s += "template <class T, int N> struct alignas(sizeof(T) * N) tf_pack { T v[N]; };\n";
  // FusedParams as fused_elementwise.h lays it out.
  s += fmt::format(
      "struct FusedParams {{ const void* in[{0}]; void* out[{1}]; long long n; long long div[{0}]; "
      "long long mod[{0}]; int rank; int small; long long dims[{2}]; long long strides[{0}][{2}]; }};\n",
      kFusedMaxInputs, kFusedMaxOutputs, kFusedMaxRank);
  (void)sig;
  return s;
}

std::string index_expr(FusedMode m, size_t k) {
  switch (m) {
    case FusedMode::kSame:
      return "i";
    case FusedMode::kScalar:
      return "0";
    case FusedMode::kRow:
      return fmt::format("i % p.mod[{}]", k);
    case FusedMode::kCol:
      return fmt::format("(i / p.div[{}]) % p.mod[{}]", k, k);
    case FusedMode::kStrided:
      return fmt::format("off{}", k);
  }
  return "i";
}

std::string scalar_kernel(const ops::fused::Program& p, const FusedSignature& sig) {
  std::string s = fmt::format(
      "extern \"C\" __global__ void __launch_bounds__(256) {}(const FusedParams p) {{\n", kFusedScalarKernel);
  for (size_t k = 0; k < sig.inputs.size(); ++k)
    if (sig.modes[k] == FusedMode::kScalar)
      s += fmt::format("  const float x{0} = tf_f(((const {1}*)p.in[{0}])[0]);\n", k,
                       type_name(sig.inputs[k]));
  s += "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < p.n;"
       " i += (long long)gridDim.x * blockDim.x) {\n";
  bool strided = std::count(sig.modes.begin(), sig.modes.end(), FusedMode::kStrided) > 0;
  if (strided) {
    for (size_t k = 0; k < sig.inputs.size(); ++k)
      if (sig.modes[k] == FusedMode::kStrided) s += fmt::format("    long long off{} = 0;\n", k);
    // The walk in int32 where the sizes allow (p.small), else in int64.
    for (const char* t : {"int", "long long"}) {
      const bool narrow = std::string_view(t) == "int";
      s += fmt::format("    {} {{\n      {} rest = ({})i;\n      for (int d = p.rank - 1; d >= 0; --d) {{\n",
                       narrow ? "if (p.small)" : "else", t, t);
      s += fmt::format("        const {0} q = rest % ({0})p.dims[d];\n        rest /= ({0})p.dims[d];\n", t);
      for (size_t k = 0; k < sig.inputs.size(); ++k)
        if (sig.modes[k] == FusedMode::kStrided)
          s += fmt::format("        off{0} += q * ({1})p.strides[{0}][d];\n", k, t);
      s += "      }\n    }\n";
    }
  }
  for (size_t k = 0; k < sig.inputs.size(); ++k)
    if (sig.modes[k] != FusedMode::kScalar)
      s += fmt::format("    const float x{0} = tf_f(((const {1}*)p.in[{0}])[{2}]);\n", k,
                       type_name(sig.inputs[k]), index_expr(sig.modes[k], k));
  std::vector<std::string> out;
  for (size_t o = 0; o < sig.outputs.size(); ++o)
    out.push_back(fmt::format("(({}*)p.out[{}])[i]", type_name(sig.outputs[o]), o));
  s += body(p, out, "    ");
  s += "  }\n}\n";
  return s;
}

std::string vector_kernel(const ops::fused::Program& p, const FusedSignature& sig) {
  const int w = fused_vector_width(sig);
  std::string s = fmt::format(
      "extern \"C\" __global__ void __launch_bounds__(256) {}(const FusedParams p) {{\n", kFusedVectorKernel);
  s += fmt::format("  const long long groups = p.n / {};\n", w);
  for (size_t k = 0; k < sig.inputs.size(); ++k)
    if (sig.modes[k] == FusedMode::kScalar)
      s += fmt::format("  const float c{0} = tf_f(((const {1}*)p.in[{0}])[0]);\n", k,
                       type_name(sig.inputs[k]));
  s += "  for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < groups;"
       " g += (long long)gridDim.x * blockDim.x) {\n";
  s += fmt::format("    const long long i = g * {};\n", w);
  for (size_t k = 0; k < sig.inputs.size(); ++k) {
    const char* t = type_name(sig.inputs[k]);
    FusedMode m = sig.modes[k];
    if (m == FusedMode::kSame || m == FusedMode::kRow)
      s += fmt::format(
          "    const tf_pack<{1}, {2}> v{0} = *(const tf_pack<{1}, {2}>*)((const {1}*)p.in[{0}] + {3});\n", k,
          t, w, index_expr(m, k));
    if (m == FusedMode::kCol)
      s +=
          fmt::format("    const float c{0} = tf_f(((const {1}*)p.in[{0}])[{2}]);\n", k, t, index_expr(m, k));
  }
  std::vector<std::string> out;
  for (size_t o = 0; o < sig.outputs.size(); ++o) {
    s += fmt::format("    tf_pack<{}, {}> o{};\n", type_name(sig.outputs[o]), w, o);
    out.push_back(fmt::format("o{}.v[e]", o));
  }
  s += fmt::format("#pragma unroll\n    for (int e = 0; e < {}; ++e) {{\n", w);
  for (size_t k = 0; k < sig.inputs.size(); ++k) {
    FusedMode m = sig.modes[k];
    if (m == FusedMode::kSame || m == FusedMode::kRow)
      s += fmt::format("      const float x{0} = tf_f(v{0}.v[e]);\n", k);
    else
      s += fmt::format("      const float x{0} = c{0};\n", k);
  }
  s += body(p, out, "      ");
  s += "    }\n";
  for (size_t o = 0; o < sig.outputs.size(); ++o)
    s += fmt::format("    *(tf_pack<{1}, {2}>*)(({1}*)p.out[{0}] + i) = o{0};\n", o,
                     type_name(sig.outputs[o]), w);
  s += "  }\n}\n";
  return s;
}

}  // namespace

int fused_vector_width(const FusedSignature& sig) {
  int widest = 1;
  for (FusedType t : sig.inputs) widest = std::max(widest, type_size(t));
  for (FusedType t : sig.outputs) widest = std::max(widest, type_size(t));
  return std::min(8, 16 / widest);
}

bool fused_has_vector_kernel(const FusedSignature& sig) {
  return std::find(sig.modes.begin(), sig.modes.end(), FusedMode::kStrided) == sig.modes.end();
}

std::string generate_fused_source(const ops::fused::Program& p, const FusedSignature& sig) {
  std::string s = header(sig) + scalar_kernel(p, sig);
  if (fused_has_vector_kernel(sig)) s += vector_kernel(p, sig);
  return s;
}

}  // namespace tessera::cuda
