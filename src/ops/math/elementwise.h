// Shape inference shared by the elementwise math, comparison and logic operators of src/ops/math:
// the limited broadcasting of opsets 1-6, the same-shape rule of the variadic ops before opset 8,
// and the type lists that several of these operators share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ops/infer.h"
#include "ops/schema.h"

namespace tessera::ops::math {

// Element type of the first of `inputs` whose type is known; kUndefined when none is.
ir::DataType first_known_elem(const InferenceContext& ctx, std::initializer_list<size_t> inputs);

// Shape of C for the limited broadcasting of opsets 1-6 (Add-1, Add-6, Pow-1, And-1, Equal-1...).
// With broadcast=0, B must have A's shape. With broadcast=1, B holds a single element or matches a
// contiguous run of A's dimensions: the trailing ones, or those from `axis` on when it is set. C has
// A's shape either way. nullopt when neither rank is known.
std::optional<ir::Shape> legacy_broadcast_shape(const InferenceContext& ctx);
void infer_legacy_broadcast(InferenceContext& ctx);          // C: A's element type
void infer_legacy_broadcast_to_bool(InferenceContext& ctx);  // C: bool (comparison and logic)

// Max, Min, Sum and Mean before opset 8 did not broadcast: every input has the one output shape.
void infer_same_shape_inputs(InferenceContext& ctx);

// Unidirectional broadcasting: input `from` must broadcast to input `to` (PRelu's slope onto X).
void require_unidirectional(const InferenceContext& ctx, size_t from, size_t to);

// A one-input elementwise operator of one version: `in` of type T gives `out` of the same type and shape.
OpSchema unary_schema(std::string name, int since, Category category, std::string doc,
                      std::vector<std::string> types, std::string in = "X", std::string out = "Y");
// A two-input elementwise operator of one version: A and B of type T give C, of type T or, with
// `bool_output`, of type T1 = bool. Inference is multidirectional broadcasting.
OpSchema binary_schema(std::string name, int since, Category category, std::string doc,
                       std::vector<std::string> types, bool bool_output = false);
// Adds the `axis` and `broadcast` attributes of opsets 1-6 and their limited broadcasting.
OpSchema with_legacy_broadcast(OpSchema s, bool bool_output = false);
// Adds the `consumed_inputs` attribute that many version-1 schemas carried (an in-place hint, now ignored).
OpSchema with_consumed_inputs(OpSchema s);

// Type lists named after the spec's wording.
extern const std::vector<std::string> kHighPrecision;      // uint32/64, int32/64, float16/float/double
extern const std::vector<std::string> kHighPrecisionBf16;  // ... + bfloat16
extern const std::vector<std::string> kAllInt;             // every signed and unsigned integer
extern const std::vector<std::string> kBool;               // tensor(bool)

}  // namespace tessera::ops::math
