// Scan: iterates a body graph over slices of its scan inputs, threading state variables through the
// iterations and stacking per-iteration scan outputs.
//
// Opset 8 has a leading batch axis on every input and output and an optional sequence_lens input;
// opset 9 dropped both and made the scanned axis and direction configurable per input and output.
#include <fmt/format.h>

#include "ops/control/control_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/container_types.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;
using tessera::ir::Type;

namespace {

struct ScanLayout {
  size_t first;   // index of the first state input (1 in opset 8, after sequence_lens)
  size_t states;  // N
  size_t scans;   // M
};

ScanLayout scan_layout(const InferenceContext& ctx, const tessera::ir::Graph& body) {
  size_t first = ctx.schema().since_version() == 8 ? 1 : 0;
  size_t given = ctx.num_inputs() > first ? ctx.num_inputs() - first : 0;
  int64_t m = ctx.attr_int("num_scan_inputs", -1);
  if (m < 1 || static_cast<size_t>(m) > given) {
    ctx.fail(fmt::format("num_scan_inputs is {} but must be between 1 and the {} state and scan inputs given",
                         m, given));
  }
  ScanLayout l{first, given - static_cast<size_t>(m), static_cast<size_t>(m)};
  if (body.inputs.size() != given) {
    ctx.fail(fmt::format("the body takes {} inputs but must take {}: {} state values and {} scan slices",
                         body.inputs.size(), given, l.states, l.scans));
  }
  if (body.outputs.size() != ctx.num_outputs() || ctx.num_outputs() < l.states) {
    ctx.fail(
        fmt::format("the node has {} outputs but the body gives {}; both must be the {} states then the scan "
                    "outputs",
                    ctx.num_outputs(), body.outputs.size(), l.states));
  }
  return l;
}

// Attribute `name` as a list of `count` values, defaulting to zeros; fails when given with another length.
std::vector<int64_t> per_value_attr(const InferenceContext& ctx, std::string_view name, size_t count) {
  std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(count, 0));
  if (v.size() != count) {
    ctx.fail(fmt::format("attribute '{}' has {} values but there are {} scan {}", name, v.size(), count,
                         name.find("input") != std::string_view::npos ? "inputs" : "values"));
  }
  return v;
}

// The type `t` with dimension `axis` removed; unknown rank stays unknown.
Type drop_axis(const Type& t, size_t axis) {
  Type out = t;
  if (out.shape && axis < out.shape->size()) {
    out.shape->erase(out.shape->begin() + static_cast<ptrdiff_t>(axis));
  }
  return out;
}

// The final value of state i: the body's output for it, which must keep the initial value's element
// type and shape (a state cannot change shape across iterations).
Type final_state(const InferenceContext& ctx, const ScanLayout& l, const tessera::ir::Graph& body, size_t i,
                 Type out) {
  const Type* init = ctx.input_type(l.first + i);
  if (!init || !init->is_tensor()) return out;
  std::string what = fmt::format("state {} (input '{}', body output '{}')", i, ctx.node().inputs[l.first + i],
                                 body.outputs[i].name);
  if (init->elem != out.elem && init->elem != tessera::ir::DataType::kUndefined &&
      out.elem != tessera::ir::DataType::kUndefined) {
    ctx.fail(
        fmt::format("{}: element type changes from {} to {}", what, init->type_string(), out.type_string()));
  }
  if (!init->shape) return out;
  if (!out.shape) {
    out.shape = init->shape;
    return out;
  }
  if (out.shape->size() != init->shape->size()) {
    ctx.fail(fmt::format("{}: shape changes from {} to {}", what, tessera::ir::shape_to_string(*init->shape),
                         tessera::ir::shape_to_string(*out.shape)));
  }
  for (size_t k = 0; k < out.shape->size(); ++k) {
    (*out.shape)[k] =
        unify_dims(ctx, (*init->shape)[k], (*out.shape)[k], fmt::format("{}: dimension {}", what, k));
  }
  return out;
}

void infer_scan(InferenceContext& ctx) {
  const tessera::ir::Graph* body = graph_attr(ctx, "body");
  if (!body) return;
  ScanLayout l = scan_layout(ctx, *body);
  bool batched = l.first == 1;  // opset 8
  size_t scan_outs = ctx.num_outputs() - l.states;
  std::vector<int64_t> in_axes =
      batched ? std::vector<int64_t>(l.scans, 1) : per_value_attr(ctx, "scan_input_axes", l.scans);
  std::vector<int64_t> out_axes =
      batched ? std::vector<int64_t>(scan_outs, 0) : per_value_attr(ctx, "scan_output_axes", scan_outs);
  if (batched) {
    per_value_attr(ctx, "directions", l.scans);
  } else {
    per_value_attr(ctx, "scan_input_directions", l.scans);
    per_value_attr(ctx, "scan_output_directions", scan_outs);
  }

  Dim batch = Dim::unknown(), seq_len = Dim::unknown();
  std::vector<Type> body_inputs;
  for (size_t i = 0; i < l.states + l.scans; ++i) {
    size_t in = l.first + i;
    const Type* t = ctx.input_type(in);
    if (!t || t->is_none()) {
      body_inputs.emplace_back();
      continue;
    }
    if (!t->is_tensor()) {
      ctx.fail_input(in, fmt::format("input {} must be a tensor, got {}", in, t->type_string()));
    }
    Type slice = *t;
    if (batched && t->shape) {
      if (t->shape->empty()) {
        ctx.fail_input(in, fmt::format("input {} needs a leading batch axis but is a scalar", in));
      }
      batch = unify_dims(ctx, batch, (*t->shape)[0], fmt::format("batch size of input {}", in));
      slice = drop_axis(slice, 0);
    }
    if (i >= l.states && t->shape) {
      auto rank = static_cast<int64_t>(t->shape->size());
      if (batched && rank < 2) {
        ctx.fail_input(in, fmt::format("scan input {} needs [batch, sequence, ...] axes", in));
      }
      int64_t axis = normalize_axis(ctx, in_axes[i - l.states], rank, "scan_input_axes");
      seq_len =
          unify_dims(ctx, seq_len, (*t->shape)[axis], fmt::format("sequence length of scan input {}", in));
      slice = drop_axis(*t, static_cast<size_t>(axis));
      if (batched) slice = drop_axis(slice, 0);
    }
    body_inputs.push_back(std::move(slice));
  }
  std::vector<Type> outs = ctx.infer_subgraph(*body, body_inputs);
  outs.resize(body->outputs.size());

  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const Type& t = outs[i];
    if (t.is_none() || !ctx.has_output(i)) continue;
    if (!t.is_tensor()) ctx.fail(fmt::format("body output {} must be a tensor, got {}", i, t.type_string()));
    Type out = t;
    if (i >= l.states && out.shape) {
      // Each iteration contributes one slice along the scan output's axis.
      auto rank = static_cast<int64_t>(out.shape->size()) + 1;
      int64_t axis = normalize_axis(ctx, out_axes[i - l.states], rank, "scan_output_axes");
      out.shape->insert(out.shape->begin() + axis, seq_len);
    }
    if (batched && out.shape) out.shape->insert(out.shape->begin(), batch);
    if (i < l.states) out = final_state(ctx, l, *body, i, std::move(out));
    ctx.set_output_type(i, std::move(out));
  }
}

}  // namespace

TESSERA_REGISTER_OPS(control_scan) {
  const char* doc =
      "Iterates 'body' over slices of the scan inputs along their scan axes, carrying state values from one "
      "iteration to the next and stacking the per-iteration scan outputs.";
  reg.add(OpSchema("Scan", 8)
              .category(Category::kControlFlow)
              .doc(doc)
              .optional_input("sequence_lens", "I")
              .variadic_input("initial_state_and_scan_inputs", "V", 1, false)
              .variadic_output("final_state_and_scan_outputs", "V", 1, false)
              .types("I", {"tensor(int64)"})
              .types("V", types::kAllTensor)
              .attr("body", tessera::ir::AttrType::kGraph)
              .attr("num_scan_inputs", tessera::ir::AttrType::kInt)
              .attr_optional("directions", tessera::ir::AttrType::kInts)
              .infer(infer_scan));
  for (auto [version, values] :
       {std::pair{9, types::kAllTensor}, std::pair{11, types::kAllTensor},
        std::pair{16, types::kAllTensorIr4}, std::pair{19, types::kAllTensorIr9},
        std::pair{21, types::kAllTensorIr10}, std::pair{23, types::kAllTensorIr11},
        std::pair{24, types::kAllTensorIr12}, std::pair{25, types::kAllTensorIr13}}) {
    reg.add(OpSchema("Scan", version)
                .category(Category::kControlFlow)
                .doc(doc)
                .variadic_input("initial_state_and_scan_inputs", "V", 1, false)
                .variadic_output("final_state_and_scan_outputs", "V", 1, false)
                .types("V", values)
                .attr("body", tessera::ir::AttrType::kGraph)
                .attr("num_scan_inputs", tessera::ir::AttrType::kInt)
                .attr_optional("scan_input_axes", tessera::ir::AttrType::kInts)
                .attr_optional("scan_input_directions", tessera::ir::AttrType::kInts)
                .attr_optional("scan_output_axes", tessera::ir::AttrType::kInts)
                .attr_optional("scan_output_directions", tessera::ir::AttrType::kInts)
                .infer(infer_scan));
  }
}
