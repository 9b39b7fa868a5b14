// Reference kernels of LinearRegressor and LinearClassifier (ai.onnx.ml): scores = X * coefficients^T +
// intercepts, one score per target or class, then the post transform.
//
// The classifier's binary form (one row of coefficients, two labels) scores the second class: Z is
// [-s, s] before the post transform and the label is the second class when s > 0, as in ONNX Runtime.
// Without label attributes the labels are 0 .. classes-1.
#include <fmt/format.h>

#include <algorithm>

#include "ops/ml/ml_kernel_util.h"

namespace {

using namespace tessera::ops::kernels::ml;
using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::KernelError;
using tessera::rt::KernelInfo;

// Scores of every row: [n, targets].
std::vector<double> linear_scores(const KernelContext& ctx, const Rows& x, const std::vector<float>& coef,
                                  const std::vector<float>& intercepts, int64_t targets) {
  if (static_cast<int64_t>(coef.size()) != targets * x.c)
    ctx.fail(fmt::format("{} coefficients do not make {} rows of the {} features of X", coef.size(), targets,
                         x.c));
  std::vector<double> s(static_cast<size_t>(x.n * targets), 0.0);
  for (int64_t r = 0; r < x.n; ++r)
    for (int64_t t = 0; t < targets; ++t) {
      double acc = intercepts.empty() ? 0.0 : intercepts[static_cast<size_t>(t)];
      for (int64_t j = 0; j < x.c; ++j) acc += coef[static_cast<size_t>(t * x.c + j)] * x.row(r)[j];
      s[static_cast<size_t>(r * targets + t)] = acc;
    }
  return s;
}

class LinearRegressor : public tessera::rt::OpKernel {
 public:
  explicit LinearRegressor(const KernelInfo& info)
      : coef_(info.get_floats("coefficients", {})),
        intercepts_(info.get_floats("intercepts", {})),
        targets_(info.get_int("targets", 1)),
        post_(parse_post(info.get_string("post_transform", "NONE"))) {
    if (targets_ < 1) throw KernelError(fmt::format("attribute 'targets' is {}; must be >= 1", targets_));
    if (!intercepts_.empty() && static_cast<int64_t>(intercepts_.size()) != targets_)
      throw KernelError(fmt::format("{} intercepts for {} targets", intercepts_.size(), targets_));
  }

  void compute(KernelContext& ctx) const override {
    Rows x = read_rows(ctx);
    std::vector<double> s = linear_scores(ctx, x, coef_, intercepts_, targets_);
    float* y = ctx.output(0, DataType::kFloat, {x.n, targets_}).data<float>();
    for (int64_t r = 0; r < x.n; ++r) {
      std::vector<double> row(s.begin() + r * targets_, s.begin() + (r + 1) * targets_);
      apply_post(post_, row);
      for (int64_t t = 0; t < targets_; ++t)
        y[r * targets_ + t] = static_cast<float>(row[static_cast<size_t>(t)]);
    }
  }

 private:
  std::vector<float> coef_, intercepts_;
  int64_t targets_;
  Post post_;
};

class LinearClassifier : public tessera::rt::OpKernel {
 public:
  explicit LinearClassifier(const KernelInfo& info)
      : coef_(info.get_floats("coefficients")),
        intercepts_(info.get_floats("intercepts", {})),
        post_(parse_post(info.get_string("post_transform", "NONE"))) {
    strings_ = info.has_attr("classlabels_strings");
    str_labels_ = info.get_strings("classlabels_strings", {});
    int_labels_ = info.get_ints("classlabels_ints", {});
    if (strings_ && info.has_attr("classlabels_ints"))
      throw KernelError("only one of 'classlabels_ints' and 'classlabels_strings' may be given");
    size_t labels = strings_ ? str_labels_.size() : int_labels_.size();
    rows_ = !intercepts_.empty() ? static_cast<int64_t>(intercepts_.size())
                                 : std::max<int64_t>(1, static_cast<int64_t>(labels == 2 ? 1 : labels));
    if (labels == 0) {
      for (int64_t i = 0; i < std::max<int64_t>(rows_, 2); ++i) int_labels_.push_back(i);
      labels = int_labels_.size();
    }
    binary_ = rows_ == 1 && labels == 2;
    classes_ = binary_ ? 2 : rows_;
    if (!binary_ && static_cast<int64_t>(labels) != rows_)
      throw KernelError(fmt::format("{} class labels for {} rows of coefficients", labels, rows_));
  }

  void compute(KernelContext& ctx) const override {
    Rows x = read_rows(ctx);
    std::vector<double> s = linear_scores(ctx, x, coef_, intercepts_, rows_);
    auto& y = ctx.output(0, strings_ ? DataType::kString : DataType::kInt64, {x.n});
    float* z = ctx.output(1, DataType::kFloat, {x.n, classes_}).data<float>();
    for (int64_t r = 0; r < x.n; ++r) {
      std::vector<double> row;
      size_t label;
      if (binary_) {
        double v = s[static_cast<size_t>(r)];
        row = {-v, v};
        label = v > 0 ? 1 : 0;
      } else {
        row.assign(s.begin() + r * rows_, s.begin() + (r + 1) * rows_);
        label = static_cast<size_t>(std::max_element(row.begin(), row.end()) - row.begin());
      }
      apply_post(post_, row);
      for (int64_t k = 0; k < classes_; ++k)
        z[r * classes_ + k] = static_cast<float>(row[static_cast<size_t>(k)]);
      if (strings_)
        y.data<std::string>()[r] = str_labels_[label];
      else
        y.data<int64_t>()[r] = int_labels_[label];
    }
  }

 private:
  std::vector<float> coef_, intercepts_;
  Post post_;
  bool strings_ = false, binary_ = false;
  std::vector<std::string> str_labels_;
  std::vector<int64_t> int_labels_;
  int64_t rows_ = 1, classes_ = 1;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_linear_models) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<LinearRegressor>("LinearRegressor").in_domain("ai.onnx.ml"));
  reg.add(KernelDef::of<LinearClassifier>("LinearClassifier").in_domain("ai.onnx.ml"));
}
