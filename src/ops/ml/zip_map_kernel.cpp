// Reference kernel of ZipMap (ai.onnx.ml): turns each row of class scores [N, C] into a map from the C
// class labels to the scores; the output is a sequence of N maps.
#include <fmt/format.h>

#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Tensor;

class ZipMap : public tessera::rt::OpKernel {
 public:
  explicit ZipMap(const tessera::rt::KernelInfo& info) {
    bool strings = info.has_attr("classlabels_strings");
    if (strings == info.has_attr("classlabels_int64s"))
      throw tessera::rt::KernelError(
          "exactly one of 'classlabels_strings' and 'classlabels_int64s' must be given");
    if (strings) {
      auto v = info.get_strings("classlabels_strings");
      labels_ = Tensor::from_vector<std::string>(DataType::kString, {static_cast<int64_t>(v.size())}, v);
    } else {
      auto v = info.get_ints("classlabels_int64s");
      labels_ = Tensor::from_vector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DataType::kFloat)
      ctx.fail(fmt::format("input 'X' must be float, got {}", tessera::ir::dtype_name(x.dtype())));
    if (x.rank() != 1 && x.rank() != 2)
      ctx.fail(fmt::format("input 'X' must be [N, C] or [C], got {}", tessera::rt::shape_str(x.shape())));
    const int64_t c = x.dim(-1), n = x.rank() == 2 ? x.dim(0) : 1;
    if (c != labels_.numel())
      ctx.fail(fmt::format("input 'X' has {} columns but there are {} class labels", c, labels_.numel()));
    tessera::rt::Sequence seq;
    seq.elem_type = tessera::ir::Type::map(labels_.dtype(), tessera::ir::Type::tensor(DataType::kFloat));
    for (int64_t r = 0; r < n; ++r) {
      std::vector<float> row(x.data<float>() + r * c, x.data<float>() + (r + 1) * c);
      seq.items.push_back(
          tessera::rt::Value::map({labels_, Tensor::from_vector<float>(DataType::kFloat, {c}, row)}));
    }
    ctx.set_output(0, tessera::rt::Value::sequence(std::move(seq)));
  }

 private:
  Tensor labels_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_zip_map) {
  reg.add(tessera::rt::KernelDef::of<ZipMap>("ZipMap").in_domain("ai.onnx.ml"));
}
