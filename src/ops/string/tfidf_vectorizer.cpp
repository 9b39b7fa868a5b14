// TfIdfVectorizer: counts n-grams of a pool in each row of tokens, weighted as TF, IDF or TF-IDF.
#include <fmt/format.h>

#include <algorithm>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::DataType;
using tessera::ir::Dim;

namespace {

void check_attrs(const InferenceContext& ctx) {
  std::string mode = ctx.attr_string("mode");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") {
    ctx.fail(fmt::format("attribute 'mode' is '{}'; it must be TF, IDF or TFIDF", mode));
  }
  int64_t lo = ctx.attr_int("min_gram_length"), hi = ctx.attr_int("max_gram_length");
  if (lo < 1 || hi < lo) {
    ctx.fail(
        fmt::format("n-gram lengths must satisfy 1 <= min_gram_length ({}) <= max_gram_length ({})", lo, hi));
  }
  if (ctx.attr_int("max_skip_count") < 0) ctx.fail("attribute 'max_skip_count' must not be negative");
  bool ints = ctx.has_attr("pool_int64s"), strings = ctx.has_attr("pool_strings");
  if (ints == strings) ctx.fail("exactly one of attributes 'pool_int64s' and 'pool_strings' must be given");
  DataType in = input_elem(ctx, 0);
  if (in != DataType::kUndefined && strings != (in == DataType::kString)) {
    ctx.fail_input(0, fmt::format("X is {} but the pool is {}; they must both be strings or both integers",
                                  tessera::ir::dtype_name(in), strings ? "pool_strings" : "pool_int64s"));
  }
  size_t n = ctx.attr_ints("ngram_indexes").size();
  if (ctx.has_attr("weights") && ctx.attr_floats("weights").size() != n) {
    ctx.fail(fmt::format("attribute 'weights' has {} values but 'ngram_indexes' has {}",
                         ctx.attr_floats("weights").size(), n));
  }
}

// [C] -> [V] and [N, C] -> [N, V], V being one more than the largest output index.
void infer_tfidf(InferenceContext& ctx) {
  check_attrs(ctx);
  auto indexes = ctx.attr_ints("ngram_indexes");
  Dim width = Dim::unknown();
  if (!indexes.empty()) {
    int64_t lo = *std::min_element(indexes.begin(), indexes.end());
    if (lo < 0) ctx.fail(fmt::format("attribute 'ngram_indexes' has a negative index {}", lo));
    width = Dim::of(*std::max_element(indexes.begin(), indexes.end()) + 1);
  }
  const auto* x = input_shape(ctx, 0);
  if (!x) return set_output(ctx, 0, DataType::kFloat, std::nullopt);
  if (x->size() == 1) return set_output(ctx, 0, DataType::kFloat, tessera::ir::Shape{width});
  if (x->size() == 2) return set_output(ctx, 0, DataType::kFloat, tessera::ir::Shape{(*x)[0], width});
  ctx.fail_input(0, fmt::format("X must be [C] or [N, C], got {}", tessera::ir::shape_to_string(*x)));
}

}  // namespace

TESSERA_REGISTER_OPS(string_tfidf_vectorizer) {
  reg.add(
      OpSchema("TfIdfVectorizer", 9)
          .category(Category::kString)
          .doc("Turns each row of tokens into a vector of n-gram counts over a fixed pool of n-grams (with "
               "skips allowed), weighted as term frequency, inverse document frequency or both.")
          .input("X", "T")
          .output("Y", "T1")
          .attr("max_gram_length", AttrType::kInt)
          .attr("max_skip_count", AttrType::kInt)
          .attr("min_gram_length", AttrType::kInt)
          .attr("mode", AttrType::kString)
          .attr("ngram_counts", AttrType::kInts)
          .attr("ngram_indexes", AttrType::kInts)
          .attr_optional("pool_int64s", AttrType::kInts)
          .attr_optional("pool_strings", AttrType::kStrings)
          .attr_optional("weights", AttrType::kFloats)
          .types("T", types::tensors({"string", "int32", "int64"}))
          .types("T1", types::tensors({"float"}))
          .infer(infer_tfidf));
}
