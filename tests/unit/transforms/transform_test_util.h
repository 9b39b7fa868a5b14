// Shared by the transformation tests: a model with every kind of scope (If and Loop subgraphs, a
// local function) that the CPU session can run, running models, and ONNX's own checker.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ir/model.h"
#include "runtime/value.h"

namespace tessera::transforms::test {

// An empty model for a test to build: IR 8, opset "" 17, main graph "main".
ir::Model opset17_model();
// float32 of static `dims`.
ir::Type float_type(const std::vector<int64_t>& dims);

// main: x float [2,4], cond bool []
//   mm = MatMul(x, w[4,4]); add = Add(mm, Constant c[4]); softmax = Softmax(add)
//   if(cond) then { relu: Relu(softmax) } else { Mul(softmax, two) }      -> y_if
//   loop: Loop(3, true, y_if) body { acc + Constant 0.5 }                   -> loop_out
//   scale: custom.Scale(loop_out), function Y = Mul(X, Constant 2)         -> scaled
//   cast: Cast(scaled, to=float)                                            -> z (output)
// opsets "" 17, custom 1; IR 8 (what python3-onnx 1.12 checks).
ir::Model control_flow_model();

// Seeded inputs for every graph input: normal floats, true for bools. With `seed` other than 0 the
// values differ (for tests on inputs other than those a transformation saw).
std::vector<std::pair<std::string, rt::Value>> feeds_for(const ir::Model& m, unsigned seed = 1234);

// Runs the model on the CPU with no optimisation and returns every output as doubles.
std::vector<std::vector<double>> run_model(const ir::Model& m,
                                           const std::vector<std::pair<std::string, rt::Value>>& feeds);

// onnx.checker.check_model(full_check=True) of Debian's python3-onnx on the saved model; skipped (with a
// message) where /usr/bin/python3 has no onnx module.
::testing::AssertionResult onnx_checker_accepts(const ir::Model& m);
bool have_python_onnx();

// Nothing in the model (any graph) is a Cast reading another Cast's output (in its graph or an enclosing
// one), or a Cast reading a control-flow output that each body makes with a Cast.
::testing::AssertionResult no_cast_pairs(const ir::Model& m);
int count_op(const ir::Model& m, const std::string& op);  // all graphs, function bodies too

}  // namespace tessera::transforms::test
