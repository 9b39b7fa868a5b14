// Run-time values <-> the ONNX data files, and the comparison the conformance suite and the model tests
// use to decide whether an output is right.
#pragma once

#include <string>

#include "onnx/data_value.h"
#include "runtime/value.h"

namespace tessera::rt {

// `type` is the graph's declared type of the value; it types empty sequences and optionals.
Value value_from_data(const onnx::DataValue& d, const ir::Type& type = {});
onnx::DataValue value_to_data(const Value& v, const std::string& name = {});

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// Empty when `actual` matches `expected` (same kind, dtype, shape; numbers within atol + rtol*|expected|,
// NaN matching NaN, infinities equal); otherwise a message saying what differs and where:
// "element 17 of [2,3,4]: expected 0.25, got 0.2512 (and 3 more; max abs error 0.0012)".
std::string compare_values(const Value& expected, const Value& actual, const Tolerance& tol);

}  // namespace tessera::rt
