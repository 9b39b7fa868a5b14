#include "ops/schema.h"

#include <climits>

namespace tessera::ops {

std::string_view category_name(Category c) {
  switch (c) {
    case Category::kUncategorized:
      return "Uncategorized";
    case Category::kActivation:
      return "Activation";
    case Category::kArithmetic:
      return "Arithmetic";
    case Category::kConvolution:
      return "Convolution";
    case Category::kPooling:
      return "Pooling";
    case Category::kNormalization:
      return "Normalization";
    case Category::kLinearAlgebra:
      return "Linear algebra";
    case Category::kReduction:
      return "Reduction";
    case Category::kTensorShape:
      return "Tensor shape";
    case Category::kTensorCreation:
      return "Tensor creation";
    case Category::kConversion:
      return "Conversion";
    case Category::kControlFlow:
      return "Control flow";
    case Category::kSequence:
      return "Sequence";
    case Category::kRecurrent:
      return "Recurrent";
    case Category::kAttention:
      return "Attention";
    case Category::kImage:
      return "Image and signal";
    case Category::kObjectDetection:
      return "Object detection";
    case Category::kLogical:
      return "Logical";
    case Category::kString:
      return "String";
    case Category::kMachineLearning:
      return "Machine learning";
    case Category::kTraining:
      return "Training";
  }
  return "Uncategorized";
}

OpSchema::OpSchema(std::string name, int since_version, std::string domain)
    : name_(std::move(name)), domain_(std::move(domain)), since_version_(since_version) {}

OpSchema& OpSchema::doc(std::string text) {
  doc_ = std::move(text);
  return *this;
}
OpSchema& OpSchema::category(Category c) {
  category_ = c;
  return *this;
}
OpSchema& OpSchema::deprecated(bool d) {
  deprecated_ = d;
  return *this;
}

namespace {
FormalParam param(std::string name, std::string type, FormalParam::Option opt, int min_arity,
                  bool homogeneous, std::string description) {
  FormalParam p;
  p.name = std::move(name);
  p.type = std::move(type);
  p.option = opt;
  p.min_arity = min_arity;
  p.homogeneous = homogeneous;
  p.description = std::move(description);
  return p;
}
}  // namespace

OpSchema& OpSchema::input(std::string name, std::string type, std::string description) {
  inputs_.push_back(
      param(std::move(name), std::move(type), FormalParam::Option::kSingle, 1, true, std::move(description)));
  recount();
  return *this;
}
OpSchema& OpSchema::optional_input(std::string name, std::string type, std::string description) {
  inputs_.push_back(param(std::move(name), std::move(type), FormalParam::Option::kOptional, 0, true,
                          std::move(description)));
  recount();
  return *this;
}
OpSchema& OpSchema::variadic_input(std::string name, std::string type, int min_arity, bool homogeneous,
                                   std::string description) {
  inputs_.push_back(param(std::move(name), std::move(type), FormalParam::Option::kVariadic, min_arity,
                          homogeneous, std::move(description)));
  recount();
  return *this;
}
OpSchema& OpSchema::output(std::string name, std::string type, std::string description) {
  outputs_.push_back(
      param(std::move(name), std::move(type), FormalParam::Option::kSingle, 1, true, std::move(description)));
  recount();
  return *this;
}
OpSchema& OpSchema::optional_output(std::string name, std::string type, std::string description) {
  outputs_.push_back(param(std::move(name), std::move(type), FormalParam::Option::kOptional, 0, true,
                           std::move(description)));
  recount();
  return *this;
}
OpSchema& OpSchema::variadic_output(std::string name, std::string type, int min_arity, bool homogeneous,
                                    std::string description) {
  outputs_.push_back(param(std::move(name), std::move(type), FormalParam::Option::kVariadic, min_arity,
                           homogeneous, std::move(description)));
  recount();
  return *this;
}

OpSchema& OpSchema::types(std::string p, std::vector<std::string> allowed, std::string description) {
  uint64_t mask = 0;
  for (const std::string& a : allowed) {
    if (a.rfind("tensor(", 0) != 0 || a.back() != ')') continue;
    if (auto t = ir::dtype_from_name(std::string_view(a).substr(7, a.size() - 8))) {
      mask |= uint64_t{1} << static_cast<int>(*t);
    }
  }
  types_.push_back({std::move(p), std::move(allowed), std::move(description), mask});
  return *this;
}

OpSchema& OpSchema::attr(std::string name, ir::AttrType type, std::string description) {
  attrs_.push_back({std::move(name), type, true, std::nullopt, std::move(description)});
  return *this;
}
OpSchema& OpSchema::attr_optional(std::string name, ir::AttrType type, std::string description) {
  attrs_.push_back({std::move(name), type, false, std::nullopt, std::move(description)});
  return *this;
}
OpSchema& OpSchema::attr(ir::Attribute default_value, std::string description) {
  std::string name = default_value.name;
  ir::AttrType type = default_value.type;
  attrs_.push_back({std::move(name), type, false, std::move(default_value), std::move(description)});
  return *this;
}
OpSchema& OpSchema::attr(std::string name, int64_t v, std::string description) {
  return attr(ir::Attribute::of_int(std::move(name), v), std::move(description));
}
OpSchema& OpSchema::attr(std::string name, float v, std::string description) {
  return attr(ir::Attribute::of_float(std::move(name), v), std::move(description));
}
OpSchema& OpSchema::attr(std::string name, const char* v, std::string description) {
  return attr(ir::Attribute::of_string(std::move(name), v), std::move(description));
}
OpSchema& OpSchema::attr(std::string name, std::vector<int64_t> v, std::string description) {
  return attr(ir::Attribute::of_ints(std::move(name), std::move(v)), std::move(description));
}
OpSchema& OpSchema::attr(std::string name, std::vector<float> v, std::string description) {
  return attr(ir::Attribute::of_floats(std::move(name), std::move(v)), std::move(description));
}
OpSchema& OpSchema::attr(std::string name, std::vector<std::string> v, std::string description) {
  return attr(ir::Attribute::of_strings(std::move(name), std::move(v)), std::move(description));
}

OpSchema& OpSchema::infer(InferFn fn) {
  infer_ = std::move(fn);
  return *this;
}

OpSchema& OpSchema::input_count(int min, int max) {
  min_inputs_ = min;
  max_inputs_ = max;
  counts_fixed_in_ = true;
  return *this;
}
OpSchema& OpSchema::output_count(int min, int max) {
  min_outputs_ = min;
  max_outputs_ = max;
  counts_fixed_out_ = true;
  return *this;
}

namespace {
// Fewest actual parameters: everything up to the last mandatory one (optional ones before it must be
// given, possibly as ""), plus the variadic minimum.
void count_params(const std::vector<FormalParam>& ps, int& min, int& max) {
  min = 0;
  max = 0;
  for (size_t i = 0; i < ps.size(); ++i) {
    const FormalParam& p = ps[i];
    if (p.option == FormalParam::Option::kVariadic) {
      min = static_cast<int>(i) + p.min_arity;
      max = INT_MAX;
      return;
    }
    ++max;
    if (p.option == FormalParam::Option::kSingle) min = static_cast<int>(i) + 1;
  }
}
}  // namespace

void OpSchema::recount() {
  if (!counts_fixed_in_) count_params(inputs_, min_inputs_, max_inputs_);
  if (!counts_fixed_out_) count_params(outputs_, min_outputs_, max_outputs_);
}

const AttrSchema* OpSchema::find_attr(std::string_view attr_name) const {
  for (const AttrSchema& a : attrs_) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

const TypeConstraint* OpSchema::find_type_param(std::string_view p) const {
  for (const TypeConstraint& t : types_) {
    if (t.param == p) return &t;
  }
  return nullptr;
}

namespace {
const FormalParam* param_at(const std::vector<FormalParam>& ps, size_t i) {
  if (ps.empty()) return nullptr;
  if (i < ps.size()) return &ps[i];
  return ps.back().option == FormalParam::Option::kVariadic ? &ps.back() : nullptr;
}
}  // namespace

const FormalParam* OpSchema::input_param(size_t i) const {
  return param_at(inputs_, i);
}
const FormalParam* OpSchema::output_param(size_t i) const {
  return param_at(outputs_, i);
}

namespace types {

std::vector<std::string> tensors(std::initializer_list<std::string_view> elems) {
  std::vector<std::string> out;
  for (auto e : elems) out.push_back("tensor(" + std::string(e) + ")");
  return out;
}

std::vector<std::string> concat(std::vector<std::vector<std::string>> lists) {
  std::vector<std::string> out;
  for (auto& l : lists) out.insert(out.end(), l.begin(), l.end());
  return out;
}

const std::vector<std::string> kFloat = tensors({"float16", "float", "double"});
const std::vector<std::string> kFloatBf16 = tensors({"float16", "float", "double", "bfloat16"});
const std::vector<std::string> kSignedInt = tensors({"int8", "int16", "int32", "int64"});
const std::vector<std::string> kUnsignedInt = tensors({"uint8", "uint16", "uint32", "uint64"});
const std::vector<std::string> kNumeric = concat({kUnsignedInt, kSignedInt, kFloat});
const std::vector<std::string> kNumericBf16 = concat({kNumeric, tensors({"bfloat16"})});
const std::vector<std::string> kAllTensor =
    concat({kUnsignedInt, kSignedInt, kFloat, tensors({"string", "bool", "complex64", "complex128"})});
const std::vector<std::string> kAllTensorIr4 = concat({kAllTensor, tensors({"bfloat16"})});
const std::vector<std::string> kAllTensorIr9 =
    concat({kAllTensorIr4, tensors({"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"})});
const std::vector<std::string> kAllTensorIr10 = concat({kAllTensorIr9, tensors({"uint4", "int4"})});
const std::vector<std::string> kAllTensorIr11 = concat({kAllTensorIr10, tensors({"float4e2m1"})});
const std::vector<std::string> kAllTensorIr12 = concat({kAllTensorIr11, tensors({"float8e8m0"})});
const std::vector<std::string> kAllTensorIr13 = concat({kAllTensorIr12, tensors({"uint2", "int2"})});

}  // namespace types
}  // namespace tessera::ops
