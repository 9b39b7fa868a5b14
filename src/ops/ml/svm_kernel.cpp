// Reference kernels of SVMRegressor and SVMClassifier (ai.onnx.ml), after LIBSVM.
//
// Kernels K(x, v): LINEAR x.v, POLY (gamma x.v + coef0)^degree, RBF exp(-gamma |x - v|^2), SIGMOID
// tanh(gamma x.v + coef0), with kernel_params = [gamma, coef0, degree].
//
// Regressor: with support vectors, y = sum_i coef_i K(x, sv_i) + rho (one_class: +1 when positive, else
// -1); without, y = x.coefficients + rho.
// Classifier: without support vectors (linear form), class j scores K(x, coefficients_j) + rho_j and the
// best score wins. With them (one-vs-one), each pair (i, j) of classes gets the decision value
// d = sum over the support vectors of i and j of their coefficients times K + rho_(i,j); d > 0 votes for
// i. Z holds the C(C-1)/2 decision values and the label is the class with most votes; with prob_a and
// prob_b, the decisions become pairwise probabilities (Platt) coupled into class probabilities (LIBSVM's
// multiclass_probability), Z holds those and the most probable class wins.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ops/ml/ml_kernel_util.h"

namespace {

using namespace tessera::ops::kernels::ml;
using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::KernelError;
using tessera::rt::KernelInfo;

struct SvmKernel {
  enum class Type { kLinear, kPoly, kRbf, kSigmoid } type = Type::kLinear;
  double gamma = 0, coef0 = 0, degree = 0;

  explicit SvmKernel(const KernelInfo& info) {
    std::string t = info.get_string("kernel_type", "LINEAR");
    if (t == "LINEAR") {
      type = Type::kLinear;
    } else if (t == "POLY") {
      type = Type::kPoly;
    } else if (t == "RBF") {
      type = Type::kRbf;
    } else if (t == "SIGMOID") {
      type = Type::kSigmoid;
    } else {
      throw KernelError(fmt::format("kernel_type '{}' is not LINEAR, POLY, RBF or SIGMOID", t));
    }
    std::vector<float> p = info.get_floats("kernel_params", {});
    if (!p.empty()) gamma = p[0];
    if (p.size() > 1) coef0 = p[1];
    if (p.size() > 2) degree = p[2];
  }

  double operator()(const double* x, const float* v, int64_t n) const {
    double s = 0;
    if (type == Type::kRbf) {
      for (int64_t i = 0; i < n; ++i) s += (x[i] - v[i]) * (x[i] - v[i]);
      return std::exp(-gamma * s);
    }
    for (int64_t i = 0; i < n; ++i) s += x[i] * v[i];
    switch (type) {
      case Type::kPoly:
        return std::pow(gamma * s + coef0, degree);
      case Type::kSigmoid:
        return std::tanh(gamma * s + coef0);
      default:
        return s;
    }
  }
};

class SVMRegressor : public tessera::rt::OpKernel {
 public:
  explicit SVMRegressor(const KernelInfo& info)
      : kernel_(info),
        coef_(info.get_floats("coefficients", {})),
        sv_(info.get_floats("support_vectors", {})),
        rho_(info.get_floats("rho", {0.0f})),
        n_sv_(info.get_int("n_supports", 0)),
        one_class_(info.get_int("one_class", 0) != 0),
        post_(parse_post(info.get_string("post_transform", "NONE"))) {
    if (n_sv_ < 0) throw KernelError(fmt::format("n_supports is {}; must be >= 0", n_sv_));
    if (n_sv_ > 0 && static_cast<int64_t>(coef_.size()) != n_sv_)
      throw KernelError(fmt::format("{} coefficients for {} support vectors", coef_.size(), n_sv_));
    if (rho_.empty()) throw KernelError("attribute 'rho' must hold one value");
  }

  void compute(KernelContext& ctx) const override {
    Rows x = read_rows(ctx);
    if (n_sv_ > 0 && static_cast<int64_t>(sv_.size()) != n_sv_ * x.c)
      ctx.fail(fmt::format("{} support vector values are not {} vectors of the {} features of X", sv_.size(),
                           n_sv_, x.c));
    if (n_sv_ == 0 && static_cast<int64_t>(coef_.size()) != x.c)
      ctx.fail(fmt::format("{} coefficients for the {} features of X", coef_.size(), x.c));
    float* y = ctx.output(0, DataType::kFloat, {x.n, 1}).data<float>();
    for (int64_t r = 0; r < x.n; ++r) {
      double s = rho_[0];
      if (n_sv_ > 0) {
        for (int64_t i = 0; i < n_sv_; ++i)
          s += coef_[static_cast<size_t>(i)] * kernel_(x.row(r), sv_.data() + i * x.c, x.c);
        if (one_class_) s = s > 0 ? 1.0 : -1.0;
      } else {
        for (int64_t j = 0; j < x.c; ++j) s += coef_[static_cast<size_t>(j)] * x.row(r)[j];
      }
      std::vector<double> v{s};
      apply_post(post_, v);
      y[r] = static_cast<float>(v[0]);
    }
  }

 private:
  SvmKernel kernel_;
  std::vector<float> coef_, sv_, rho_;
  int64_t n_sv_;
  bool one_class_;
  Post post_;
};

// LIBSVM's pairwise coupling: class probabilities from the pairwise probabilities r[i][j].
std::vector<double> couple(const std::vector<std::vector<double>>& r) {
  const size_t k = r.size();
  std::vector<std::vector<double>> q(k, std::vector<double>(k, 0.0));
  std::vector<double> p(k, 1.0 / static_cast<double>(k)), qp(k);
  for (size_t t = 0; t < k; ++t)
    for (size_t j = 0; j < k; ++j) {
      if (j == t) continue;
      q[t][t] += r[j][t] * r[j][t];
      q[t][j] = -r[j][t] * r[t][j];
    }
  const double eps = 0.005 / static_cast<double>(k);
  for (int iter = 0; iter < std::max<int>(100, static_cast<int>(k)); ++iter) {
    double pqp = 0;
    for (size_t t = 0; t < k; ++t) {
      qp[t] = 0;
      for (size_t j = 0; j < k; ++j) qp[t] += q[t][j] * p[j];
      pqp += p[t] * qp[t];
    }
    double max_error = 0;
    for (size_t t = 0; t < k; ++t) max_error = std::max(max_error, std::abs(qp[t] - pqp));
    if (max_error < eps) break;
    for (size_t t = 0; t < k; ++t) {
      if (q[t][t] == 0) continue;
      double diff = (-qp[t] + pqp) / q[t][t];
      p[t] += diff;
      pqp = (pqp + diff * (diff * q[t][t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
      for (size_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[t][j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
  return p;
}

class SVMClassifier : public tessera::rt::OpKernel {
 public:
  explicit SVMClassifier(const KernelInfo& info)
      : kernel_(info),
        coef_(info.get_floats("coefficients", {})),
        sv_(info.get_floats("support_vectors", {})),
        rho_(info.get_floats("rho", {})),
        prob_a_(info.get_floats("prob_a", {})),
        prob_b_(info.get_floats("prob_b", {})),
        per_class_(info.get_ints("vectors_per_class", {})),
        post_(parse_post(info.get_string("post_transform", "NONE"))) {
    strings_ = info.has_attr("classlabels_strings");
    if (strings_ == info.has_attr("classlabels_ints"))
      throw KernelError("exactly one of 'classlabels_strings' and 'classlabels_ints' must be given");
    str_labels_ = info.get_strings("classlabels_strings", {});
    int_labels_ = info.get_ints("classlabels_ints", {});
    classes_ = static_cast<int64_t>(strings_ ? str_labels_.size() : int_labels_.size());
    if (classes_ < 1) throw KernelError("the classifier needs at least one class label");
    for (int64_t v : per_class_) {
      if (v < 0) throw KernelError(fmt::format("vectors_per_class holds {}; must be >= 0", v));
      starts_.push_back(n_sv_);
      n_sv_ += v;
    }
    if (n_sv_ > 0) {
      if (static_cast<int64_t>(per_class_.size()) != classes_)
        throw KernelError(
            fmt::format("vectors_per_class has {} values for {} classes", per_class_.size(), classes_));
      if (static_cast<int64_t>(coef_.size()) != (classes_ - 1) * n_sv_)
        throw KernelError(fmt::format("{} coefficients; expected (classes - 1) * support vectors = {}",
                                      coef_.size(), (classes_ - 1) * n_sv_));
      pairs_ = classes_ * (classes_ - 1) / 2;
      if (static_cast<int64_t>(rho_.size()) != pairs_)
        throw KernelError(fmt::format("{} rho values for {} class pairs", rho_.size(), pairs_));
      proba_ = !prob_a_.empty();
      if (proba_ && (static_cast<int64_t>(prob_a_.size()) != pairs_ || prob_b_.size() != prob_a_.size()))
        throw KernelError(fmt::format("prob_a/prob_b have {}/{} values for {} class pairs", prob_a_.size(),
                                      prob_b_.size(), pairs_));
    } else if (static_cast<int64_t>(rho_.size()) != classes_) {
      throw KernelError(fmt::format("{} rho values for {} classes", rho_.size(), classes_));
    }
  }

  void compute(KernelContext& ctx) const override {
    Rows x = read_rows(ctx);
    if (n_sv_ > 0 && static_cast<int64_t>(sv_.size()) != n_sv_ * x.c)
      ctx.fail(fmt::format("{} support vector values are not {} vectors of the {} features of X", sv_.size(),
                           n_sv_, x.c));
    if (n_sv_ == 0 && static_cast<int64_t>(coef_.size()) != classes_ * x.c)
      ctx.fail(fmt::format("{} coefficients are not {} rows of the {} features of X", coef_.size(), classes_,
                           x.c));
    int64_t width = n_sv_ == 0 || proba_ ? classes_ : pairs_;
    auto& y = ctx.output(0, strings_ ? DataType::kString : DataType::kInt64, {x.n});
    float* z = ctx.output(1, DataType::kFloat, {x.n, width}).data<float>();
    for (int64_t r = 0; r < x.n; ++r) {
      std::vector<double> scores;
      size_t label = n_sv_ == 0 ? linear_row(x.row(r), x.c, scores) : svc_row(x.row(r), x.c, scores);
      apply_post(post_, scores);
      for (int64_t k = 0; k < width; ++k)
        z[r * width + k] = static_cast<float>(scores[static_cast<size_t>(k)]);
      if (strings_)
        y.data<std::string>()[r] = str_labels_[label];
      else
        y.data<int64_t>()[r] = int_labels_[label];
    }
  }

 private:
  size_t linear_row(const double* x, int64_t c, std::vector<double>& scores) const {
    for (int64_t j = 0; j < classes_; ++j)
      scores.push_back(kernel_(x, coef_.data() + j * c, c) + rho_[static_cast<size_t>(j)]);
    return static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
  }

  size_t svc_row(const double* x, int64_t c, std::vector<double>& scores) const {
    std::vector<double> k(static_cast<size_t>(n_sv_));
    for (int64_t i = 0; i < n_sv_; ++i) k[static_cast<size_t>(i)] = kernel_(x, sv_.data() + i * c, c);
    std::vector<int64_t> votes(static_cast<size_t>(classes_), 0);
    std::vector<std::vector<double>> pr(static_cast<size_t>(classes_),
                                        std::vector<double>(static_cast<size_t>(classes_), 0.0));
    size_t pair = 0;
    for (int64_t i = 0; i < classes_; ++i)
      for (int64_t j = i + 1; j < classes_; ++j, ++pair) {
        double d = rho_[pair];
        // Coefficient row j-1 weighs class i's vectors, row i weighs class j's (LIBSVM's layout).
        for (int64_t m = 0; m < per_class_[static_cast<size_t>(i)]; ++m) {
          int64_t v = starts_[static_cast<size_t>(i)] + m;
          d += coef_[static_cast<size_t>((j - 1) * n_sv_ + v)] * k[static_cast<size_t>(v)];
        }
        for (int64_t m = 0; m < per_class_[static_cast<size_t>(j)]; ++m) {
          int64_t v = starts_[static_cast<size_t>(j)] + m;
          d += coef_[static_cast<size_t>(i * n_sv_ + v)] * k[static_cast<size_t>(v)];
        }
        ++votes[static_cast<size_t>(d > 0 ? i : j)];
        scores.push_back(d);
        if (proba_) {
          double f = d * prob_a_[pair] + prob_b_[pair];
          double p = f >= 0 ? std::exp(-f) / (1.0 + std::exp(-f)) : 1.0 / (1.0 + std::exp(f));
          p = std::clamp(p, 1e-7, 1 - 1e-7);
          pr[static_cast<size_t>(i)][static_cast<size_t>(j)] = p;
          pr[static_cast<size_t>(j)][static_cast<size_t>(i)] = 1 - p;
        }
      }
    if (proba_) {
      scores = couple(pr);
      return static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
    }
    return static_cast<size_t>(std::max_element(votes.begin(), votes.end()) - votes.begin());
  }

  SvmKernel kernel_;
  std::vector<float> coef_, sv_, rho_, prob_a_, prob_b_;
  std::vector<int64_t> per_class_, starts_;
  Post post_;
  bool strings_ = false, proba_ = false;
  std::vector<std::string> str_labels_;
  std::vector<int64_t> int_labels_;
  int64_t classes_ = 0, n_sv_ = 0, pairs_ = 0;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_svm) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<SVMRegressor>("SVMRegressor").in_domain("ai.onnx.ml"));
  reg.add(KernelDef::of<SVMClassifier>("SVMClassifier").in_domain("ai.onnx.ml"));
}
