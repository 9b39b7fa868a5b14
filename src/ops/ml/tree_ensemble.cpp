// Tree ensembles (ai.onnx.ml): TreeEnsembleClassifier and TreeEnsembleRegressor (1, 3) with trees given
// as parallel per-node lists, and TreeEnsemble (5), which unifies both with leaves kept apart.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/ml/ml_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::AttrType;
using ir::DataType;
using ir::Dim;
using ir::Shape;

namespace {

// Length of a list attribute (ints, floats, strings or a tensor); nullopt when it is absent.
std::optional<size_t> list_size(const InferenceContext& ctx, const std::string& name) {
  const ir::Attribute* a = ctx.node().attr(name);
  if (!a) return std::nullopt;
  switch (a->type) {
    case AttrType::kInts:
      return a->ints.size();
    case AttrType::kFloats:
      return a->floats.size();
    case AttrType::kStrings:
      return a->strings.size();
    case AttrType::kTensor:
      if (a->tensors.empty()) return std::nullopt;
      return static_cast<size_t>(a->tensors[0].numel().value_or(0));
    default:
      return std::nullopt;
  }
}

// The parallel lists that describe one node (or one leaf) each must have one entry per node.
void check_parallel(const InferenceContext& ctx, std::initializer_list<const char*> names) {
  std::optional<size_t> n;
  std::string first;
  for (const char* name : names) {
    auto s = list_size(ctx, name);
    if (!s) continue;
    if (!n) {
      n = s;
      first = name;
      continue;
    }
    if (*s != *n) ctx.fail(fmt::format("'{}' has {} entries but '{}' has {}", name, *s, first, *n));
  }
}

void check_legacy_lists(const InferenceContext& ctx, const char* leaf) {
  check_parallel(ctx, {"nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                       "nodes_values_as_tensor", "nodes_truenodeids", "nodes_falsenodeids", "nodes_hitrates",
                       "nodes_hitrates_as_tensor", "nodes_missing_value_tracks_true"});
  std::string l(leaf);
  check_parallel(ctx, {(l + "_treeids").c_str(), (l + "_nodeids").c_str(), (l + "_ids").c_str(),
                       (l + "_weights").c_str(), (l + "_weights_as_tensor").c_str()});
  for (const std::string& mode : ctx.attr_strings("nodes_modes")) {
    if (mode != "BRANCH_LEQ" && mode != "BRANCH_LT" && mode != "BRANCH_GTE" && mode != "BRANCH_GT" &&
        mode != "BRANCH_EQ" && mode != "BRANCH_NEQ" && mode != "LEAF") {
      ctx.fail(fmt::format("nodes_modes holds '{}', not a BRANCH_* mode or LEAF", mode));
    }
  }
  for (const char* pair : {"base_values", "nodes_values", "nodes_hitrates"}) {
    std::string p(pair);
    if (ctx.has_attr(p) && ctx.has_attr(p + "_as_tensor")) {
      ctx.fail(fmt::format("only one of '{0}' and '{0}_as_tensor' may be set", p));
    }
  }
}

// Y: a label per row; Z: a score per class label.
void infer_tree_classifier(InferenceContext& ctx) {
  ml::require_rows(ctx, 0);
  check_legacy_lists(ctx, "class");
  DataType label = ml::label_type(ctx, "classlabels_int64s", "classlabels_strings");
  auto classes = ml::label_count(ctx, "classlabels_int64s", "classlabels_strings");
  Dim n = ml::batch_dim(ctx, 0);
  set_output(ctx, 0, label, Shape{n});
  set_output(ctx, 1, DataType::kFloat, Shape{n, classes ? Dim::of(*classes) : Dim::unknown()});
}

// Y: (N, n_targets), float.
void infer_tree_regressor(InferenceContext& ctx) {
  ml::require_rows(ctx, 0);
  check_legacy_lists(ctx, "target");
  std::string agg = ctx.attr_string("aggregate_function", "SUM");
  if (agg != "SUM" && agg != "AVERAGE" && agg != "MIN" && agg != "MAX") {
    ctx.fail(fmt::format("aggregate_function '{}' is not one of SUM, AVERAGE, MIN, MAX", agg));
  }
  Dim targets = Dim::unknown();
  if (ctx.has_attr("n_targets")) {
    int64_t t = ctx.attr_int("n_targets");
    if (t <= 0) ctx.fail(fmt::format("n_targets must be positive, got {}", t));
    targets = Dim::of(t);
  }
  set_output(ctx, 0, DataType::kFloat, Shape{ml::batch_dim(ctx, 0), targets});
}

// Version 5: interior nodes and leaves in separate lists, enums as integers, X's type carried to Y.
void infer_tree_ensemble(InferenceContext& ctx) {
  require_rank(ctx, 0, 2, "X (N, features)");
  check_parallel(
      ctx, {"nodes_featureids", "nodes_splits", "nodes_modes", "nodes_truenodeids", "nodes_trueleafs",
            "nodes_falsenodeids", "nodes_falseleafs", "nodes_missing_value_tracks_true", "nodes_hitrates"});
  check_parallel(ctx, {"leaf_targetids", "leaf_weights"});
  if (ctx.attr_ints("tree_roots").empty()) ctx.fail("tree_roots must name at least one tree");
  int64_t agg = ctx.attr_int("aggregate_function", 1);
  if (agg < 0 || agg > 3)
    ctx.fail(fmt::format("aggregate_function must be 0 (AVERAGE) to 3 (MAX), got {}", agg));
  int64_t post = ctx.attr_int("post_transform", 0);
  if (post < 0 || post > 4)
    ctx.fail(fmt::format("post_transform must be 0 (NONE) to 4 (PROBIT), got {}", post));
  const ir::Attribute* splits = ctx.node().attr("nodes_splits");
  DataType x = input_elem(ctx, 0);
  if (splits && !splits->tensors.empty() && x != DataType::kUndefined && splits->tensors[0].dtype != x) {
    ctx.fail(fmt::format("nodes_splits is {} but X is {}; they must have the same type",
                         ir::dtype_name(splits->tensors[0].dtype), ir::dtype_name(x)));
  }
  Dim targets = Dim::unknown();
  if (ctx.has_attr("n_targets")) targets = Dim::of(ctx.attr_int("n_targets"));
  const Shape* s = input_shape(ctx, 0);
  set_output(ctx, 0, x, Shape{s ? (*s)[0] : Dim::unknown(), targets});
}

const char* kClassifierDoc =
    "Classifies each row with an ensemble of decision trees, giving the winning label and a score per class.";
const char* kRegressorDoc =
    "Predicts n_targets values per row by aggregating the leaf weights of decision trees.";

// The node attributes both tree ensembles share; version 3 added a tensor twin to each float list
// (so doubles can be stored without loss).
void add_tree_attrs(OpSchema& s, int version) {
  auto floats = [&](const char* name) {
    s.attr_optional(name, AttrType::kFloats);
    if (version >= 3) s.attr_optional(std::string(name) + "_as_tensor", AttrType::kTensor);
  };
  floats("base_values");
  for (const char* name : {"nodes_falsenodeids", "nodes_featureids", "nodes_missing_value_tracks_true",
                           "nodes_nodeids", "nodes_treeids", "nodes_truenodeids"}) {
    s.attr_optional(name, AttrType::kInts);
  }
  floats("nodes_hitrates");
  floats("nodes_values");
  s.attr_optional("nodes_modes", AttrType::kStrings);
  s.attr("post_transform", "NONE");
}

OpSchema tree_classifier(int version) {
  OpSchema s("TreeEnsembleClassifier", version, "ai.onnx.ml");
  s.category(Category::kMachineLearning)
      .doc(kClassifierDoc)
      .input("X", "T1")
      .output("Y", "T2")
      .output("Z", "tensor(float)")
      .types("T1", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
      .types("T2", {"tensor(int64)", "tensor(string)"})
      .attr_optional("class_ids", AttrType::kInts)
      .attr_optional("class_nodeids", AttrType::kInts)
      .attr_optional("class_treeids", AttrType::kInts)
      .attr_optional("class_weights", AttrType::kFloats)
      .attr_optional("classlabels_int64s", AttrType::kInts)
      .attr_optional("classlabels_strings", AttrType::kStrings)
      .infer(infer_tree_classifier);
  if (version >= 3) s.attr_optional("class_weights_as_tensor", AttrType::kTensor);
  add_tree_attrs(s, version);
  return s;
}

OpSchema tree_regressor(int version) {
  OpSchema s("TreeEnsembleRegressor", version, "ai.onnx.ml");
  s.category(Category::kMachineLearning)
      .doc(kRegressorDoc)
      .input("X", "T")
      .output("Y", "tensor(float)")
      .types("T", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
      .attr("aggregate_function", "SUM")
      .attr_optional("n_targets", AttrType::kInt)
      .attr_optional("target_ids", AttrType::kInts)
      .attr_optional("target_nodeids", AttrType::kInts)
      .attr_optional("target_treeids", AttrType::kInts)
      .attr_optional("target_weights", AttrType::kFloats)
      .infer(infer_tree_regressor);
  if (version >= 3) s.attr_optional("target_weights_as_tensor", AttrType::kTensor);
  add_tree_attrs(s, version);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(ml_tree_ensemble) {
  for (int version : {1, 3}) {
    reg.add(tree_classifier(version));
    reg.add(tree_regressor(version));
  }
  reg.add(
      OpSchema("TreeEnsemble", 5, "ai.onnx.ml")
          .category(Category::kMachineLearning)
          .doc("Evaluates an ensemble of decision trees for classification or regression: splits compare one "
               "feature (or test set membership), leaves add weights to targets, results are aggregated.")
          .input("X", "T")
          .output("Y", "T")
          .types("T", types::tensors({"float", "double", "float16"}))
          .attr("aggregate_function", int64_t{1})
          .attr("leaf_targetids", AttrType::kInts)
          .attr("leaf_weights", AttrType::kTensor)
          .attr_optional("membership_values", AttrType::kTensor)
          .attr_optional("n_targets", AttrType::kInt)
          .attr("nodes_falseleafs", AttrType::kInts)
          .attr("nodes_falsenodeids", AttrType::kInts)
          .attr("nodes_featureids", AttrType::kInts)
          .attr_optional("nodes_hitrates", AttrType::kTensor)
          .attr_optional("nodes_missing_value_tracks_true", AttrType::kInts)
          .attr("nodes_modes", AttrType::kTensor)
          .attr("nodes_splits", AttrType::kTensor)
          .attr("nodes_trueleafs", AttrType::kInts)
          .attr("nodes_truenodeids", AttrType::kInts)
          .attr("post_transform", int64_t{0})
          .attr("tree_roots", AttrType::kInts)
          .infer(infer_tree_ensemble));
}
