// The sweep shared by the layout level's chain passes (to_blocked_layout in layout_blocked.cpp for the
// CPU, to_nhwc_layout in layout_nhwc.cpp for the GPU): chains of 2-D convolutions, pooling and the ops
// between them move from NCHW to another activation layout, each NCHW value to a "twin" in that layout.
//
// ChainLayout walks the graph once in order and owns what both layouts do alike: the twin map, fresh
// names, reordering a value into the layout once, moving a residual Add into the convolution before it
// as Z and an activation into it, unary elementwise ops and pooling on twins, and at the end reordering
// every NCHW value still read back out of its twin. A layout is a subclass (the strategy): it says which
// ops a chain may contain (accepts_unary, binary, rewrite_other), how a convolution and its weights are
// rewritten (conv), which nodes convert between the layouts (to_layout_node, from_layout_node) and
// whether the target can run a node it makes (runnable).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/model.h"
#include "passes/graph_util.h"
#include "passes/pipeline.h"

namespace tessera::passes {

// The node's string attribute, or "" when absent.
std::string attr_string(const ir::Node& n, std::string_view name);
// Records that `into` now also stands for `gone` in its kFusedFromKey list (the profiler reports both).
void absorb_fused(ir::Node& into, const ir::Node& gone);
// The ONNX nodes a node stands for: its kFusedFromKey list, else its name (or op type).
std::string fused_names(const ir::Node& n);

// What a layout is called in the graph.
struct ChainLayoutNames {
  std::string pass;       // logged for every node moved ("to_blocked_layout")
  std::string tag;        // twin names are <value>_<tag>, reorders <value>_to_<tag> / <value>_from_<tag>
  std::string op_prefix;  // the layout's ops: <prefix>MaxPool, <prefix>AveragePool
  std::string domain;     // of those ops
};

// An NCHW value's twin in the layout.
struct LayoutTwin {
  std::string name;
  int64_t channels = 0;
  std::optional<size_t> conv;  // index in out_ of the layout's convolution producing it, if one does
  bool plain_exists = false;   // the NCHW value is still produced (a reorder into the layout reads it)
};

class ChainLayout {
 public:
  virtual ~ChainLayout() = default;
  // Rewrites the graph; returns whether anything moved to the layout.
  bool run(std::vector<Rewrite>& log);

 protected:
  ChainLayout(RuleContext& ctx, ChainLayoutNames names)
      : ctx_(ctx), g_(ctx.graph), names_(std::move(names)) {}

  // --- The layout's strategy.
  // A Conv / FusedConv (one output) to the layout's convolution; false leaves it as it is.
  virtual bool conv(const ir::Node& n) = 0;
  // Whether a binary op of the default domain may run on twins; binary() then rewrites it (after an Add
  // that did not move into a convolution).
  virtual bool accepts_binary(const ir::Node& n) const = 0;
  virtual bool binary(const ir::Node& n) = 0;
  // Whether a unary op may run elementwise on a twin (or move into the convolution before it).
  virtual bool accepts_unary(const ir::Node& n) const = 0;
  // Ops only this layout moves (Concat, ReduceMean...); false leaves the node as it is.
  virtual bool rewrite_other(const ir::Node&) { return false; }
  // The op (type, domain, attributes) that reorders an NCHW value into the layout, and one that reorders
  // the twin `v` back out.
  virtual ir::Node to_layout_node() const = 0;
  virtual ir::Node from_layout_node(const LayoutTwin& v) const = 0;
  // Whether the target can run a node the pass made.
  virtual bool runnable(const ir::Node&) const { return true; }

  // --- Shared pieces the strategies build on.
  // Whether a value is read only by node `reader` (directly) and is not a graph output.
  bool read_only_by(const std::string& value, const ir::Node& reader) const;
  // A rank-4 shape whose every dimension is a number or a symbol (one symbol is one size, so two such
  // shapes compare exactly).
  std::optional<ir::Shape> shape4(const std::string& v) const;
  // Both inputs twins of one static shape.
  bool same_twin_shapes(const ir::Node& n) const;
  // The twin of `x`, or a reorder of x into the layout (made once) whose output becomes its twin.
  std::string reorder_in(const std::string& x, int64_t channels);
  // Adds `e`, which reads twins, writing the twin of `plain_out`.
  void emit_elementwise(ir::Node e, const std::string& plain_out, int64_t channels);
  // A new initializer, added to the graph at the end of the sweep (adding it now would make every type
  // query re-run the checker); returns its name.
  std::string initializer(ir::Tensor t, const std::string& base);
  // A value name no one uses, <plain>_<tag>.
  std::string fresh(const std::string& plain);

  RuleContext& ctx_;
  ir::Graph& g_;
  const ChainLayoutNames names_;
  std::vector<std::optional<ir::Node>> out_;
  std::map<std::string, LayoutTwin> twin_;
  std::set<std::string> cancelled_;       // outputs of reorders out of the layout whose readers read the twin
  std::vector<std::string> old_weights_;  // initializers to drop at the end if nothing reads them
  // Ids for new nodes; the graph's own counter moves only at the end, since the type queries cache the
  // checker's results for as long as the graph looks unchanged.
  ir::NodeId next_id_ = g_.next_node_id;

 private:
  bool rewrite(const ir::Node& n);
  bool residual(const ir::Node& n);
  bool unary(const ir::Node& n);
  bool emit_pool(const ir::Node& n, ir::Node p, const LayoutTwin& v);
  bool pool(const ir::Node& n);
  bool global_pool(const ir::Node& n);
  void add_reorders_back();

  std::set<std::string> taken_;
  std::vector<ir::Tensor> new_initializers_;
};

}  // namespace tessera::passes
