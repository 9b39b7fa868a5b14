// The negative log-likelihood core shared by the NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// reference kernels: log-probabilities [N, C, d1...] (as doubles), integer targets [N, d1...], optional
// class weights [C], ignore_index, reduction none / sum / mean (mean divides by the summed weights of
// the entries that count, as the ONNX reference does).
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "ops/reduce/reduce_kernel_util.h"

namespace tessera::ops::kernels {

struct ClassLossDims {
  int64_t batch = 0, classes = 0, positions = 1;  // N, C, d1 * d2 * ...
};

// Checks scores/target/weight shapes; names the inputs as the op does.
inline ClassLossDims check_class_loss(const rt::KernelContext& ctx, const char* in_name,
                                      const char* target_name) {
  const rt::Tensor& in = ctx.input(0);
  const rt::Tensor& target = ctx.input(1);
  if (in.rank() < 2)
    ctx.fail(fmt::format("input '{}' must be [N, C, d1, ...] (rank 2 or more), got {}", in_name,
                         rt::shape_str(in.shape())));
  bool ok = target.rank() + 1 == in.rank() && target.dim(0) == in.dim(0);
  for (int k = 1; ok && k < target.rank(); ++k) ok = target.dim(k) == in.dim(k + 1);
  if (!ok)
    ctx.fail(fmt::format("'{}' {} does not match '{}' {}: it must be [N, d1, ...]", target_name,
                         rt::shape_str(target.shape()), in_name, rt::shape_str(in.shape())));
  if (target.dtype() != rt::DataType::kInt32 && target.dtype() != rt::DataType::kInt64)
    ctx.fail(fmt::format("'{}' must be int32 or int64, got {}", target_name, ir::dtype_name(target.dtype())));
  ClassLossDims d;
  d.batch = in.dim(0);
  d.classes = in.dim(1);
  d.positions = dims_product(in.shape(), 2, in.shape().size());
  if (const rt::Tensor* w = ctx.optional_input(2)) {
    if (w->rank() != 1 || w->dim(0) != d.classes)
      ctx.fail(
          fmt::format("the class weights must be [C] = [{}], got {}", d.classes, rt::shape_str(w->shape())));
  }
  return d;
}

// Computes the loss from log-probabilities `logp` (laid out like the [N, C, d...] input) into output 0.
inline void nll_from_log_prob(rt::KernelContext& ctx, const ClassLossDims& d, const std::vector<double>& logp,
                              rt::DataType out_dtype) {
  const rt::Tensor& target = ctx.input(1);
  const std::vector<int64_t> t = target.to_int64_vector();
  std::vector<double> weight;
  if (const rt::Tensor* w = ctx.optional_input(2)) weight = float_values(*w, ctx.info().op_type());
  std::optional<int64_t> ignore;
  if (ctx.info().has_attr("ignore_index")) ignore = ctx.info().get_int("ignore_index");
  const std::string reduction = ctx.info().get_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    ctx.fail(fmt::format("attribute 'reduction' must be 'none', 'sum' or 'mean', got '{}'", reduction));
  std::vector<double> loss(t.size());
  double total = 0, weight_sum = 0;
  for (int64_t n = 0; n < d.batch; ++n) {
    for (int64_t p = 0; p < d.positions; ++p) {
      const auto i = static_cast<size_t>(n * d.positions + p);
      const int64_t c = t[i];
      if (ignore && c == *ignore) continue;
      if (c < 0 || c >= d.classes)
        ctx.fail(fmt::format("target value {} at position {} is outside [0, {}) and is not ignore_index", c,
                             i, d.classes));
      const double w = weight.empty() ? 1.0 : weight[static_cast<size_t>(c)];
      loss[i] = -logp[static_cast<size_t>((n * d.classes + c) * d.positions + p)] * w;
      total += loss[i];
      weight_sum += w;
    }
  }
  auto write = [&](rt::Tensor& out, const std::vector<double>& v) {
    rt::dispatch(rt::FloatTypes{}, out_dtype, ctx.info().op_type(), [&]<class T>() {
      T* o = out.data<T>();
      for (size_t k = 0; k < v.size(); ++k) store_d(o, static_cast<int64_t>(k), v[k]);
    });
  };
  if (reduction == "none") {
    write(ctx.output(0, out_dtype, target.shape()), loss);
    return;
  }
  const double r = reduction == "sum" ? total : total / weight_sum;
  write(ctx.output(0, out_dtype, {}), {r});
}

}  // namespace tessera::ops::kernels
