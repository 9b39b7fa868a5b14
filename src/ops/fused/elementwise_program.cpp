#include "ops/fused/elementwise_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "runtime/half.h"

namespace tessera::ops::fused {

namespace {

struct OpInfo {
  EwOp op;
  const char* name;
  int arity;
};

constexpr std::array<OpInfo, 21> kOps{{
    {EwOp::kAdd, "Add", 2},   {EwOp::kSub, "Sub", 2},
    {EwOp::kMul, "Mul", 2},   {EwOp::kDiv, "Div", 2},
    {EwOp::kPow, "Pow", 2},   {EwOp::kMax, "Max", 2},
    {EwOp::kMin, "Min", 2},   {EwOp::kWhere, "Where", 3},
    {EwOp::kClip, "Clip", 3}, {EwOp::kLeakyRelu, "LeakyRelu", 2},
    {EwOp::kRelu, "Relu", 1}, {EwOp::kSigmoid, "Sigmoid", 1},
    {EwOp::kTanh, "Tanh", 1}, {EwOp::kExp, "Exp", 1},
    {EwOp::kLog, "Log", 1},   {EwOp::kNeg, "Neg", 1},
    {EwOp::kAbs, "Abs", 1},   {EwOp::kSqrt, "Sqrt", 1},
    {EwOp::kErf, "Erf", 1},   {EwOp::kReciprocal, "Reciprocal", 1},
    {EwOp::kCast, "Cast", 1},
}};

const OpInfo& info(EwOp op) {
  for (const auto& o : kOps)
    if (o.op == op) return o;
  throw ProgramError("unknown elementwise op");
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] != sep) continue;
    out.push_back(trim(s.substr(start, i - start)));
    start = i + 1;
  }
  return out;
}

// "x3" / "t12": the number after the prefix letter; false when `s` is not of that form.
bool parse_ref(std::string_view s, char prefix, int& index) {
  if (s.size() < 2 || s[0] != prefix) return false;
  auto [p, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), index);
  return ec == std::errc() && p == s.data() + s.size() && index >= 0;
}

Operand parse_operand(std::string_view s, size_t stmt, size_t input_count) {
  Operand o;
  std::string where = fmt::format("statement t{}", stmt);
  if (parse_ref(s, 'x', o.index)) {
    if (static_cast<size_t>(o.index) >= input_count)
      throw ProgramError(
          fmt::format("{} reads x{}, but the node has {} inputs", where, o.index, input_count));
    o.kind = Operand::Kind::kInput;
    return o;
  }
  if (parse_ref(s, 't', o.index)) {
    if (static_cast<size_t>(o.index) >= stmt)
      throw ProgramError(fmt::format("{} reads t{}, which is not defined before it", where, o.index));
    o.kind = Operand::Kind::kTemp;
    return o;
  }
  // A literal: from_chars reads "inf", "-inf", "nan" and decimal forms.
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), o.literal);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    throw ProgramError(fmt::format("{}: argument '{}' is neither x<i>, t<j> nor a number", where, s));
  o.kind = Operand::Kind::kLiteral;
  return o;
}

Instr parse_statement(std::string_view s, size_t stmt, size_t input_count) {
  std::string where = fmt::format("statement {} ('{}')", stmt, s);
  size_t eq = s.find('=');
  int index = -1;
  if (eq == std::string_view::npos || !parse_ref(trim(s.substr(0, eq)), 't', index) ||
      static_cast<size_t>(index) != stmt)
    throw ProgramError(fmt::format("{} must start with t{}=", where, stmt));
  std::string_view rhs = trim(s.substr(eq + 1));
  size_t open = rhs.find('('), close = rhs.rfind(')');
  if (open == std::string_view::npos || close != rhs.size() - 1 || close < open)
    throw ProgramError(fmt::format("{} is not of the form Op(args)", where));
  std::string_view name = trim(rhs.substr(0, open));
  Instr in;
  size_t lt = name.find('<');
  if (lt != std::string_view::npos) {
    if (name.back() != '>') throw ProgramError(fmt::format("{}: unclosed '<' in '{}'", where, name));
    std::string_view type = name.substr(lt + 1, name.size() - lt - 2);
    name = name.substr(0, lt);
    in.to = ir::dtype_from_name(type).value_or(ir::DataType::kUndefined);
    if (!is_program_float(in.to) || in.to == ir::DataType::kDouble)
      throw ProgramError(fmt::format("{}: Cast target '{}' is not float, float16 or bfloat16", where, type));
  }
  if (!ew_op_from_name(name, in.op)) throw ProgramError(fmt::format("{}: unknown op '{}'", where, name));
  if ((in.op == EwOp::kCast) != (in.to != ir::DataType::kUndefined))
    throw ProgramError(fmt::format("{}: only Cast names a type, and Cast must", where));
  for (std::string_view a : split(rhs.substr(open + 1, close - open - 1), ','))
    in.args.push_back(parse_operand(a, stmt, input_count));
  if (static_cast<int>(in.args.size()) != ew_arity(in.op))
    throw ProgramError(
        fmt::format("{}: {} takes {} arguments, got {}", where, name, ew_arity(in.op), in.args.size()));
  return in;
}

std::string format_literal(double v) {
  if (std::isnan(v)) return "nan";
  return fmt::format("{}", v);  // shortest form that reads back as the same double; "inf", "-inf"
}

double round_to(ir::DataType t, double v) {
  float f = static_cast<float>(v);
  if (t == ir::DataType::kFloat16) return static_cast<float>(rt::Float16(f));
  if (t == ir::DataType::kBFloat16) return static_cast<float>(rt::BFloat16(f));
  return f;
}

}  // namespace

std::string_view ew_op_name(EwOp op) {
  return info(op).name;
}
int ew_arity(EwOp op) {
  return info(op).arity;
}

bool ew_op_from_name(std::string_view name, EwOp& op) {
  for (const auto& o : kOps) {
    if (name != o.name) continue;
    op = o.op;
    return true;
  }
  return false;
}

bool is_program_float(ir::DataType t) {
  return t == ir::DataType::kFloat || t == ir::DataType::kDouble || t == ir::DataType::kFloat16 ||
         t == ir::DataType::kBFloat16;
}

Program parse_program(std::string_view text, const std::vector<int64_t>& results, size_t input_count) {
  Program p;
  std::vector<std::string_view> stmts = split(text, ';');
  if (!stmts.empty() && stmts.back().empty()) stmts.pop_back();  // a trailing ';'
  if (stmts.empty()) throw ProgramError("the program has no statements");
  for (size_t k = 0; k < stmts.size(); ++k) p.code.push_back(parse_statement(stmts[k], k, input_count));
  if (results.empty()) throw ProgramError("'results' names no statement");
  for (int64_t r : results)
    if (r < 0 || static_cast<size_t>(r) >= p.code.size())
      throw ProgramError(
          fmt::format("'results' names t{}, but the program has {} statements", r, p.code.size()));
  p.results = results;
  return p;
}

std::string format_program(const Program& p) {
  std::string out;
  for (size_t k = 0; k < p.code.size(); ++k) {
    const Instr& in = p.code[k];
    out += fmt::format("{}t{}={}", k ? ";" : "", k, ew_op_name(in.op));
    if (in.op == EwOp::kCast) out += fmt::format("<{}>", ir::dtype_name(in.to));
    out += '(';
    for (size_t a = 0; a < in.args.size(); ++a) {
      const Operand& o = in.args[a];
      if (a) out += ',';
      if (o.kind == Operand::Kind::kInput) out += fmt::format("x{}", o.index);
      if (o.kind == Operand::Kind::kTemp) out += fmt::format("t{}", o.index);
      if (o.kind == Operand::Kind::kLiteral) out += format_literal(o.literal);
    }
    out += ')';
  }
  return out;
}

std::vector<ir::DataType> statement_types(const Program& p, const std::vector<ir::DataType>& inputs) {
  std::vector<ir::DataType> t;
  for (size_t k = 0; k < p.code.size(); ++k) {
    const Instr& in = p.code[k];
    auto type_of = [&](const Operand& o) {
      if (o.kind == Operand::Kind::kInput) return inputs.at(static_cast<size_t>(o.index));
      if (o.kind == Operand::Kind::kTemp) return t[static_cast<size_t>(o.index)];
      return ir::DataType::kUndefined;  // a literal takes the type of the others
    };
    size_t first = in.op == EwOp::kWhere ? 1 : 0;
    if (in.op == EwOp::kWhere) {
      ir::DataType c = type_of(in.args[0]);
      if (c != ir::DataType::kBool && in.args[0].kind != Operand::Kind::kLiteral)
        throw ProgramError(
            fmt::format("statement t{}: Where's condition is {}, not bool", k, ir::dtype_name(c)));
    }
    ir::DataType common = ir::DataType::kUndefined;
    for (size_t a = first; a < in.args.size(); ++a) {
      ir::DataType at = type_of(in.args[a]);
      if (at == ir::DataType::kUndefined) continue;
      if (!is_program_float(at))
        throw ProgramError(
            fmt::format("statement t{}: argument {} is {}, not a float type", k, a, ir::dtype_name(at)));
      if (common != ir::DataType::kUndefined && at != common)
        throw ProgramError(fmt::format("statement t{}: arguments of types {} and {}", k,
                                       ir::dtype_name(common), ir::dtype_name(at)));
      common = at;
    }
    if (common == ir::DataType::kUndefined)
      throw ProgramError(fmt::format("statement t{}: every argument is a literal", k));
    t.push_back(in.op == EwOp::kCast ? in.to : common);
  }
  return t;
}

double eval_statement(const Instr& in, const double* a) {
  const double x = a[0];
  switch (in.op) {
    case EwOp::kAdd:
      return x + a[1];
    case EwOp::kSub:
      return x - a[1];
    case EwOp::kMul:
      return x * a[1];
    case EwOp::kDiv:
      return x / a[1];
    case EwOp::kPow:
      return std::pow(x, a[1]);
    case EwOp::kMax:
      return std::isnan(x) || std::isnan(a[1]) ? x + a[1] : std::max(x, a[1]);
    case EwOp::kMin:
      return std::isnan(x) || std::isnan(a[1]) ? x + a[1] : std::min(x, a[1]);
    case EwOp::kWhere:
      return x != 0 ? a[1] : a[2];
    case EwOp::kClip: {
      double v = x < a[1] ? a[1] : x;
      return v > a[2] ? a[2] : v;
    }
    case EwOp::kLeakyRelu:
      return x < 0 ? a[1] * x : x;
    case EwOp::kRelu:
      return x > 0 ? x : (std::isnan(x) ? x : 0.0);
    case EwOp::kSigmoid: {
      if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
      double e = std::exp(x);
      return e / (1.0 + e);
    }
    case EwOp::kTanh:
      return std::tanh(x);
    case EwOp::kExp:
      return std::exp(x);
    case EwOp::kLog:
      return std::log(x);
    case EwOp::kNeg:
      return -x;
    case EwOp::kAbs:
      return std::fabs(x);
    case EwOp::kSqrt:
      return std::sqrt(x);
    case EwOp::kErf:
      return std::erf(x);
    case EwOp::kReciprocal:
      return 1.0 / x;
    case EwOp::kCast:
      return round_to(in.to, x);
  }
  return x;
}

}  // namespace tessera::ops::fused
