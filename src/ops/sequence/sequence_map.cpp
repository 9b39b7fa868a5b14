// SequenceMap: runs a body graph once per position of the input sequences and collects each output
// into a sequence.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/container_types.h"
#include "ops/sequence/sequence_util.h"

using namespace tessera::ops;
using tessera::ir::Type;

namespace {

void infer_sequence_map(InferenceContext& ctx) {
  const tessera::ir::Attribute* body_attr = ctx.attr("body");
  if (!body_attr || body_attr->graphs.empty()) return;  // the checker reports the missing attribute
  const tessera::ir::Graph& body = *body_attr->graphs[0];
  if (body.inputs.size() != ctx.num_inputs()) {
    ctx.fail(fmt::format("the body takes {} inputs but the node gives {}: one per input sequence or tensor",
                         body.inputs.size(), ctx.num_inputs()));
  }
  if (body.outputs.size() != ctx.num_outputs()) {
    ctx.fail(fmt::format("the body has {} outputs but the node has {}: one output sequence per body output",
                         body.outputs.size(), ctx.num_outputs()));
  }
  // Sequences are iterated, so the body sees one element; tensors are given whole to every iteration.
  std::vector<Type> body_inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Type* t = ctx.input_type(i);
    if (i == 0 && t && !t->is_none() && t->kind != Type::Kind::kSequence) {
      ctx.fail_input(0, fmt::format("input 'input_sequence' must be a sequence, got {}", t->type_string()));
    }
    if (!t) {
      body_inputs.emplace_back();
    } else if (t->kind == Type::Kind::kSequence) {
      body_inputs.push_back(t->inner ? *t->inner : Type());
    } else {
      body_inputs.push_back(*t);
    }
  }
  std::vector<Type> outs = ctx.infer_subgraph(body, body_inputs);
  for (size_t i = 0; i < outs.size() && i < ctx.num_outputs(); ++i) {
    if (outs[i].is_none() || !ctx.has_output(i)) continue;
    if (!outs[i].is_tensor()) {
      ctx.fail(fmt::format("body output {} must be a tensor to be collected into a sequence, got {}", i,
                           outs[i].type_string()));
    }
    ctx.set_output_type(i, Type::sequence(outs[i]));
  }
}

}  // namespace

TESSERA_REGISTER_OPS(sequence_sequence_map) {
  reg.add(
      OpSchema("SequenceMap", 17)
          .category(Category::kSequence)
          .doc("Applies the 'body' graph to each position of the input sequences (extra tensor inputs are "
               "passed whole) and returns one sequence per body output.")
          .input("input_sequence", "S")
          .variadic_input("additional_inputs", "V", 0, false)
          .variadic_output("out_sequence", "S", 1, false)
          .types("S", sequence_types())
          .types("V", tensor_and_seq(types::kAllTensor))
          .attr("body", tessera::ir::AttrType::kGraph)
          .infer(infer_sequence_map));
}
