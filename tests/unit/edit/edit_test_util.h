// Shared fixtures for the edit command tests: a small model with every kind of scope, deep identity
// (node ids and id counters included, which Model::operator== leaves out) and the apply/undo/redo check.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ir/commands/commands.h"

namespace tessera::ir::test {

// main: inputs x [1,4] float, cond bool; initializer w
//   add:  Add(x, w) -> a
//   relu: Relu(a) -> r
//   if:   If(cond) then_branch 'then' { ident: Identity(r) -> t } else_branch 'else' { neg: Neg(a) -> e }
//         -> y
//   multi: custom.Multi(r) branches=[ 'b0' { Sigmoid(r) -> s0 }, 'b1' { x1: Sigmoid(a) -> s1 } ] -> z
//   outputs y, z; value_info a
// function custom.Square(X) -> Y { sq: Mul(X, X) -> Y }; opsets "" 17, custom 1
Model small_model();

NodeId id_of(const Graph& g, const std::string& node_name);
const Node* node_named(const Graph& g, const std::string& node_name);  // nullptr when absent
GraphPath then_path(const Model& m);                                   // main/if.then_branch
GraphPath b1_path(const Model& m);                                     // main/multi.branches[1]

// Model equality plus node ids and each graph's next_node_id, through every nested graph.
::testing::AssertionResult identical(const Model& a, const Model& b);

// Applies c, runs check on the result, undoes (model must be identical to before), redoes (identical
// to after the first apply), and leaves the model in the applied state.
void expect_round_trip(Model& m, Command& c, const std::function<void(const Model&)>& check = {});

// Applies c expecting CommandError with exactly `message`, and the model unchanged.
void expect_refused(Model& m, Command& c, const std::string& message);

}  // namespace tessera::ir::test
