// Hundreds of random commands on the small model, through History: each one either applies or is
// refused with the model untouched; then undoing everything walks back through every intermediate
// state to the original, and redoing everything walks forward again.
#include <gtest/gtest.h>

#include <random>

#include "edit_test_util.h"

namespace tessera::ir::test {
namespace {

class RandomEditor {
 public:
  explicit RandomEditor(uint32_t seed) : rng_(seed) {}

  std::unique_ptr<Command> next(const Model& m) {
    int kind = pick(18);
    if (kind == 17) {
      auto b = std::make_unique<BatchCommand>("random batch");
      for (int i = 0, n = 2 + pick(3); i < n; ++i) b->add(single(m, pick(17)));
      return b;
    }
    return single(m, kind);
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool coin() { return pick(2) == 0; }
  template <class T>
  const T& one_of(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(static_cast<int>(v.size())))];
  }
  std::string fresh() { return "v" + std::to_string(counter_++); }

  static void collect_paths(const Graph& g, const GraphPath& p, std::vector<GraphPath>& out) {
    out.push_back(p);
    for (const Node& n : g.nodes) {
      for (const Attribute& a : n.attributes) {
        for (size_t i = 0; i < a.graphs.size(); ++i) collect_paths(*a.graphs[i], p.sub(n.id, a.name, i), out);
      }
    }
  }
  std::vector<GraphPath> paths(const Model& m) {
    std::vector<GraphPath> out;
    collect_paths(m.graph, GraphPath::main_graph(), out);
    for (const Function& f : m.functions) {
      collect_paths(f.body, GraphPath::function_body(f.domain, f.name, f.overload), out);
    }
    return out;
  }
  // Names mentioned in g, plus a made-up one now and then so some commands are refused.
  std::vector<std::string> names(const Graph& g) {
    std::vector<std::string> out{"x", "a", "r", "undefined_" + std::to_string(pick(3))};
    for (const ValueInfo& v : g.inputs) out.push_back(v.name);
    for (const Tensor& t : g.initializers) out.push_back(t.name);
    for (const Node& n : g.nodes) {
      for (const std::string& s : n.outputs) out.push_back(s);
    }
    return out;
  }
  NodeRef node_ref(const Graph& g) {
    if (g.nodes.empty() || pick(10) == 0) return NodeRef("missing_node");
    const Node& n = one_of(g.nodes);
    return coin() || n.name.empty() ? NodeRef(n.id) : NodeRef(n.name);
  }
  std::string new_or_taken(const Graph& g) { return pick(4) == 0 ? one_of(names(g)) : fresh(); }
  ValueInfo info(std::string name) {
    return ValueInfo{std::move(name), Type::tensor(coin() ? DataType::kFloat : DataType::kInt64), {}, {}};
  }
  Tensor tensor(std::string name) {
    return make_tensor<float>(std::move(name), DataType::kFloat, {2}, {float(pick(9)), 1.0f});
  }

  std::unique_ptr<Command> single(const Model& m, int kind) {
    GraphPath p = one_of(paths(m));
    const Graph& g = resolve_graph(m, p);
    std::vector<std::string> vals = names(g);
    switch (kind) {
      case 0: {
        Node n;
        n.name = pick(3) == 0 ? "" : new_or_taken(g);
        n.op_type = coin() ? "Relu" : "Identity";
        n.inputs = {one_of(vals)};
        n.outputs = {new_or_taken(g)};
        return std::make_unique<AddNode>(p, n, coin() ? SIZE_MAX : size_t(pick(int(g.nodes.size()) + 2)));
      }
      case 1:
        return std::make_unique<RemoveNode>(p, node_ref(g));
      case 2:
        return std::make_unique<Connect>(p, node_ref(g), size_t(pick(4)), one_of(vals));
      case 3:
        return std::make_unique<Disconnect>(p, node_ref(g), size_t(pick(3)));
      case 4:
        return std::make_unique<SetNodeOutput>(p, node_ref(g), size_t(pick(3)), coin() ? fresh() : "");
      case 5:
        return std::make_unique<RenameValue>(p, one_of(vals), new_or_taken(g));
      case 6:
        return std::make_unique<RenameNode>(p, node_ref(g), new_or_taken(g));
      case 7:
        return std::make_unique<SetAttribute>(p, node_ref(g),
                                              Attribute::of_float(coin() ? "alpha" : "beta", pick(5)));
      case 8:
        return std::make_unique<ResetAttribute>(p, node_ref(g), coin() ? "alpha" : "beta");
      case 9:
        return std::make_unique<AddInitializer>(p, tensor(new_or_taken(g)));
      case 10:
        if (coin()) return std::make_unique<ReplaceInitializer>(p, tensor(one_of(vals)));
        return std::make_unique<RemoveInitializer>(p, one_of(vals));
      case 11:
        if (coin()) return std::make_unique<AddGraphInput>(p, info(new_or_taken(g)), size_t(pick(4)));
        return std::make_unique<RemoveGraphInput>(p, one_of(vals));
      case 12:
        if (coin()) return std::make_unique<AddGraphOutput>(p, info(one_of(vals)), coin() ? SIZE_MAX : 0);
        return std::make_unique<RemoveGraphOutput>(p, g.outputs.empty() ? "none" : one_of(g.outputs).name);
      case 13:
        if (coin()) return std::make_unique<SetValueInfo>(p, info(one_of(vals)));
        return std::make_unique<RemoveValueInfo>(p, one_of(vals));
      case 14: {
        Function f = m.functions.empty() || coin() ? Function{} : one_of(m.functions);
        if (f.name.empty()) f.name = "F" + std::to_string(pick(3));
        f.domain = "custom";
        f.doc_string = fresh();
        int what = pick(3);
        if (what == 0) return std::make_unique<AddFunction>(f);
        if (what == 1) return std::make_unique<ReplaceFunction>(f);
        return std::make_unique<RemoveFunction>(f.domain, f.name, f.overload);
      }
      case 15: {
        static const std::vector<std::string> domains{"", "ai.onnx", "custom", "com.microsoft"};
        return std::make_unique<SetOpsetImport>(
            one_of(domains), pick(3) == 0 ? std::nullopt : std::optional<int64_t>(pick(22)));
      }
      default: {
        ModelMetadata md;
        if (coin()) md.doc_string = fresh();
        if (coin()) md.model_version = pick(100);
        if (coin()) md.metadata_props = std::vector<StringPair>{{fresh(), fresh()}};
        if (!md.doc_string && !md.model_version && !md.metadata_props) md.producer_name = fresh();
        return std::make_unique<SetModelMetadata>(md);
      }
    }
  }

  std::mt19937 rng_;
  int counter_ = 0;
};

void run_random_session(uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  Model m = small_model();
  History h(m, 0);
  RandomEditor editor(seed);
  std::vector<Model> states{m};
  int refused = 0;
  for (int attempt = 0; attempt < 5000 && states.size() <= 300; ++attempt) {
    std::unique_ptr<Command> c = editor.next(m);
    std::string what = c->description();
    try {
      h.execute(std::move(c));
      states.push_back(m);
    } catch (const CommandError&) {
      ++refused;
      ASSERT_TRUE(identical(m, states.back())) << "refused command changed the model: " << what;
    }
  }
  ASSERT_EQ(states.size(), 301u);
  EXPECT_GT(refused, 0);
  for (size_t i = states.size() - 1; i-- > 0;) {
    std::string what = h.undo_description();
    h.undo();
    ASSERT_TRUE(identical(m, states[i])) << "after undoing step " << i + 1 << ": " << what;
  }
  EXPECT_FALSE(h.can_undo());
  for (size_t i = 1; i < states.size(); ++i) {
    std::string what = h.redo_description();
    h.redo();
    ASSERT_TRUE(identical(m, states[i])) << "after redoing step " << i << ": " << what;
  }
  while (h.can_undo()) h.undo();
  EXPECT_TRUE(identical(m, states.front()));
  EXPECT_FALSE(h.is_dirty());
}

TEST(RandomEdits, UndoAllRestoresTheOriginal) {
  for (uint32_t seed : {1u, 2u, 3u, 42u, 2024u}) run_random_session(seed);
}

}  // namespace
}  // namespace tessera::ir::test
