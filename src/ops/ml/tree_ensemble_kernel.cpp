// Reference kernels of the tree ensembles of ai.onnx.ml: TreeEnsemble (opset 5) and the older
// TreeEnsembleRegressor / TreeEnsembleClassifier (opsets 1 and 3).
//
// All three are read into one form: interior nodes (feature, threshold, comparison, children) and
// leaves (a list of (target, weight) pairs); a child reference is a node index or a leaf index. Each
// row walks every tree to one leaf, whose weights are aggregated per target (SUM, AVERAGE, MIN, MAX),
// then base values are added and the post transform applied.
//
// The classifier follows ONNX Runtime for the binary case where the trees score only one class: with
// score s, Z = [1 - s, s] when every weight is positive (and the label is class 1 when s > 0.5), else
// Z = [-s, s] (logistic of each with post_transform LOGISTIC) and the label is class 1 when s > 0.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "ops/ml/ml_kernel_util.h"
#include "runtime/dispatch.h"
#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::KernelError;
using tessera::rt::KernelInfo;
using tessera::rt::Tensor;

enum class Mode : uint8_t { kLeq = 0, kLt = 1, kGte = 2, kGt = 3, kEq = 4, kNeq = 5, kMember = 6 };
enum class Aggregate { kAverage = 0, kSum = 1, kMin = 2, kMax = 3 };
using tessera::ops::kernels::ml::Post;  // NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT = 0..4

// A child: a node index when >= 0, else leaf -(ref + 1).
using Ref = int64_t;
Ref leaf_ref(int64_t leaf) {
  return -(leaf + 1);
}

struct Node {
  int64_t feature = 0;
  double split = 0;
  Mode mode = Mode::kLeq;
  bool missing_true = false;
  Ref yes = 0, no = 0;
  std::vector<double> members;  // kMember only
};

struct Forest {
  std::vector<Node> nodes;
  std::vector<std::vector<std::pair<int64_t, double>>> leaves;  // (target, weight) per leaf
  std::vector<Ref> roots;
  int64_t targets = 1;
  Aggregate aggregate = Aggregate::kSum;
  Post post = Post::kNone;
  std::vector<double> base_values;
  int64_t max_feature = -1;
};

bool goes_true(const Node& n, double x) {
  if (std::isnan(x)) return n.missing_true;
  switch (n.mode) {
    case Mode::kLeq:
      return x <= n.split;
    case Mode::kLt:
      return x < n.split;
    case Mode::kGte:
      return x >= n.split;
    case Mode::kGt:
      return x > n.split;
    case Mode::kEq:
      return x == n.split;
    case Mode::kNeq:
      return x != n.split;
    case Mode::kMember:
      return std::find(n.members.begin(), n.members.end(), x) != n.members.end();
  }
  return false;
}

// The leaf a row reaches from `root`; a cycle in a malformed tree is reported rather than looped on.
int64_t walk(const Forest& f, Ref at, const double* row) {
  for (size_t steps = 0; at >= 0; ++steps) {
    if (steps > f.nodes.size()) throw KernelError("a tree of the ensemble has a cycle");
    const Node& n = f.nodes[static_cast<size_t>(at)];
    at = goes_true(n, row[n.feature]) ? n.yes : n.no;
  }
  return -at - 1;
}

// Aggregated (not yet transformed) scores of one row.
std::vector<double> score_row(const Forest& f, const double* row) {
  auto t = static_cast<size_t>(f.targets);
  std::vector<double> s(t, 0.0);
  std::vector<bool> has(t, false);
  for (Ref root : f.roots) {
    for (const auto& [target, w] : f.leaves[static_cast<size_t>(walk(f, root, row))]) {
      auto k = static_cast<size_t>(target);
      switch (f.aggregate) {
        case Aggregate::kSum:
        case Aggregate::kAverage:
          s[k] += w;
          break;
        case Aggregate::kMin:
          s[k] = has[k] ? std::min(s[k], w) : w;
          break;
        case Aggregate::kMax:
          s[k] = has[k] ? std::max(s[k], w) : w;
          break;
      }
      has[k] = true;
    }
  }
  if (f.aggregate == Aggregate::kAverage && !f.roots.empty())
    for (double& v : s) v /= static_cast<double>(f.roots.size());
  for (size_t k = 0; k < f.base_values.size() && k < t; ++k) s[k] += f.base_values[k];
  return s;
}

// X as rows of doubles: [N, F] or [F] (one row). Checks that every feature the trees read exists.
std::vector<double> read_rows(const KernelContext& ctx, const Forest& f, int64_t& rows, int64_t& cols) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 1 && x.rank() != 2)
    ctx.fail(fmt::format("input 'X' must be [N, F] or [F], got {}", tessera::rt::shape_str(x.shape())));
  rows = x.rank() == 2 ? x.dim(0) : 1;
  cols = x.dim(-1);
  if (f.max_feature >= cols && rows > 0)
    ctx.fail(fmt::format("the trees read feature {} but X has {} features", f.max_feature, cols));
  std::vector<double> out(static_cast<size_t>(x.numel()));
  tessera::rt::dispatch(tessera::rt::TypeList<float, double, tessera::rt::Float16, int32_t, int64_t>{},
                        x.dtype(), ctx.info().op_type(), [&]<class T>() {
                          const T* p = x.data<T>();
                          for (int64_t i = 0; i < x.numel(); ++i)
                            out[static_cast<size_t>(i)] = static_cast<double>(p[i]);
                        });
  return out;
}

// Checks the forest's references once at session build.
void validate(const Forest& f) {
  auto check = [&](Ref r, const char* what) {
    if (r >= 0 ? r >= static_cast<Ref>(f.nodes.size()) : -r - 1 >= static_cast<Ref>(f.leaves.size()))
      throw KernelError(fmt::format("{} refers to a {} {} that does not exist", what,
                                    r >= 0 ? "node" : "leaf", r >= 0 ? r : -r - 1));
  };
  for (const Node& n : f.nodes) {
    if (n.feature < 0) throw KernelError(fmt::format("feature id {} is negative", n.feature));
    check(n.yes, "a true branch");
    check(n.no, "a false branch");
  }
  for (Ref r : f.roots) check(r, "tree_roots");
  if (f.targets < 1)
    throw KernelError(fmt::format("the ensemble has {} targets; it needs at least one", f.targets));
  for (const auto& leaf : f.leaves)
    for (const auto& [t, w] : leaf)
      if (t < 0 || t >= f.targets)
        throw KernelError(fmt::format("a leaf names target {} but there are {} targets", t, f.targets));
}

// A tensor attribute as doubles (float, double or float16).
std::vector<double> tensor_doubles(const KernelInfo& info, const char* name) {
  const tessera::ir::Tensor* t = info.get_tensor(name);
  if (!t) return {};
  Tensor v = Tensor::from_ir(*t);
  std::vector<double> out(static_cast<size_t>(v.numel()));
  for (int64_t i = 0; i < v.numel(); ++i) out[static_cast<size_t>(i)] = v.to_double(i);
  return out;
}

void require_size(size_t got, size_t want, const char* name) {
  if (got != want)
    throw KernelError(fmt::format("attribute '{}' has {} values, expected {}", name, got, want));
}

// ---- TreeEnsemble (opset 5) ----

Forest read_v5(const KernelInfo& info) {
  Forest f;
  auto features = info.get_ints("nodes_featureids");
  size_t n = features.size();
  std::vector<double> splits = tensor_doubles(info, "nodes_splits");
  std::vector<double> modes = tensor_doubles(info, "nodes_modes");
  auto yes = info.get_ints("nodes_truenodeids"), no = info.get_ints("nodes_falsenodeids");
  auto yes_leaf = info.get_ints("nodes_trueleafs"), no_leaf = info.get_ints("nodes_falseleafs");
  auto missing = info.get_ints("nodes_missing_value_tracks_true", std::vector<int64_t>(n, 0));
  require_size(splits.size(), n, "nodes_splits");
  require_size(modes.size(), n, "nodes_modes");
  require_size(yes.size(), n, "nodes_truenodeids");
  require_size(no.size(), n, "nodes_falsenodeids");
  require_size(yes_leaf.size(), n, "nodes_trueleafs");
  require_size(no_leaf.size(), n, "nodes_falseleafs");
  require_size(missing.size(), n, "nodes_missing_value_tracks_true");
  std::vector<double> members = tensor_doubles(info, "membership_values");
  size_t member_at = 0;
  for (size_t i = 0; i < n; ++i) {
    Node node;
    node.feature = features[i];
    node.split = splits[i];
    if (modes[i] < 0 || modes[i] > 6)
      throw KernelError(fmt::format("nodes_modes[{}] is {}, not in 0..6", i, modes[i]));
    node.mode = static_cast<Mode>(static_cast<uint8_t>(modes[i]));
    node.missing_true = missing[i] != 0;
    node.yes = yes_leaf[i] ? leaf_ref(yes[i]) : yes[i];
    node.no = no_leaf[i] ? leaf_ref(no[i]) : no[i];
    if (node.mode == Mode::kMember) {
      // Each set-membership node takes the next NaN-terminated run of membership_values.
      if (member_at >= members.size())
        throw KernelError(fmt::format("membership_values has no set left for node {}", i));
      for (; member_at < members.size() && !std::isnan(members[member_at]); ++member_at)
        node.members.push_back(members[member_at]);
      ++member_at;
    }
    f.max_feature = std::max(f.max_feature, node.feature);
    f.nodes.push_back(std::move(node));
  }
  auto targets = info.get_ints("leaf_targetids");
  std::vector<double> weights = tensor_doubles(info, "leaf_weights");
  require_size(weights.size(), targets.size(), "leaf_weights");
  for (size_t i = 0; i < targets.size(); ++i) f.leaves.push_back({{targets[i], weights[i]}});
  for (int64_t r : info.get_ints("tree_roots")) f.roots.push_back(r);
  f.targets = info.get_int("n_targets", 1);
  int64_t agg = info.get_int("aggregate_function", 1), post = info.get_int("post_transform", 0);
  if (agg < 0 || agg > 3) throw KernelError(fmt::format("aggregate_function is {}, not in 0..3", agg));
  if (post < 0 || post > 4) throw KernelError(fmt::format("post_transform is {}, not in 0..4", post));
  f.aggregate = static_cast<Aggregate>(agg);
  f.post = static_cast<Post>(post);
  validate(f);
  return f;
}

class TreeEnsemble : public tessera::rt::OpKernel {
 public:
  explicit TreeEnsemble(const KernelInfo& info) : f_(read_v5(info)) {}

  void compute(KernelContext& ctx) const override {
    int64_t rows = 0, cols = 0;
    std::vector<double> x = read_rows(ctx, f_, rows, cols);
    DataType dt = ctx.input(0).dtype();
    Tensor& y = ctx.output(0, dt, {rows, f_.targets});
    tessera::rt::dispatch(tessera::rt::TypeList<float, double, tessera::rt::Float16>{}, dt, "TreeEnsemble",
                          [&]<class T>() {
                            T* out = y.data<T>();
                            for (int64_t r = 0; r < rows; ++r) {
                              std::vector<double> s = score_row(f_, x.data() + r * cols);
                              tessera::ops::kernels::ml::apply_post(f_.post, s);
                              for (int64_t k = 0; k < f_.targets; ++k)
                                out[r * f_.targets + k] = static_cast<T>(s[static_cast<size_t>(k)]);
                            }
                          });
  }

 private:
  Forest f_;
};

// ---- TreeEnsembleRegressor / TreeEnsembleClassifier (opsets 1, 3) ----

// floats `name`, or its `name`_as_tensor twin (opset 3).
std::vector<double> floats_or_tensor(const KernelInfo& info, const std::string& name) {
  std::string tname = name + "_as_tensor";
  if (info.get_tensor(tname)) return tensor_doubles(info, tname.c_str());
  std::vector<float> f = info.get_floats(name, {});
  return {f.begin(), f.end()};
}

// Reads the nodes_* attributes and the leaf weights of `prefix` ("target" or "class").
Forest read_legacy(const KernelInfo& info, const std::string& prefix) {
  Forest f;
  auto tree_ids = info.get_ints("nodes_treeids", {});
  auto node_ids = info.get_ints("nodes_nodeids", {});
  size_t n = tree_ids.size();
  auto features = info.get_ints("nodes_featureids", std::vector<int64_t>(n, 0));
  auto modes = info.get_strings("nodes_modes", {});
  std::vector<double> values = floats_or_tensor(info, "nodes_values");
  if (values.empty()) values.assign(n, 0.0);
  auto yes = info.get_ints("nodes_truenodeids", std::vector<int64_t>(n, 0));
  auto no = info.get_ints("nodes_falsenodeids", std::vector<int64_t>(n, 0));
  auto missing = info.get_ints("nodes_missing_value_tracks_true", std::vector<int64_t>(n, 0));
  require_size(node_ids.size(), n, "nodes_nodeids");
  require_size(features.size(), n, "nodes_featureids");
  require_size(modes.size(), n, "nodes_modes");
  require_size(values.size(), n, "nodes_values");
  require_size(yes.size(), n, "nodes_truenodeids");
  require_size(no.size(), n, "nodes_falsenodeids");
  require_size(missing.size(), n, "nodes_missing_value_tracks_true");

  // (tree, node id) -> reference; interior nodes and leaves are numbered separately.
  std::map<std::pair<int64_t, int64_t>, Ref> refs;
  std::vector<size_t> interior;  // attribute index of each interior node
  for (size_t i = 0; i < n; ++i) {
    Ref r;
    if (modes[i] == "LEAF") {
      r = leaf_ref(static_cast<int64_t>(f.leaves.size()));
      f.leaves.emplace_back();
    } else {
      r = static_cast<Ref>(interior.size());
      interior.push_back(i);
    }
    if (!refs.emplace(std::pair{tree_ids[i], node_ids[i]}, r).second)
      throw KernelError(fmt::format("tree {} has node id {} twice", tree_ids[i], node_ids[i]));
  }
  auto find = [&](int64_t tree, int64_t id) {
    auto it = refs.find({tree, id});
    if (it == refs.end()) throw KernelError(fmt::format("tree {} has no node {}", tree, id));
    return it->second;
  };
  static const std::map<std::string, Mode> kModes = {{"BRANCH_LEQ", Mode::kLeq}, {"BRANCH_LT", Mode::kLt},
                                                     {"BRANCH_GTE", Mode::kGte}, {"BRANCH_GT", Mode::kGt},
                                                     {"BRANCH_EQ", Mode::kEq},   {"BRANCH_NEQ", Mode::kNeq}};
  std::map<std::pair<int64_t, int64_t>, bool> is_child;
  for (size_t i : interior) {
    auto m = kModes.find(modes[i]);
    if (m == kModes.end())
      throw KernelError(fmt::format("nodes_modes[{}] is '{}', not a known mode", i, modes[i]));
    Node node{features[i],
              values[i],
              m->second,
              missing[i] != 0,
              find(tree_ids[i], yes[i]),
              find(tree_ids[i], no[i]),
              {}};
    is_child[{tree_ids[i], yes[i]}] = is_child[{tree_ids[i], no[i]}] = true;
    f.max_feature = std::max(f.max_feature, node.feature);
    f.nodes.push_back(node);
  }
  // A tree's root is its first node that no other node points to.
  std::map<int64_t, Ref> roots;
  for (size_t i = 0; i < n; ++i)
    if (!is_child.count({tree_ids[i], node_ids[i]}))
      roots.emplace(tree_ids[i], find(tree_ids[i], node_ids[i]));
  for (const auto& [tree, r] : roots) f.roots.push_back(r);

  auto w_tree = info.get_ints(prefix + "_treeids", {});
  auto w_node = info.get_ints(prefix + "_nodeids", {});
  auto w_id = info.get_ints(prefix + "_ids", {});
  std::vector<double> w = floats_or_tensor(info, prefix + "_weights");
  require_size(w_node.size(), w_tree.size(), (prefix + "_nodeids").c_str());
  require_size(w_id.size(), w_tree.size(), (prefix + "_ids").c_str());
  require_size(w.size(), w_tree.size(), (prefix + "_weights").c_str());
  for (size_t i = 0; i < w_tree.size(); ++i) {
    Ref r = find(w_tree[i], w_node[i]);
    if (r >= 0)
      throw KernelError(fmt::format("{} weight {} names node {} of tree {}, which is not a leaf", prefix, i,
                                    w_node[i], w_tree[i]));
    f.leaves[static_cast<size_t>(-r - 1)].emplace_back(w_id[i], w[i]);
  }
  f.base_values = floats_or_tensor(info, "base_values");
  f.post = tessera::ops::kernels::ml::parse_post(info.get_string("post_transform", "NONE"));
  return f;
}

class TreeEnsembleRegressor : public tessera::rt::OpKernel {
 public:
  explicit TreeEnsembleRegressor(const KernelInfo& info) : f_(read_legacy(info, "target")) {
    f_.targets = info.get_int("n_targets", 1);
    std::string agg = info.get_string("aggregate_function", "SUM");
    static const std::map<std::string, Aggregate> kAgg = {{"AVERAGE", Aggregate::kAverage},
                                                          {"SUM", Aggregate::kSum},
                                                          {"MIN", Aggregate::kMin},
                                                          {"MAX", Aggregate::kMax}};
    auto it = kAgg.find(agg);
    if (it == kAgg.end())
      throw KernelError(fmt::format("aggregate_function '{}' is not AVERAGE, SUM, MIN or MAX", agg));
    f_.aggregate = it->second;
    validate(f_);
  }

  void compute(KernelContext& ctx) const override {
    int64_t rows = 0, cols = 0;
    std::vector<double> x = read_rows(ctx, f_, rows, cols);
    float* out = ctx.output(0, DataType::kFloat, {rows, f_.targets}).data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<double> s = score_row(f_, x.data() + r * cols);
      tessera::ops::kernels::ml::apply_post(f_.post, s);
      for (int64_t k = 0; k < f_.targets; ++k)
        out[r * f_.targets + k] = static_cast<float>(s[static_cast<size_t>(k)]);
    }
  }

 private:
  Forest f_;
};

class TreeEnsembleClassifier : public tessera::rt::OpKernel {
 public:
  explicit TreeEnsembleClassifier(const KernelInfo& info) : f_(read_legacy(info, "class")) {
    strings_ = info.has_attr("classlabels_strings");
    if (strings_ == info.has_attr("classlabels_int64s"))
      throw KernelError("exactly one of 'classlabels_strings' and 'classlabels_int64s' must be given");
    if (strings_)
      str_labels_ = info.get_strings("classlabels_strings");
    else
      int_labels_ = info.get_ints("classlabels_int64s");
    f_.targets = static_cast<int64_t>(strings_ ? str_labels_.size() : int_labels_.size());
    f_.aggregate = Aggregate::kSum;
    validate(f_);
    // Binary models often score class 1 only; see the file comment.
    std::vector<int64_t> ids = info.get_ints("class_ids", {});
    binary_one_score_ =
        f_.targets == 2 && std::all_of(ids.begin(), ids.end(), [](int64_t i) { return i == 1; });
    if (binary_one_score_ && f_.base_values.size() == 2) f_.base_values = {0.0, f_.base_values[1]};
    for (const auto& leaf : f_.leaves)
      for (const auto& [t, w] : leaf) all_positive_ = all_positive_ && w >= 0;
  }

  void compute(KernelContext& ctx) const override {
    int64_t rows = 0, cols = 0;
    std::vector<double> x = read_rows(ctx, f_, rows, cols);
    const int64_t c = f_.targets;
    Tensor& y = ctx.output(0, strings_ ? DataType::kString : DataType::kInt64, {rows});
    float* z = ctx.output(1, DataType::kFloat, {rows, c}).data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<double> s = score_row(f_, x.data() + r * cols);
      size_t label = 0;
      if (binary_one_score_) {
        double v = s[1];
        label = v > (all_positive_ ? 0.5 : 0.0) ? 1 : 0;
        if (all_positive_) {
          s = {1.0 - v, v};
        } else if (f_.post == Post::kLogistic) {
          s = {1.0 / (1.0 + std::exp(v)), 1.0 / (1.0 + std::exp(-v))};
        } else {
          s = {-v, v};
        }
        if (f_.post != Post::kLogistic) tessera::ops::kernels::ml::apply_post(f_.post, s);
      } else {
        label = static_cast<size_t>(std::max_element(s.begin(), s.end()) - s.begin());
        tessera::ops::kernels::ml::apply_post(f_.post, s);
      }
      for (int64_t k = 0; k < c; ++k) z[r * c + k] = static_cast<float>(s[static_cast<size_t>(k)]);
      if (strings_)
        y.data<std::string>()[r] = str_labels_[label];
      else
        y.data<int64_t>()[r] = int_labels_[label];
    }
  }

 private:
  Forest f_;
  bool strings_ = false, binary_one_score_ = false, all_positive_ = true;
  std::vector<std::string> str_labels_;
  std::vector<int64_t> int_labels_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_tree_ensemble) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<TreeEnsemble>("TreeEnsemble").in_domain("ai.onnx.ml"));
  reg.add(KernelDef::of<TreeEnsembleRegressor>("TreeEnsembleRegressor").in_domain("ai.onnx.ml"));
  reg.add(KernelDef::of<TreeEnsembleClassifier>("TreeEnsembleClassifier").in_domain("ai.onnx.ml"));
}
