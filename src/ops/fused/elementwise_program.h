// The expression program of com.tessera FusedElementwise: a chain or tree of elementwise operations
// that the fuse_elementwise rule (passes/fuse_elementwise.cpp) collapsed into one node, evaluated per
// element of the broadcast shape of the node's inputs. The CPU reference kernel interprets it, the CUDA
// backend turns it into the source of one kernel (NVRTC).
//
// Encoding (the node's string attribute `program`): statements separated by ';', each defining the
// next temporary in order, `t<k>=<Op>(<arg>,...)`, where an argument is `x<i>` (the node's input i),
// `t<j>` (an earlier statement, j < k) or a decimal literal (a scalar constant of the original graph,
// written so that it reads back as the same double: `0.044714998453855515`, `-inf`, `nan`). Cast names
// its target in angle brackets: `t3=Cast<float16>(t2)`. The int list attribute `results` names the
// statements whose values are the node's outputs, in output order. Example, GPT-2's tanh GELU of x0:
//   t0=Pow(x0,3);t1=Mul(t0,0.044715);t2=Add(x0,t1);t3=Mul(t2,0.7978845608);t4=Tanh(t3);
//   t5=Add(t4,1);t6=Mul(x0,0.5);t7=Mul(t6,t5)        results = [7]
// Semantics are ONNX's for each op; every value has the broadcast shape of all inputs (the rule only
// fuses nodes whose outputs have that shape). Element types: each statement has the type of its
// non-literal operands (Where: of its second and third), Cast its target; Where's condition is bool.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"

namespace tessera::ops::fused {

inline constexpr const char* kFusedElementwiseOp = "FusedElementwise";

enum class EwOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMax,
  kMin,        // binary, numpy broadcasting
  kWhere,      // (condition, a, b)
  kClip,       // (x, min, max)
  kLeakyRelu,  // (x, alpha)
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kNeg,
  kAbs,
  kSqrt,
  kErf,
  kReciprocal,
  kCast,  // to Instr::to
};

std::string_view ew_op_name(EwOp op);
// The number of arguments the op takes.
int ew_arity(EwOp op);
// The op of an ONNX operator name as the program spells it ("Add", "Tanh"...); false when unknown.
bool ew_op_from_name(std::string_view name, EwOp& op);

struct Operand {
  enum class Kind : uint8_t { kInput, kTemp, kLiteral };
  Kind kind = Kind::kLiteral;
  int index = 0;       // input or statement index
  double literal = 0;  // kLiteral
};

struct Instr {
  EwOp op = EwOp::kAdd;
  std::vector<Operand> args;
  ir::DataType to = ir::DataType::kUndefined;  // kCast
};

struct Program {
  std::vector<Instr> code;
  std::vector<int64_t> results;  // statement indices, one per output
};

class ProgramError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses and validates the encoding above for a node with `input_count` inputs; ProgramError with a
// message naming the statement and what is wrong with it.
Program parse_program(std::string_view text, const std::vector<int64_t>& results, size_t input_count);
std::string format_program(const Program& p);

// The element type of every statement for inputs of these types; ProgramError when the operands of a
// statement disagree or a type is not one the op takes (float types; bool for Where's condition).
std::vector<ir::DataType> statement_types(const Program& p, const std::vector<ir::DataType>& inputs);

// Whether FusedElementwise computes on values of this type (float, double, float16, bfloat16).
bool is_program_float(ir::DataType t);

// One statement on scalar values (the CPU reference evaluates in double); `a` holds the arguments.
double eval_statement(const Instr& in, const double* a);

}  // namespace tessera::ops::fused
