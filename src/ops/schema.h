// Operator schemas: what an operator takes and gives in one version of its domain's opset.
//
// A schema is built with a small fluent builder so that each op file reads like the spec table:
//
//   OpSchema("Relu", 14).category(Category::kActivation).doc("max(0, x), elementwise.")
//       .input("X", "T").output("Y", "T")
//       .types("T", kFloatTypes + kSignedIntTypes)
//       .infer(infer_same_as_input0);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"

namespace tessera::ops {

class InferenceContext;
using InferFn = std::function<void(InferenceContext&)>;

// Palette categories of the studio.
enum class Category {
  kUncategorized,
  kActivation,
  kArithmetic,  // elementwise math, comparison and logic
  kConvolution,
  kPooling,
  kNormalization,
  kLinearAlgebra,  // Gemm, MatMul, Einsum...
  kReduction,
  kTensorShape,     // reshape, transpose, concat, split, slice, gather...
  kTensorCreation,  // Constant, ConstantOfShape, Range, EyeLike, random...
  kConversion,      // Cast, quantize/dequantize
  kControlFlow,     // If, Loop, Scan
  kSequence,        // sequences and optionals
  kRecurrent,       // RNN, GRU, LSTM
  kAttention,       // attention and transformer blocks
  kImage,           // Resize, image and signal processing
  kObjectDetection,
  kLogical,
  kString,
  kMachineLearning,  // ai.onnx.ml
  kTraining,         // ai.onnx.preview.training
};
std::string_view category_name(Category c);

struct FormalParam {
  enum class Option { kSingle, kOptional, kVariadic };
  std::string name;
  std::string type;  // a type parameter ("T") or a literal type string ("tensor(int64)")
  Option option = Option::kSingle;
  bool homogeneous = true;  // variadic: all occurrences share one type
  int min_arity = 1;        // variadic: the fewest occurrences
  std::string description;
};

struct TypeConstraint {
  std::string param;                 // "T"
  std::vector<std::string> allowed;  // type strings: "tensor(float)", "seq(tensor(int64))"...
  std::string description;
  // Bit k set when "tensor(<DataType k>)" is allowed: checking a plain tensor is then one test
  // instead of string comparisons (the checker does this for every input of every node).
  uint64_t tensor_mask = 0;
};

struct AttrSchema {
  std::string name;
  ir::AttrType type = ir::AttrType::kUndefined;
  bool required = false;
  std::optional<ir::Attribute> default_value;
  std::string description;
};

class OpSchema {
 public:
  OpSchema(std::string name, int since_version, std::string domain = "");

  // Builder. Each returns *this.
  OpSchema& doc(std::string text);
  OpSchema& category(Category c);
  OpSchema& deprecated(bool d = true);
  OpSchema& input(std::string name, std::string type, std::string description = {});
  OpSchema& optional_input(std::string name, std::string type, std::string description = {});
  OpSchema& variadic_input(std::string name, std::string type, int min_arity = 1, bool homogeneous = true,
                           std::string description = {});
  OpSchema& output(std::string name, std::string type, std::string description = {});
  OpSchema& optional_output(std::string name, std::string type, std::string description = {});
  OpSchema& variadic_output(std::string name, std::string type, int min_arity = 1, bool homogeneous = true,
                            std::string description = {});
  OpSchema& types(std::string param, std::vector<std::string> allowed, std::string description = {});
  OpSchema& attr(std::string name, ir::AttrType type, std::string description = {});           // required
  OpSchema& attr_optional(std::string name, ir::AttrType type, std::string description = {});  // no default
  OpSchema& attr(std::string name, int64_t default_value, std::string description = {});
  OpSchema& attr(std::string name, float default_value, std::string description = {});
  OpSchema& attr(std::string name, const char* default_value, std::string description = {});
  OpSchema& attr(std::string name, std::vector<int64_t> default_value, std::string description = {});
  OpSchema& attr(std::string name, std::vector<float> default_value, std::string description = {});
  OpSchema& attr(std::string name, std::vector<std::string> default_value, std::string description = {});
  OpSchema& attr(ir::Attribute default_value, std::string description = {});
  OpSchema& infer(InferFn fn);
  // Number of inputs/outputs allowed, when the formal list alone does not say (rare: e.g. an op whose
  // trailing optional outputs depend on an attribute). Defaults derive from the formal parameters.
  OpSchema& input_count(int min, int max);
  OpSchema& output_count(int min, int max);

  const std::string& name() const { return name_; }
  const std::string& domain() const { return domain_; }
  int since_version() const { return since_version_; }
  bool is_deprecated() const { return deprecated_; }
  Category get_category() const { return category_; }
  const std::string& get_doc() const { return doc_; }
  const std::vector<FormalParam>& inputs() const { return inputs_; }
  const std::vector<FormalParam>& outputs() const { return outputs_; }
  const std::vector<TypeConstraint>& type_constraints() const { return types_; }
  const std::vector<AttrSchema>& attributes() const { return attrs_; }
  const AttrSchema* find_attr(std::string_view attr_name) const;
  const TypeConstraint* find_type_param(std::string_view param) const;
  const InferFn& infer_fn() const { return infer_; }
  int min_inputs() const { return min_inputs_; }
  int max_inputs() const { return max_inputs_; }  // INT32_MAX for variadic
  int min_outputs() const { return min_outputs_; }
  int max_outputs() const { return max_outputs_; }
  // Formal parameter of the i-th actual input/output (variadic parameters absorb the tail).
  const FormalParam* input_param(size_t i) const;
  const FormalParam* output_param(size_t i) const;

 private:
  void recount();

  std::string name_;
  std::string domain_;
  int since_version_;
  bool deprecated_ = false;
  Category category_ = Category::kUncategorized;
  std::string doc_;
  std::vector<FormalParam> inputs_, outputs_;
  std::vector<TypeConstraint> types_;
  std::vector<AttrSchema> attrs_;
  InferFn infer_;
  int min_inputs_ = 0, max_inputs_ = 0, min_outputs_ = 0, max_outputs_ = 0;
  bool counts_fixed_in_ = false, counts_fixed_out_ = false;
};

// Type lists for constraints, spelled as in the spec.
namespace types {
std::vector<std::string> tensors(
    std::initializer_list<std::string_view> elems);  // {"float"} -> tensor(float)
extern const std::vector<std::string> kFloat;        // float16, float, double
extern const std::vector<std::string> kFloatBf16;    // + bfloat16
extern const std::vector<std::string> kSignedInt;    // int8..int64
extern const std::vector<std::string> kUnsignedInt;  // uint8..uint64
extern const std::vector<std::string> kNumeric;      // ints, uints, float16/32/64 (no bfloat16)
extern const std::vector<std::string> kNumericBf16;  // kNumeric + bfloat16
extern const std::vector<std::string> kAllTensor;    // every tensor type of opset 13 (+string, bool, complex)
extern const std::vector<std::string> kAllTensorIr4;   // ... opsets 13-18: + bfloat16
extern const std::vector<std::string> kAllTensorIr9;   // ... opset 19+: + float8 types
extern const std::vector<std::string> kAllTensorIr10;  // ... opset 21+: + int4/uint4
extern const std::vector<std::string> kAllTensorIr11;  // ... opset 23+: + float4e2m1
extern const std::vector<std::string> kAllTensorIr12;  // ... opset 24+: + float8e8m0
extern const std::vector<std::string> kAllTensorIr13;  // ... opset 25+: + int2/uint2
std::vector<std::string> concat(std::vector<std::vector<std::string>> lists);
}  // namespace types

}  // namespace tessera::ops
