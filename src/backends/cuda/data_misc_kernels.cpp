// The CUDA backend's Range, DepthToSpace/SpaceToDepth, Dropout (inference) and integer Clip.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>

#include "backends/cuda/data_typed.h"
#include "backends/cuda/data_util.h"
#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

namespace {

using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

const Tensor& scalar_input(const KernelContext& ctx, size_t i, const char* name) {
  const Tensor& t = ctx.input(i);
  if (t.numel() != 1)
    ctx.fail(fmt::format("input '{}' must be a scalar, got {}", name, rt::shape_str(t.shape())));
  return t;
}

// Element count of a float Range, computed in C (float for float32 and the 16-bit floats, double for
// float64) as the reference does, so that the counts agree where the rounding decides.
template <class C>
int64_t float_count(const KernelContext& ctx, C start, C limit, C delta) {
  if (delta == C(0)) ctx.fail("input 'delta' is 0");
  const double c = static_cast<double>(std::ceil((limit - start) / delta));
  if (std::isnan(c) || std::isinf(c)) ctx.fail("Range of non-finite length");
  if (c > 9.0e18) ctx.fail("Range has too many elements");
  return c > 0 ? static_cast<int64_t>(c) : 0;
}

void range(KernelContext& ctx) {
  const Tensor& ts = scalar_input(ctx, 0, "start");
  const Tensor& tl = scalar_input(ctx, 1, "limit");
  const Tensor& td = scalar_input(ctx, 2, "delta");
  const rt::DataType dt = ts.dtype();
  if (tl.dtype() != dt || td.dtype() != dt) ctx.fail("inputs start, limit and delta must have one type");
  auto st = scalar_type(dt);
  if (!st) ctx.fail(fmt::format("the CUDA Range does not take {}", ir::dtype_name(dt)));
  int64_t n = 0, istart = 0, idelta = 0;
  double start = ts.to_double(0), delta = td.to_double(0);
  if (dt == rt::DataType::kDouble) {
    n = float_count<double>(ctx, start, tl.to_double(0), delta);
  } else if (!ir::dtype_is_int(dt)) {
    n = float_count<float>(ctx, static_cast<float>(start), static_cast<float>(tl.to_double(0)),
                           static_cast<float>(delta));
  } else {
    istart = ts.to_int64(0);
    idelta = td.to_int64(0);
    if (idelta == 0) ctx.fail("input 'delta' is 0");
    // Exact: ceil division of (limit - start) by delta in 128 bits.
    const __int128 diff = static_cast<__int128>(tl.to_int64(0)) - istart;
    __int128 q = diff / idelta;
    if (q * idelta != diff && ((diff > 0) == (idelta > 0))) ++q;
    n = q > 0 ? static_cast<int64_t>(q) : 0;
  }
  Tensor& y = ctx.output_uninitialized(0, dt, {n});
  launch_range(*st, start, delta, istart, idelta, y.raw(), n, native(ctx.stream()));
  check_launch(ctx);
}

// DepthToSpace / SpaceToDepth on [N, C, H, W]: a 6-D walk of the output over input strides.
void depth_space(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool to_space = ctx.info().op_type() == "DepthToSpace";
  if (x.rank() != 4) ctx.fail(fmt::format("input must be 4-D [N,C,H,W], got {}", rt::shape_str(x.shape())));
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = ctx.info().get_int("blocksize");
  if (b <= 0 || b > (int64_t{1} << 31))
    ctx.fail(fmt::format("attribute 'blocksize' is {}; it must be positive", b));
  const bool has_mode = ctx.info().since_version() >= (to_space ? 11 : 28);
  const std::string mode = has_mode ? ctx.info().get_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD")
    ctx.fail(fmt::format("attribute 'mode' is '{}'; expected DCR or CRD", mode));
  const bool crd = mode == "CRD";
  const int64_t hw = h * w;
  Shape walk, out;
  std::vector<int64_t> src;
  if (to_space) {
    if (c % (b * b) != 0) ctx.fail(fmt::format("channels {} do not divide by blocksize^2 = {}", c, b * b));
    const int64_t c2 = c / (b * b);
    // Output walked as [N, C', H, b1, W, b2]; input channel DCR (b1*b + b2)*C' + c', CRD c'*b*b + b1*b + b2.
    walk = {n, c2, h, b, w, b};
    src = {c * hw, crd ? b * b * hw : hw, w, crd ? b * hw : b * c2 * hw, 1, crd ? hw : c2 * hw};
    out = {n, c2, h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0)
      ctx.fail(fmt::format("height {} and width {} must divide by blocksize {}", h, w, b));
    const int64_t h2 = h / b, w2 = w / b;
    // Output channel DCR (b1*b + b2)*C + c, CRD c*b*b + b1*b + b2, of input (n, c, h'*b + b1, w'*b + b2).
    if (crd) {
      walk = {n, c, b, b, h2, w2};
      src = {c * hw, hw, w, 1, b * w, b};
    } else {
      walk = {n, b, b, c, h2, w2};
      src = {c * hw, w, 1, hw, b * w, b};
    }
    out = {n, c * b * b, h2, w2};
  }
  Tensor& y = ctx.output_uninitialized(0, x.dtype(), out);
  auto bytes = storage_bytes(x.dtype());
  if (!bytes) ctx.fail(fmt::format("the CUDA kernel does not move {}", ir::dtype_name(x.dtype())));
  launch_strided_copy(*bytes, x.raw(), y.raw(), strided(walk, src, row_strides(walk)), native(ctx.stream()));
  check_launch(ctx);
}

// Dropout at inference: the input itself, and a mask of all true.
void dropout(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (const Tensor* r = ctx.optional_input(1))
    if (r->numel() != 1)
      ctx.fail(fmt::format("input 1 ('ratio') must be a scalar, got shape {}", rt::shape_str(r->shape())));
  ctx.set_output(0, x);
  if (ctx.output_count() < 2 || !ctx.wants_output(1)) return;
  Tensor& m = ctx.output_uninitialized(1, rt::DataType::kBool, x.shape());
  launch_fill(1, m.raw(), m.numel(), 1, native(ctx.stream()));
  check_launch(ctx);
}

// A bound of an integer Clip as raw bits of the element type.
bool int_bound(const KernelContext& ctx, size_t i, const char* name, uint64_t& bits) {
  const Tensor* b = ctx.optional_input(i);
  if (!b) return false;
  if (b->dtype() != ctx.input(0).dtype())
    ctx.fail(fmt::format("input '{}' has element type {}; it must be the input's type {}", name,
                         ir::dtype_name(b->dtype()), ir::dtype_name(ctx.input(0).dtype())));
  if (b->numel() != 1)
    ctx.fail(fmt::format("input '{}' must hold one element, got shape {}", name, rt::shape_str(b->shape())));
  const bool is_signed = ir::dtype_is_signed_int(b->dtype());
  bits = is_signed ? static_cast<uint64_t>(b->to_int64(0)) : 0;
  if (!is_signed) std::memcpy(&bits, b->raw(), b->nbytes());
  return true;
}

void int_clip(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto t = scalar_type(x.dtype());
  if (!t || !ir::dtype_is_int(x.dtype()))
    ctx.fail(fmt::format("the CUDA integer Clip does not take {}", ir::dtype_name(x.dtype())));
  uint64_t lo = 0, hi = 0;
  const bool has_lo = int_bound(ctx, 1, "min", lo), has_hi = int_bound(ctx, 2, "max", hi);
  Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
  launch_int_clip(*t, x.raw(), y.raw(), x.numel(), has_lo, lo, has_hi, hi, native(ctx.stream()));
  check_launch(ctx);
}

// CenterCropPad: a constant-0 pad whose negative amounts crop, centred on each axis.
void center_crop_pad(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  if (rank > 8) ctx.fail(fmt::format("the CUDA CenterCropPad takes up to rank 8, got {}", rank));
  const Tensor& st = ctx.input(1);
  if (!ir::dtype_is_int(st.dtype()) || st.rank() != 1) ctx.fail("input 'shape' must be a 1-D integer tensor");
  std::vector<int64_t> sizes = st.to_int64_vector(), axes;
  if (ctx.info().has_attr("axes")) {
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t a : ctx.info().get_ints("axes")) {
      const int64_t d = axis_of(a, rank);
      if (seen[static_cast<size_t>(d)]) ctx.fail(fmt::format("'axes' has axis {} more than once", a));
      seen[static_cast<size_t>(d)] = true;
      axes.push_back(d);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (sizes.size() != axes.size())
    ctx.fail(fmt::format("input 'shape' has {} entries for {} axes", sizes.size(), axes.size()));
  PadShape p;
  p.rank = static_cast<int>(rank);
  Shape out = x.shape();
  for (int64_t d = 0; d < rank; ++d) p.in_dims[d] = p.out_dims[d] = x.shape()[static_cast<size_t>(d)];
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t d = axes[k], dim = x.shape()[static_cast<size_t>(d)], size = sizes[k];
    if (size < 0) ctx.fail(fmt::format("input 'shape' has a negative size {} for axis {}", size, d));
    out[static_cast<size_t>(d)] = p.out_dims[d] = size;
    // Crop: skip (dim - size) / 2 in front; pad: (size - dim) / 2 zeros in front.
    p.before[d] = size <= dim ? -((dim - size) / 2) : (size - dim) / 2;
  }
  auto bytes = storage_bytes(x.dtype());
  if (!bytes) ctx.fail(fmt::format("the CUDA kernel does not move {}", ir::dtype_name(x.dtype())));
  Tensor& y = ctx.output_uninitialized(0, x.dtype(), out);
  launch_pad(*bytes, PadMode::kConstant, x.raw(), y.raw(), p, 0, native(ctx.stream()));
  check_launch(ctx);
}

void reverse_sequence(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& lens = ctx.input(1);
  const int64_t batch_axis = ctx.info().get_int("batch_axis", 1),
                time_axis = ctx.info().get_int("time_axis", 0);
  if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) || batch_axis == time_axis)
    ctx.fail(
        fmt::format("batch_axis {} and time_axis {} must be 0 and 1 in some order", batch_axis, time_axis));
  if (x.rank() < 2) ctx.fail(fmt::format("input must have rank 2 or more, got {}", x.rank()));
  if (lens.dtype() != rt::DataType::kInt64 || lens.numel() != x.dim(static_cast<int>(batch_axis)))
    ctx.fail(fmt::format("input 'sequence_lens' must be int64 with one entry per batch entry ({}), got {} {}",
                         x.dim(static_cast<int>(batch_axis)), ir::dtype_name(lens.dtype()),
                         rt::shape_str(lens.shape())));
  int64_t inner = 1;
  for (size_t d = 2; d < x.shape().size(); ++d) inner *= x.shape()[d];
  auto bytes = storage_bytes(x.dtype());
  if (!bytes) ctx.fail(fmt::format("the CUDA kernel does not move {}", ir::dtype_name(x.dtype())));
  Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
  launch_reverse_sequence(*bytes, x.raw(), static_cast<const int64_t*>(lens.raw()), y.raw(), x.dim(0),
                          x.dim(1), inner, batch_axis == 0, native(ctx.stream()));
  check_launch(ctx);
}

// BitCast between types of one width: a view of the same storage (bool reads any non-zero byte as true).
class BitCast : public rt::OpKernel {
 public:
  explicit BitCast(const rt::KernelInfo& info) : to_(static_cast<rt::DataType>(info.get_int("to", 0))) {}
  static bool supports(const rt::KernelInfo& info) {
    const rt::DataType to = static_cast<rt::DataType>(info.get_int("to", 0));
    return all_tensors(info) && movable_input(info, 0) && storage_bytes(to) &&
           ir::dtype_bits(to) == ir::dtype_bits(info.input_dtype(0));
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (ir::dtype_bits(x.dtype()) != ir::dtype_bits(to_))
      ctx.fail(fmt::format("BitCast: cannot reinterpret {} as {}", ir::dtype_name(x.dtype()),
                           ir::dtype_name(to_)));
    if (to_ != rt::DataType::kBool) {
      ctx.set_output(0, Tensor(to_, x.shape(), x.storage(), x.device()));
      return;
    }
    Tensor& y = ctx.output_uninitialized(0, to_, x.shape());
    launch_cast(ScalarType::kUint8, ScalarType::kBool, x.raw(), y.raw(), x.numel(), native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  rt::DataType to_;
};

// HannWindow, HammingWindow, BlackmanWindow: the size is read on the host, the window made on the device.
class Window : public rt::OpKernel {
 public:
  explicit Window(const rt::KernelInfo& info)
      : periodic_(info.get_int("periodic", 1) != 0),
        dtype_(static_cast<rt::DataType>(info.get_int("output_datatype", 1))) {
    const std::string& op = info.op_type();
    if (op == "HannWindow") a_ = {0.5, 0.5, 0.0};
    if (op == "HammingWindow") a_ = {25.0 / 46.0, 21.0 / 46.0, 0.0};
    if (op == "BlackmanWindow") a_ = {0.42, 0.5, 0.08};
  }
  static bool supports(const rt::KernelInfo& info) {
    const auto t = static_cast<rt::DataType>(info.get_int("output_datatype", 1));
    return all_tensors(info) && info.has_input(0) &&
           (t == rt::DataType::kFloat || t == rt::DataType::kDouble || t == rt::DataType::kFloat16 ||
            t == rt::DataType::kBFloat16);
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& s = ctx.input(0);
    if (s.numel() != 1 || s.rank() > 1)
      ctx.fail(fmt::format("size must be a scalar, got shape {}", rt::shape_str(s.shape())));
    const int64_t size = s.to_int64(0);
    if (size < 0) ctx.fail(fmt::format("size must not be negative, got {}", size));
    Tensor& y = ctx.output_uninitialized(0, dtype_, {size});
    launch_window(*scalar_type(dtype_), y.raw(), size, static_cast<double>(periodic_ ? size : size - 1),
                  a_[0], a_[1], a_[2], native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  bool periodic_;
  rt::DataType dtype_;
  std::array<double, 3> a_{};
};

rt::KernelFactory fn(rt::KernelFn f) {
  return [f](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<rt::FnKernel>(f); };
}

bool range_ok(const rt::KernelInfo& i) {
  const rt::DataType t = i.input_dtype(0);
  return all_tensors(i) && i.input_count() == 3 && scalar_type(t) && t != rt::DataType::kBool &&
         t != rt::DataType::kInt8 && t != rt::DataType::kUint8;
}

bool dropout_ok(const rt::KernelInfo& i) {
  return all_tensors(i) && movable_input(i, 0) && !i.has_input(2);  // training_mode given: the CPU decides
}

bool int_clip_ok(const rt::KernelInfo& i) {
  const rt::DataType t = i.input_dtype(0);
  if (!all_tensors(i) || !i.has_input(0) || !scalar_type(t) || !ir::dtype_is_int(t)) return false;
  for (size_t k = 1; k < i.input_count(); ++k)
    if (i.has_input(k) && i.input_dtype(k) != t) return false;
  return true;
}

}  // namespace

void register_misc_kernels(KernelTable& t) {
  t.add(cuda_def("Range", range_ok, fn(range), 11), HostIo{{0, 1, 2}, {}});
  t.add(cuda_def(
      "DepthToSpace", [](const rt::KernelInfo& i) { return movable_input(i, 0); }, fn(depth_space)));
  t.add(cuda_def(
      "SpaceToDepth", [](const rt::KernelInfo& i) { return movable_input(i, 0); }, fn(depth_space)));
  t.add(cuda_def("Dropout", dropout_ok, fn(dropout), 10));
  t.add(cuda_def("Clip", int_clip_ok, fn(int_clip), 12), HostIo{{1, 2}, {}});
  t.add(cuda_def(
            "CenterCropPad", [](const rt::KernelInfo& i) { return all_tensors(i) && movable_input(i, 0); },
            fn(center_crop_pad), 18),
        HostIo{{1}, {}});
  t.add(cuda_def(
      "ReverseSequence",
      [](const rt::KernelInfo& i) {
        return all_tensors(i) && movable_input(i, 0) && i.input_dtype(1) == rt::DataType::kInt64;
      },
      fn(reverse_sequence), 10));
  for (const char* w : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    t.add(cuda_def(
              w, Window::supports,
              [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Window>(i); }, 17),
          HostIo{{0}, {}});
  t.add(cuda_def("BitCast", BitCast::supports,
                 [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<BitCast>(i); }));
}

}  // namespace tessera::cuda
