// Helpers shared by the tensor-shape operators of src/ops/tensor: the type list of each opset
// generation, shape values (the small integer tensors that Shape, Gather, Concat... carry between
// them so that a Reshape fed by a Shape chain keeps symbolic dimensions) and message formatting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/infer.h"

namespace tessera::ops::tensor {

// Every tensor type an opset generation allows: kAllTensor before 13, + bfloat16 from 13, + float8
// from 19, + int4 from 21, + float4 from 23, + float8e8m0 from 24, + int2 from 25.
const std::vector<std::string>& all_types(int opset);
// `list` without the given element names ("complex64", "string"...).
std::vector<std::string> without(const std::vector<std::string>& list,
                                 std::initializer_list<std::string_view> elems);
// Types Cast may convert between in an opset: every tensor type except complex ones (and string before 9).
std::vector<std::string> cast_types(int opset);

// Sets output `out`'s shape value when the output exists.
void set_value(InferenceContext& ctx, size_t out, std::vector<ir::Dim> value);
// The value of input i when every element is a known number (a constant or a static shape value).
std::optional<std::vector<int64_t>> static_ints(const InferenceContext& ctx, size_t i);
// The rank of tensor input i when known.
std::optional<int64_t> input_rank(const InferenceContext& ctx, size_t i);

// "[1,-1,7]": numbers as given (negative ones included), symbols by name.
std::string dims_string(const std::vector<ir::Dim>& dims);
std::string ints_string(const std::vector<int64_t>& v);

// Product of dimensions: static when all are, the symbol when one symbol times ones, else unknown.
ir::Dim dims_product(const std::vector<ir::Dim>& dims);

// Normalises each axis of `axes` against `rank` (failing on out-of-range and repeated axes).
std::vector<int64_t> normalize_axes(const InferenceContext& ctx, const std::vector<int64_t>& axes,
                                    int64_t rank, std::string_view what = "axes");

}  // namespace tessera::ops::tensor
