// DictVectorizer (ai.onnx.ml 1): a map becomes a dense vector over a fixed vocabulary.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/ml/ml_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::AttrType;
using ir::DataType;
using ir::Dim;
using ir::Shape;

namespace {

// The element type is the map's value type; the shape is left to the runtime, since runtimes differ
// in whether a single map yields (V) or (1, V).
void infer_dict_vectorizer(InferenceContext& ctx) {
  bool ints = ctx.has_attr("int64_vocabulary"), strings = ctx.has_attr("string_vocabulary");
  if (ints == strings) ctx.fail("exactly one of int64_vocabulary and string_vocabulary must be set");
  const ir::Type* t = ctx.input_type(0);
  if (!t || t->kind != ir::Type::Kind::kMap) return;
  if ((t->elem == DataType::kString) != strings) {
    ctx.fail(fmt::format("input map has {} keys but the vocabulary is {}", ir::dtype_name(t->elem),
                         strings ? "string_vocabulary" : "int64_vocabulary"));
  }
  if (t->inner && t->inner->kind == ir::Type::Kind::kTensor) set_output(ctx, 0, t->inner->elem, std::nullopt);
}

}  // namespace

TESSERA_REGISTER_OPS(ml_dict_vectorizer) {
  reg.add(OpSchema("DictVectorizer", 1, "ai.onnx.ml")
              .category(Category::kMachineLearning)
              .doc("Writes the values of a map into a vector indexed by a vocabulary of keys, with zeros for "
                   "vocabulary keys the map lacks.")
              .input("X", "T1")
              .output("Y", "T2")
              .types("T1",
                     {"map(int64,tensor(double))", "map(int64,tensor(float))", "map(int64,tensor(string))",
                      "map(string,tensor(double))", "map(string,tensor(float))", "map(string,tensor(int64))"})
              .types("T2", {"tensor(double)", "tensor(float)", "tensor(int64)", "tensor(string)"})
              .attr_optional("int64_vocabulary", AttrType::kInts)
              .attr_optional("string_vocabulary", AttrType::kStrings)
              .infer(infer_dict_vectorizer));
}
