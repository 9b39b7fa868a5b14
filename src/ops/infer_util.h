// Helpers shared by the shape-inference functions of many operators.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ops/infer.h"

namespace tessera::ops {

// Shape of input i when its rank is known; nullptr otherwise.
const ir::Shape* input_shape(const InferenceContext& ctx, size_t i);
// Element type of tensor input i; kUndefined when unknown.
ir::DataType input_elem(const InferenceContext& ctx, size_t i);
// Fails unless input i, when its rank is known, has exactly `rank` dimensions.
void require_rank(const InferenceContext& ctx, size_t i, size_t rank, std::string_view what = {});

void set_output(InferenceContext& ctx, size_t out, ir::DataType elem, std::optional<ir::Shape> shape);
// Output `out` gets input `in`'s element type and shape (whole type, any kind).
void propagate_type(InferenceContext& ctx, size_t in, size_t out);
void propagate_elem(InferenceContext& ctx, size_t in, size_t out, std::optional<ir::Shape> shape);

// Multidirectional (numpy) broadcasting of the shapes of the given inputs. nullopt when a rank is
// unknown. Fails with e.g. "inputs 0 [2,3] and 1 [4] cannot be broadcast: dimension 1 is 3 vs 4".
std::optional<ir::Shape> broadcast_inputs(const InferenceContext& ctx, const std::vector<size_t>& inputs);
std::optional<ir::Shape> broadcast_shapes(const InferenceContext& ctx, const ir::Shape& a,
                                          const ir::Shape& b);

// Normalises an axis in [-rank, rank) to [0, rank); fails naming the attribute when out of range.
int64_t normalize_axis(const InferenceContext& ctx, int64_t axis, int64_t rank,
                       std::string_view attr = "axis");

// The value of constant input i as integers (from an int32/int64 initializer or Constant).
std::optional<std::vector<int64_t>> constant_ints(const InferenceContext& ctx, size_t i);
// The value of input i as dimensions: the constant, or the propagated shape value (may be symbolic).
std::optional<std::vector<ir::Dim>> shape_value(const InferenceContext& ctx, size_t i);

// Overflow-checked int64 arithmetic for sizes computed from shapes and attributes of untrusted models;
// nullopt on overflow (a hostile file must get an "unknown" or an error, never undefined behaviour).
std::optional<int64_t> checked_add(int64_t a, int64_t b);
std::optional<int64_t> checked_sub(int64_t a, int64_t b);
std::optional<int64_t> checked_mul(int64_t a, int64_t b);

// Dimension arithmetic; unknown when an operand is not static (symbols are kept for identity only).
ir::Dim dim_mul(const ir::Dim& a, const ir::Dim& b);
ir::Dim dim_add(const ir::Dim& a, const ir::Dim& b);
ir::Dim dim_sub(const ir::Dim& a, const ir::Dim& b);
// Checks that two dimensions can be the same size; returns the more specific one.
ir::Dim unify_dims(const InferenceContext& ctx, const ir::Dim& a, const ir::Dim& b, std::string_view what);

// Common inference functions.
void infer_same_as_input0(InferenceContext& ctx);     // Y has X's type and shape
void infer_broadcast(InferenceContext& ctx);          // elementwise over all inputs, type of input 0
void infer_broadcast_to_bool(InferenceContext& ctx);  // comparison: broadcast shape, bool

// Spatial output size of a convolution or pooling window along one axis.
// Returns unknown when the input size is not static.
ir::Dim conv_output_dim(const ir::Dim& in, int64_t kernel, int64_t stride, int64_t dilation,
                        int64_t pad_begin, int64_t pad_end, bool ceil_mode = false);

}  // namespace tessera::ops
