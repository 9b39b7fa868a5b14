// Reference kernel of FeatureVectorizer (ai.onnx.ml): concatenates the columns of every input, row by
// row, into one float [N, sum(inputdimensions)]. Input i contributes inputdimensions[i] columns: extra
// columns are dropped and missing ones are zero (as ONNX Runtime does).
#include <fmt/format.h>

#include "ops/ml/ml_kernel_util.h"

namespace {

using namespace tessera::ops::kernels::ml;
using tessera::rt::KernelContext;

class FeatureVectorizer : public tessera::rt::OpKernel {
 public:
  explicit FeatureVectorizer(const tessera::rt::KernelInfo& info)
      : dims_(info.get_ints("inputdimensions", {})) {
    for (int64_t d : dims_)
      if (d < 0) throw tessera::rt::KernelError(fmt::format("inputdimensions holds {}; must be >= 0", d));
  }

  void compute(KernelContext& ctx) const override {
    if (dims_.size() != ctx.input_count())
      ctx.fail(fmt::format("inputdimensions has {} values but the node has {} inputs", dims_.size(),
                           ctx.input_count()));
    int64_t total = 0;
    for (int64_t d : dims_) total += d;
    std::vector<Rows> ins;
    int64_t n = -1;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      ins.push_back(read_rows(ctx, i));
      if (n >= 0 && ins.back().n != n)
        ctx.fail(fmt::format("input {} has {} rows but input 0 has {}", i, ins.back().n, n));
      n = ins.back().n;
    }
    tessera::rt::shape_numel(tessera::rt::Shape{n, total});
    float* y = ctx.output(0, tessera::ir::DataType::kFloat, {n, total}).data<float>();
    std::fill(y, y + n * total, 0.0f);
    for (int64_t r = 0; r < n; ++r) {
      int64_t at = r * total;
      for (size_t i = 0; i < ins.size(); ++i) {
        for (int64_t j = 0; j < std::min(dims_[i], ins[i].c); ++j)
          y[at + j] = static_cast<float>(ins[i].row(r)[j]);
        at += dims_[i];
      }
    }
  }

 private:
  std::vector<int64_t> dims_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_feature_vectorizer) {
  reg.add(tessera::rt::KernelDef::of<FeatureVectorizer>("FeatureVectorizer").in_domain("ai.onnx.ml"));
}
