// Reference kernel of MaxUnpool: a zero tensor of the unpooled shape with each value of X written at the
// flat index I gives for it (indices span the whole output, batch and channel included, as MaxPool's
// Indices output produces them). Where indices repeat, the last value written wins.
//
// Indices always refer to the unpooled shape the window attributes give; an output_shape input only
// sizes the result, which (as in the ONNX reference) holds that unpooled tensor at its origin, zero
// padded where output_shape is larger and cut where it is smaller.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "ops/nn/window_kernel_util.h"
#include "runtime/dispatch.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

class MaxUnpool : public rt::OpKernel {
 public:
  explicit MaxUnpool(const rt::KernelInfo& info) : attrs_(read_window_attrs(info)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& idx = ctx.input(1);
    if (x.rank() < 3) ctx.fail("input X has shape " + rt::shape_str(x.shape()) + "; it needs spatial axes");
    if (idx.shape() != x.shape())
      ctx.fail(fmt::format("input I has shape {} but X has {}; they must match", rt::shape_str(idx.shape()),
                           rt::shape_str(x.shape())));
    if (idx.dtype() != rt::DataType::kInt64) ctx.fail("input I must be int64");
    rt::Shape inferred = unpooled_shape(ctx, x);
    rt::Shape ys = requested_shape(ctx, x).value_or(inferred);
    const int64_t total = rt::shape_numel(inferred);
    rt::shape_numel(ys);
    rt::dispatch(rt::FloatTypes{}, x.dtype(), "MaxUnpool", [&]<class T>() {
      Tensor& y = ctx.output(0, x.dtype(), ys);
      T* yp = y.data<T>();
      std::vector<T> scratch;
      T* dst = yp;
      if (ys != inferred) {
        scratch.assign(static_cast<size_t>(total), T(0));
        dst = scratch.data();
      }
      std::fill_n(yp, y.numel(), T(0));
      const T* xp = x.data<T>();
      const int64_t* ip = idx.data<int64_t>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        if (ip[i] < 0 || ip[i] >= total) {
          ctx.fail(fmt::format("I[{}] is {}; the unpooled shape {} has {} elements", i, ip[i],
                               rt::shape_str(inferred), total));
        }
        dst[ip[i]] = xp[i];
      }
      if (dst != yp) copy_region(scratch.data(), inferred, yp, ys);
    });
  }

 private:
  static std::optional<rt::Shape> requested_shape(KernelContext& ctx, const Tensor& x) {
    const Tensor* os = ctx.optional_input(2);
    if (!os) return std::nullopt;
    if (os->rank() != 1 || os->dim(0) != x.rank()) {
      ctx.fail(fmt::format("input output_shape has shape {}; it must hold {} values",
                           rt::shape_str(os->shape()), x.rank()));
    }
    rt::Shape s = os->to_int64_vector();
    if (s[0] != x.dim(0) || s[1] != x.dim(1))
      ctx.fail(
          fmt::format("output_shape {} must keep X's batch and channels {}", s, rt::shape_str(x.shape())));
    return s;
  }

  // Copies the common corner of `from` (shape fs) into `to` (shape ts, already zeroed).
  template <class T>
  static void copy_region(const T* from, const rt::Shape& fs, T* to, const rt::Shape& ts) {
    const size_t r = fs.size();
    rt::Shape common(r);
    for (size_t d = 0; d < r; ++d) common[d] = std::min(fs[d], ts[d]);
    const int64_t rows = rt::shape_numel(rt::Shape(common.begin(), common.end() - 1));
    const int64_t inner = common[r - 1];
    if (inner == 0) return;
    std::vector<int64_t> idx(r - 1, 0);
    for (int64_t q = 0; q < rows; ++q) {
      int64_t fo = 0, to_off = 0;
      for (size_t d = 0; d + 1 < r; ++d) {
        fo = fo * fs[d] + idx[d];
        to_off = to_off * ts[d] + idx[d];
      }
      std::copy_n(from + fo * fs[r - 1], inner, to + to_off * ts[r - 1]);
      for (size_t d = r - 1; d-- > 0;) {
        if (++idx[d] < common[d]) break;
        idx[d] = 0;
      }
    }
  }

  rt::Shape unpooled_shape(KernelContext& ctx, const Tensor& x) const {
    std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
    WindowAttrs plain = attrs_;
    plain.auto_pad = "VALID";
    std::vector<int64_t> big(in.size(), int64_t{1} << 30);
    WindowGeom g = resolve_window(plain, big, {});
    std::vector<int64_t> pads = attrs_.pads.empty() ? std::vector<int64_t>(2 * in.size(), 0) : attrs_.pads;
    if (pads.size() != 2 * in.size())
      ctx.fail(fmt::format("pads {} must have {} entries", pads, 2 * in.size()));
    rt::Shape s{x.dim(0), x.dim(1)};
    for (size_t i = 0; i < in.size(); ++i) {
      int64_t d = (in[i] - 1) * g.strides[i] + g.kernel[i] - pads[i] - pads[i + in.size()];
      if (d < 0) ctx.fail(fmt::format("the unpooled size along spatial axis {} would be {}", i, d));
      s.push_back(d);
    }
    return s;
  }

  WindowAttrs attrs_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_max_unpool) {
  reg.add(tessera::rt::KernelDef::of<MaxUnpool>("MaxUnpool"));
}
