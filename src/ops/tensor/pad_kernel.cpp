// Reference kernel of Pad. Each axis gets 'begin' and 'end' amounts (negative ones crop); new positions
// take the constant (constant mode), the mirror image without the edge (reflect), the edge (edge) or
// the other end (wrap, 19+). Pads, the constant and the axes (18+) are inputs from 11, attributes before.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

enum class Mode { kConstant, kReflect, kEdge, kWrap };

Mode mode_of(const rt::KernelInfo& info) {
  std::string m = info.get_string("mode", "constant");
  if (m == "constant") return Mode::kConstant;
  if (m == "reflect") return Mode::kReflect;
  if (m == "edge") return Mode::kEdge;
  if (m == "wrap" && info.since_version() >= 19) return Mode::kWrap;
  throw KernelError(fmt::format("attribute 'mode' is '{}'; expected constant, reflect, edge{}", m,
                                info.since_version() >= 19 ? " or wrap" : ""));
}

// The input position that output position o of an axis of size `dim` (padded by `begin` in front)
// reads, or -1 for the constant.
int64_t source(Mode mode, int64_t o, int64_t begin, int64_t dim) {
  int64_t i = o - begin;
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case Mode::kConstant:
      return -1;
    case Mode::kEdge:
      return i < 0 ? 0 : dim - 1;
    case Mode::kWrap:
      return ((i % dim) + dim) % dim;
    case Mode::kReflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);
      int64_t r = ((i % period) + period) % period;
      return r < dim ? r : period - r;
    }
  }
  return -1;
}

class Pad : public rt::OpKernel {
 public:
  explicit Pad(const rt::KernelInfo& info) : mode_(mode_of(info)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    const int v = ctx.info().since_version();
    std::vector<int64_t> pads;
    std::vector<int64_t> axes;
    if (v < 11) {
      pads = ctx.info().get_ints(v < 2 ? "paddings" : "pads");
    } else {
      pads = int_input(ctx, 1, "pads");
      if (v >= 18 && ctx.has_input(3)) axes = normalize_axes(int_input(ctx, 3, "axes"), rank);
    }
    if (axes.empty() && !(v >= 18 && ctx.has_input(3)))
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    const int64_t n = static_cast<int64_t>(axes.size());
    if (static_cast<int64_t>(pads.size()) != 2 * n)
      ctx.fail(fmt::format("'pads' has {} entries; {} axes need {}", pads.size(), n, 2 * n));
    std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
    for (int64_t k = 0; k < n; ++k) {
      begin[axes[k]] = pads[k];
      end[axes[k]] = pads[n + k];
    }
    Shape out;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t dim = x.shape()[d];
      int64_t size = 0;
      if (__builtin_add_overflow(dim, begin[d], &size) || __builtin_add_overflow(size, end[d], &size))
        ctx.fail(fmt::format("pads {} and {} of axis {} overflow its size", begin[d], end[d], d));
      if (size < 0)
        ctx.fail(
            fmt::format("pads {} and {} of axis {} crop more than its size {}", begin[d], end[d], d, dim));
      if (dim == 0 && size > 0 && mode_ != Mode::kConstant)
        ctx.fail(fmt::format("cannot pad the empty axis {} in a mode other than constant", d));
      out.push_back(size);
    }
    Tensor& y = ctx.output(0, x.dtype(), out);
    if (y.numel() == 0) return;
    auto maps = axis_maps(out, [&](size_t d, int64_t o) { return source(mode_, o, begin[d], x.shape()[d]); });
    const Tensor* cv = v >= 11 ? ctx.optional_input(2) : nullptr;
    if (cv && cv->dtype() != x.dtype()) ctx.fail("input 'constant_value' must have the type of 'data'");
    if (cv && cv->numel() == 0) cv = nullptr;  // an empty constant means 0, as in ONNX Runtime
    dispatch_storage(x.dtype(), "Pad", [&]<class S>() {
      S fill{};
      if (cv) {
        fill = ElemSrc<S>(*cv)[0];
      } else if (v < 11) {
        // Pad-2's float 'value' attribute, stored in the element type (float types only before 11).
        float f = ctx.info().get_float("value", 0.0f);
        rt::dispatch(rt::FloatTypes{}, x.dtype(), "Pad", [&]<class T>() {
          if constexpr (sizeof(T) == sizeof(S) && !std::is_same_v<S, std::string>) {
            T t = static_cast<T>(f);
            std::memcpy(&fill, &t, sizeof(S));
          }
        });
      }
      ElemSrc<S> src(x);
      ElemDst<S> dst(y);
      copy_axis_maps<S>(&ctx.threads(), src.data(), x.shape(), maps, dst.data(), fill);
      dst.commit();
    });
  }

 private:
  Mode mode_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_pad) {
  reg.add(tessera::rt::KernelDef::of<Pad>("Pad"));
}
