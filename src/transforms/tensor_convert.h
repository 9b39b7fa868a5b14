// Element type conversion of constant tensors (initializers, Constant values, tensor attributes).
#pragma once

#include <cstdint>

#include "ir/tensor.h"

namespace tessera::transforms {

struct ConversionStats {
  int64_t elements = 0;
  int64_t changed = 0;      // elements whose value the new type cannot hold exactly
  int64_t clamped = 0;      // finite values beyond the new type's range, set to its largest value
  int64_t underflowed = 0;  // non-zero values that became zero
  int64_t non_finite = 0;   // NaN or infinity into an integer type (become 0)
  double max_change = 0;    // largest absolute change of one element

  void merge(const ConversionStats& o);
};

// Whether convert_tensor handles `t` (bool, integer and floating point types but the 8-, 4- and 2-bit
// ones; and not strings).
bool convertible_dtype(ir::DataType t);

// `t` with its elements in type `to`: floating point values round to nearest even; values beyond a
// floating point type's range are clamped to its largest finite value (never made infinite); integers
// saturate, and floats into integers round toward zero as Cast does. Name, shape, doc string and
// metadata are kept; an external tensor stays external (its bytes are written where the model is
// saved). Throws std::invalid_argument for a type convertible_dtype refuses.
ir::Tensor convert_tensor(const ir::Tensor& t, ir::DataType to, ConversionStats* stats = nullptr);

}  // namespace tessera::transforms
