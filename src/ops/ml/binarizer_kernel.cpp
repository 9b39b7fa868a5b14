// Reference kernel of Binarizer (ai.onnx.ml): 1 where x > threshold, else 0, in X's element type.
#include "runtime/dispatch.h"
#include "runtime/kernel.h"

namespace {

using tessera::rt::KernelContext;
using tessera::rt::Tensor;

class Binarizer : public tessera::rt::OpKernel {
 public:
  explicit Binarizer(const tessera::rt::KernelInfo& info) : threshold_(info.get_float("threshold", 0.0f)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    tessera::rt::dispatch(tessera::rt::TypeList<float, double, int32_t, int64_t>{}, x.dtype(), "Binarizer",
                          [&]<class T>() {
                            Tensor& y = ctx.output(0, x.dtype(), x.shape());
                            const T* in = x.data<T>();
                            T* out = y.data<T>();
                            // Compared in double so that an integer X meets a fractional threshold exactly.
                            for (int64_t i = 0; i < x.numel(); ++i)
                              out[i] = static_cast<double>(in[i]) > threshold_ ? T(1) : T(0);
                          });
  }

 private:
  double threshold_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_binarizer) {
  reg.add(tessera::rt::KernelDef::of<Binarizer>("Binarizer").in_domain("ai.onnx.ml"));
}
