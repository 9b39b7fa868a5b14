// The CUDA backend's copying shape kernels: Expand, Transpose, Concat, Split, Slice, Tile, Pad, Where,
// ConstantOfShape, Trilu, EyeLike. Launch parameters (shapes, starts, pads, repeats) come from host
// inputs; elements move as raw storage of their size.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <utility>

#include "backends/cuda/data_typed.h"
#include "backends/cuda/data_util.h"
#include "backends/cuda/kernel_util.h"
#include "runtime/broadcast.h"
#include "runtime/half.h"

namespace tessera::cuda {

namespace {

using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

std::vector<int64_t> host_ints(const KernelContext& ctx, size_t i, const char* name) {
  const Tensor& t = ctx.input(i);
  if (!ir::dtype_is_int(t.dtype()))
    ctx.fail(fmt::format("input '{}' must be an integer tensor, got {}", name, ir::dtype_name(t.dtype())));
  if (t.rank() > 1) ctx.fail(fmt::format("input '{}' must be 1-D, got {}", name, rt::shape_str(t.shape())));
  return t.to_int64_vector();
}

// Copies `x` into a new output 0 of `shape` reading element idx at sum idx_d * src[d] + base.
void strided_output(KernelContext& ctx, size_t out, const Tensor& x, const Shape& shape,
                    const std::vector<int64_t>& src, int64_t base) {
  Tensor& y = ctx.output_uninitialized(out, x.dtype(), shape);
  StridedCopy c = strided(shape, src, row_strides(shape));
  c.src_base = base;
  launch_strided_copy(storage_bytes_of(ctx, x), x.raw(), y.raw(), c, native(ctx.stream()));
  check_launch(ctx);
}

void expand(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Shape target = host_ints(ctx, 1, "shape");
  Shape out = rt::broadcast_shapes(x.shape(), target);
  strided_output(ctx, 0, x, out, rt::broadcast_strides(x.shape(), out), 0);
}

class Transpose : public rt::OpKernel {
 public:
  explicit Transpose(const rt::KernelInfo& info) : perm_(info.get_ints("perm", {})) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    if (static_cast<int64_t>(perm.size()) != rank)
      ctx.fail(fmt::format("'perm' has {} entries for an input of rank {}", perm.size(), rank));
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    const auto in_strides = row_strides(x.shape());
    Shape out;
    std::vector<int64_t> src, norm;
    for (int64_t p : perm) {
      int64_t d = axis_of(p, rank, "perm entry");
      if (seen[static_cast<size_t>(d)]) ctx.fail(fmt::format("'perm' names axis {} twice", p));
      seen[static_cast<size_t>(d)] = true;
      out.push_back(x.shape()[static_cast<size_t>(d)]);
      src.push_back(in_strides[static_cast<size_t>(d)]);
      norm.push_back(d);
    }
    if (auto swap = block_swap(norm)) {
      // [batch, rows, cols] -> [batch, cols, rows]
      auto product = [&](size_t from, size_t to) {
        int64_t p = 1;
        for (size_t d = from; d < to; ++d) p *= x.shape()[d];
        return p;
      };
      const size_t r = static_cast<size_t>(rank);
      Tensor& y = ctx.output_uninitialized(0, x.dtype(), out);
      ctx.set_path("tiled");
      launch_transpose_tiles(storage_bytes_of(ctx, x), x.raw(), y.raw(), product(0, swap->first),
                             product(swap->first, swap->second), product(swap->second, r),
                             native(ctx.stream()));
      check_launch(ctx);
      return;
    }
    strided_output(ctx, 0, x, out, src, 0);
  }

 private:
  // A perm [0..b) + [m..r) + [b..m): leading axes in place and two runs of consecutive axes swapped (K^T
  // in attention, NCHW <-> NHWC), i.e. a batch of 2-D transposes; {b, m}, or nullopt.
  static std::optional<std::pair<size_t, size_t>> block_swap(const std::vector<int64_t>& p) {
    const int64_t r = static_cast<int64_t>(p.size());
    int64_t b = 0;
    while (b < r && p[static_cast<size_t>(b)] == b) ++b;
    if (b + 2 > r) return std::nullopt;
    const int64_t m = p[static_cast<size_t>(b)];
    size_t k = static_cast<size_t>(b);
    for (int64_t a = m; a < r; ++a, ++k)
      if (p[k] != a) return std::nullopt;
    for (int64_t a = b; a < m; ++a, ++k)
      if (p[k] != a) return std::nullopt;
    return std::make_pair(static_cast<size_t>(b), static_cast<size_t>(m));
  }
  std::vector<int64_t> perm_;
};

void concat(KernelContext& ctx) {
  const Tensor& first = ctx.input(0);
  const int64_t rank = first.rank();
  if (rank == 0) ctx.fail("Concat cannot join scalars");
  const int64_t axis = axis_of(ctx.info().get_int("axis"), rank);
  Shape out = first.shape();
  out[static_cast<size_t>(axis)] = 0;
  for (size_t k = 0; k < ctx.input_count(); ++k) {
    const Tensor& x = ctx.input(k);
    if (x.dtype() != first.dtype()) ctx.fail(fmt::format("input {} has another element type", k));
    if (x.rank() != rank) ctx.fail(fmt::format("input {} has rank {}, input 0 has {}", k, x.rank(), rank));
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && x.shape()[static_cast<size_t>(d)] != first.shape()[static_cast<size_t>(d)])
        ctx.fail(fmt::format("input {} has shape {}, which does not match {} off axis {}", k,
                             rt::shape_str(x.shape()), rt::shape_str(first.shape()), axis));
    out[static_cast<size_t>(axis)] += x.shape()[static_cast<size_t>(axis)];
  }
  Tensor& y = ctx.output_uninitialized(0, first.dtype(), out);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= out[static_cast<size_t>(d)];
    if (d > axis) inner *= out[static_cast<size_t>(d)];
  }
  const int64_t row = out[static_cast<size_t>(axis)] * inner;
  int64_t at = 0;
  for (size_t k = 0; k < ctx.input_count(); ++k) {
    const Tensor& x = ctx.input(k);
    const int64_t len = x.shape()[static_cast<size_t>(axis)] * inner;
    StridedCopy c = strided({outer, len}, {len, 1}, {row, 1});
    c.dst_base = at;
    launch_strided_copy(storage_bytes_of(ctx, x), x.raw(), y.raw(), c, native(ctx.stream()));
    at += len;
  }
  check_launch(ctx);
}

std::vector<int64_t> piece_sizes(const KernelContext& ctx, int64_t dim) {
  const int v = ctx.info().since_version();
  const int64_t outputs = static_cast<int64_t>(ctx.output_count());
  std::vector<int64_t> sizes;
  if (v < 13 && ctx.info().has_attr("split")) {
    sizes = ctx.info().get_ints("split");
  } else if (v >= 13 && ctx.has_input(1)) {
    sizes = host_ints(ctx, 1, "split");
  } else if (v >= 18 && ctx.info().has_attr("num_outputs")) {
    int64_t n = ctx.info().get_int("num_outputs");
    if (n != outputs)
      ctx.fail(fmt::format("attribute 'num_outputs' is {} but the node has {} outputs", n, outputs));
    const int64_t chunk = (dim + n - 1) / n;
    for (int64_t k = 0; k < n; ++k) sizes.push_back(std::clamp<int64_t>(dim - k * chunk, 0, chunk));
    return sizes;
  } else {
    if (dim % outputs != 0)
      ctx.fail(fmt::format("cannot split a dimension of {} into {} equal pieces", dim, outputs));
    return std::vector<int64_t>(static_cast<size_t>(outputs), dim / outputs);
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    ctx.fail(fmt::format("'split' has {} sizes but the node has {} outputs", sizes.size(), outputs));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) ctx.fail(fmt::format("'split' has a negative size {}", s));
    total += s;
  }
  if (total != dim)
    ctx.fail(
        fmt::format("'split' sizes {} add up to {}, not the axis size {}", rt::shape_str(sizes), total, dim));
  return sizes;
}

void split(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail("Split cannot cut a scalar");
  const int64_t axis = axis_of(ctx.info().get_int("axis", 0), x.rank());
  std::vector<int64_t> sizes = piece_sizes(ctx, x.shape()[static_cast<size_t>(axis)]);
  const auto strides = row_strides(x.shape());
  int64_t at = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Shape shape = x.shape();
    shape[static_cast<size_t>(axis)] = sizes[k];
    if (ctx.wants_output(k))
      strided_output(ctx, k, x, shape, strides, at * strides[static_cast<size_t>(axis)]);
    at += sizes[k];
  }
}

void slice(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.info().since_version() < 10) {
    starts = ctx.info().get_ints("starts");
    ends = ctx.info().get_ints("ends");
    axes = ctx.info().get_ints("axes", {});
  } else {
    starts = host_ints(ctx, 1, "starts");
    ends = host_ints(ctx, 2, "ends");
    if (ctx.has_input(3)) axes = host_ints(ctx, 3, "axes");
    if (ctx.has_input(4)) steps = host_ints(ctx, 4, "steps");
  }
  const size_t n = starts.size();
  if (ends.size() != n) ctx.fail(fmt::format("'starts' has {} entries but 'ends' has {}", n, ends.size()));
  if (axes.empty() && !(ctx.info().since_version() >= 10 && ctx.has_input(3)))
    for (size_t k = 0; k < n; ++k) axes.push_back(static_cast<int64_t>(k));
  if (axes.size() != n) ctx.fail(fmt::format("'axes' has {} entries but 'starts' has {}", axes.size(), n));
  if (steps.empty()) steps.assign(n, 1);
  if (steps.size() != n) ctx.fail(fmt::format("'steps' has {} entries but 'starts' has {}", steps.size(), n));
  const auto in_strides = row_strides(x.shape());
  Shape shape = x.shape();
  std::vector<int64_t> strides = in_strides;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  int64_t base = 0;
  for (size_t k = 0; k < n; ++k) {
    const int64_t axis = axis_of(axes[k], rank, "Slice axis");
    if (seen[static_cast<size_t>(axis)]) ctx.fail(fmt::format("'axes' has axis {} more than once", axes[k]));
    seen[static_cast<size_t>(axis)] = true;
    const int64_t dim = x.shape()[static_cast<size_t>(axis)], step = steps[k];
    if (step == 0) ctx.fail(fmt::format("'steps' has a 0 for axis {}", axis));
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t len;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      len = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      len = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    shape[static_cast<size_t>(axis)] = len;
    if (len > 0) base += s * in_strides[static_cast<size_t>(axis)];
    strides[static_cast<size_t>(axis)] = in_strides[static_cast<size_t>(axis)] * step;
  }
  strided_output(ctx, 0, x, shape, strides, base);
}

// Tile as a copy over 2r dimensions [repeat_0, dim_0, repeat_1, dim_1, ...] whose repeat axes read
// with stride 0.
void tile(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> repeats = host_ints(ctx, 1, "repeats");
  if (static_cast<int64_t>(repeats.size()) != x.rank())
    ctx.fail(fmt::format("'repeats' has {} entries for an input of rank {}", repeats.size(), x.rank()));
  const auto in_strides = row_strides(x.shape());
  Shape out, dims;
  std::vector<int64_t> src;
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 0) ctx.fail(fmt::format("'repeats' has a negative entry {} for axis {}", repeats[d], d));
    out.push_back(x.shape()[d] * repeats[d]);
    dims.insert(dims.end(), {repeats[d], x.shape()[d]});
    src.insert(src.end(), {0, in_strides[d]});
  }
  Tensor& y = ctx.output_uninitialized(0, x.dtype(), out);
  StridedCopy c = strided(dims, src, row_strides(dims));
  launch_strided_copy(storage_bytes_of(ctx, x), x.raw(), y.raw(), c, native(ctx.stream()));
  check_launch(ctx);
}

// The raw bits of `f` stored as a `t` element (Pad-2's float 'value').
uint64_t float_bits(float f, rt::DataType t) {
  uint64_t bits = 0;
  switch (t) {
    case rt::DataType::kFloat:
      std::memcpy(&bits, &f, 4);
      break;
    case rt::DataType::kDouble: {
      double d = f;
      std::memcpy(&bits, &d, 8);
      break;
    }
    case rt::DataType::kFloat16:
      bits = rt::float_to_half_bits(f);
      break;
    case rt::DataType::kBFloat16:
      bits = rt::float_to_bf16_bits(f);
      break;
    default:
      break;
  }
  return bits;
}

uint64_t first_element_bits(const Tensor& t, int bytes) {
  uint64_t bits = 0;
  std::memcpy(&bits, t.raw(), static_cast<size_t>(bytes));
  return bits;
}

class Pad : public rt::OpKernel {
 public:
  explicit Pad(const rt::KernelInfo& info) {
    std::string m = info.get_string("mode", "constant");
    if (m == "constant")
      mode_ = PadMode::kConstant;
    else if (m == "reflect")
      mode_ = PadMode::kReflect;
    else if (m == "edge")
      mode_ = PadMode::kEdge;
    else if (m == "wrap" && info.since_version() >= 19)
      mode_ = PadMode::kWrap;
    else
      throw rt::KernelError(
          fmt::format("attribute 'mode' is '{}'; expected constant, reflect, edge or wrap", m));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    const int v = ctx.info().since_version();
    if (rank > 8) ctx.fail(fmt::format("the CUDA Pad takes up to rank 8, got {}", rank));
    std::vector<int64_t> pads, axes;
    if (v < 11) {
      pads = ctx.info().get_ints(v < 2 ? "paddings" : "pads");
    } else {
      pads = host_ints(ctx, 1, "pads");
      if (v >= 18 && ctx.has_input(3))
        for (int64_t a : host_ints(ctx, 3, "axes")) axes.push_back(axis_of(a, rank, "Pad axis"));
    }
    if (axes.empty() && !(v >= 18 && ctx.has_input(3)))
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    const size_t n = axes.size();
    if (pads.size() != 2 * n)
      ctx.fail(fmt::format("'pads' has {} entries; {} axes need {}", pads.size(), n, 2 * n));
    PadShape p;
    p.rank = static_cast<int>(rank);
    std::vector<int64_t> end(static_cast<size_t>(rank), 0);
    for (size_t k = 0; k < n; ++k) {
      p.before[axes[k]] = pads[k];
      end[static_cast<size_t>(axes[k])] = pads[n + k];
    }
    Shape out;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t dim = x.shape()[static_cast<size_t>(d)];
      const int64_t size = dim + p.before[d] + end[static_cast<size_t>(d)];
      if (size < 0)
        ctx.fail(fmt::format("pads {} and {} of axis {} crop more than its size {}", p.before[d],
                             end[static_cast<size_t>(d)], d, dim));
      if (dim == 0 && size > 0 && mode_ != PadMode::kConstant)
        ctx.fail(fmt::format("cannot pad the empty axis {} in a mode other than constant", d));
      out.push_back(size);
      p.in_dims[d] = dim;
      p.out_dims[d] = size;
    }
    const int bytes = storage_bytes_of(ctx, x);
    uint64_t fill = 0;
    const Tensor* cv = v >= 11 ? ctx.optional_input(2) : nullptr;
    if (cv && cv->dtype() != x.dtype()) ctx.fail("input 'constant_value' must have the type of 'data'");
    if (cv && cv->numel() > 0) fill = first_element_bits(*cv, bytes);
    if (v < 11) fill = float_bits(ctx.info().get_float("value", 0.0f), x.dtype());
    Tensor& y = ctx.output_uninitialized(0, x.dtype(), out);
    launch_pad(bytes, mode_, x.raw(), y.raw(), p, fill, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  PadMode mode_ = PadMode::kConstant;
};

void where(KernelContext& ctx) {
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (c.dtype() != rt::DataType::kBool) ctx.fail("input 'condition' must be bool");
  if (x.dtype() != y.dtype()) ctx.fail("inputs X and Y must have one element type");
  const Shape* shapes[] = {&c.shape(), &x.shape(), &y.shape()};
  Shape out = rt::broadcast_shapes(std::span<const Shape* const>(shapes, 3));
  Broadcast3 b = broadcast3(out, {&c.shape(), &x.shape(), &y.shape()});
  Tensor& o = ctx.output_uninitialized(0, x.dtype(), out);
  launch_where(storage_bytes_of(ctx, x), static_cast<const bool*>(c.raw()), x.raw(), y.raw(), o.raw(),
               o.numel(), b, native(ctx.stream()));
  check_launch(ctx);
}

class ConstantOfShape : public rt::OpKernel {
 public:
  explicit ConstantOfShape(const rt::KernelInfo& info) {
    if (const ir::Tensor* t = info.get_tensor("value")) {
      Tensor v = Tensor::from_ir(*t);
      if (v.numel() != 1)
        throw rt::KernelError(fmt::format("attribute 'value' must hold one element, it has {}", v.numel()));
      auto b = storage_bytes(v.dtype());
      if (!b)
        throw rt::KernelError(
            fmt::format("the CUDA ConstantOfShape does not take {}", ir::dtype_name(v.dtype())));
      dtype_ = v.dtype();
      bytes_ = *b;
      bits_ = first_element_bits(v, bytes_);
    }
  }
  static bool supports(const rt::KernelInfo& info) {
    const ir::Tensor* t = info.get_tensor("value");
    return !t || storage_bytes(t->dtype);
  }
  void compute(KernelContext& ctx) const override {
    std::vector<int64_t> shape = host_ints(ctx, 0, "input");
    for (int64_t d : shape)
      if (d < 0) ctx.fail(fmt::format("the shape {} has a negative dimension", rt::shape_str(shape)));
    Tensor& y = ctx.output_uninitialized(0, dtype_, shape);
    launch_fill(bytes_, y.raw(), y.numel(), bits_, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  rt::DataType dtype_ = rt::DataType::kFloat;
  int bytes_ = 4;
  uint64_t bits_ = 0;
};

void trilu(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail(fmt::format("Trilu needs rank 2 or more, got {}", x.rank()));
  int64_t k = 0;
  if (ctx.has_input(1)) {
    const Tensor& kt = ctx.input(1);
    if (kt.numel() != 1 || !ir::dtype_is_int(kt.dtype())) ctx.fail("input 'k' must be one integer");
    k = kt.to_int64(0);
  }
  const bool upper = ctx.info().get_int("upper", 1) != 0;
  const int64_t rows = x.dim(-2), cols = x.dim(-1);
  const int64_t batch = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
  launch_trilu(storage_bytes_of(ctx, x), x.raw(), y.raw(), batch, rows, cols, k, upper, native(ctx.stream()));
  check_launch(ctx);
}

// EyeLike's output type: the 'dtype' attribute, else the input's.
rt::DataType eye_type(const rt::KernelInfo& info) {
  const int64_t dt = info.get_int("dtype", 0);
  return dt == 0 ? info.input_dtype(0) : static_cast<rt::DataType>(dt);
}

uint64_t one_bits(rt::DataType t) {
  switch (t) {
    case rt::DataType::kFloat:
    case rt::DataType::kDouble:
    case rt::DataType::kFloat16:
    case rt::DataType::kBFloat16:
      return float_bits(1.0f, t);
    default:
      return 1;
  }
}

void eye_like(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) ctx.fail(fmt::format("EyeLike needs a 2-D input, got {}", rt::shape_str(x.shape())));
  const rt::DataType t = eye_type(ctx.info());
  auto bytes = storage_bytes(t);
  if (!bytes || !scalar_type(t))
    ctx.fail(fmt::format("the CUDA EyeLike does not make {}", ir::dtype_name(t)));
  Tensor& y = ctx.output_uninitialized(0, t, x.shape());
  launch_fill(*bytes, y.raw(), y.numel(), 0, native(ctx.stream()));
  launch_eye_diagonal(*bytes, y.raw(), x.dim(0), x.dim(1), ctx.info().get_int("k", 0), one_bits(t),
                      native(ctx.stream()));
  check_launch(ctx);
}

rt::KernelFactory fn(rt::KernelFn f) {
  return [f](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<rt::FnKernel>(f); };
}

template <class K>
rt::KernelFactory make() {
  return [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<K>(i); };
}

bool moves_input0(const rt::KernelInfo& i) {
  return all_tensors(i) && movable_input(i, 0);
}

bool concat_ok(const rt::KernelInfo& i) {
  if (!all_tensors(i) || i.input_count() == 0) return false;
  for (size_t k = 0; k < i.input_count(); ++k)
    if (!movable_input(i, k)) return false;
  return true;
}

// TensorScatter (a KV-cache update): y = past_cache with `update` written along the sequence axis from
// write_indices[b] (a host input) for batch entry b, wrapping around in circular mode. One strided copy
// per batch entry and contiguous run of positions.
class TensorScatter : public rt::OpKernel {
 public:
  explicit TensorScatter(const rt::KernelInfo& info)
      : circular_(info.get_string("mode", "linear") == "circular") {}
  static bool supports(const rt::KernelInfo& i) {
    const std::string mode = i.get_string("mode", "linear");
    return all_tensors(i) && movable_input(i, 0) && i.has_input(1) &&
           (mode == "linear" || mode == "circular");
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& cache = ctx.input(0);
    const Tensor& update = ctx.input(1);
    const int64_t rank = cache.rank();
    if (rank < 2) ctx.fail(fmt::format("past_cache {} needs rank >= 2", rt::shape_str(cache.shape())));
    if (update.dtype() != cache.dtype()) ctx.fail("input 'update' must have the type of 'past_cache'");
    const auto axis = static_cast<size_t>(axis_of(ctx.info().get_int("axis", -2), rank));
    if (axis == 0) ctx.fail("attribute 'axis' cannot be the batch axis 0");
    bool fits = update.rank() == rank;
    for (size_t d = 0; fits && d < static_cast<size_t>(rank); ++d)
      fits = d == axis ? update.shape()[d] <= cache.shape()[d] : update.shape()[d] == cache.shape()[d];
    if (!fits)
      ctx.fail(fmt::format("update {} does not fit past_cache {} along axis {}",
                           rt::shape_str(update.shape()), rt::shape_str(cache.shape()), axis));
    const int64_t batch = cache.shape()[0], len = cache.shape()[axis], steps = update.shape()[axis];
    std::vector<int64_t> start(static_cast<size_t>(batch), 0);
    if (ctx.has_input(2)) {
      start = host_ints(ctx, 2, "write_indices");
      if (static_cast<int64_t>(start.size()) != batch)
        ctx.fail(fmt::format("input 'write_indices' has {} entries for a batch of {}", start.size(), batch));
    }
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t st = start[b];
      if (st < 0 || (circular_ ? (len == 0 && steps > 0) : st + steps > len))
        ctx.fail(fmt::format("write index {} of batch entry {} does not fit {} steps in a cache of {}", st, b,
                             steps, len));
    }
    Tensor& y = ctx.output_uninitialized(0, cache.dtype(), cache.shape());
    if (cache.nbytes() > 0)
      check(cudaMemcpyAsync(y.raw(), cache.raw(), cache.nbytes(), cudaMemcpyDeviceToDevice,
                            native(ctx.stream())),
            "cudaMemcpyAsync (TensorScatter)");
    const auto cs = row_strides(cache.shape()), us = row_strides(update.shape());
    const Shape inner(update.shape().begin() + 1, update.shape().end());
    const std::vector<int64_t> src(us.begin() + 1, us.end()), dst(cs.begin() + 1, cs.end());
    for (int64_t b = 0; b < batch && steps > 0; ++b) {
      // Positions [p0, p0 + count) of the update land from `to` on.
      auto copy = [&](int64_t p0, int64_t count, int64_t to) {
        if (count <= 0) return;
        Shape dims = inner;
        dims[axis - 1] = count;
        StridedCopy c = strided(dims, src, dst);
        c.src_base = b * us[0] + p0 * us[axis];
        c.dst_base = b * cs[0] + to * cs[axis];
        launch_strided_copy(storage_bytes_of(ctx, cache), update.raw(), y.raw(), c, native(ctx.stream()));
      };
      const int64_t first = circular_ ? start[b] % len : start[b];
      const int64_t run = std::min(steps, len - first);
      copy(0, run, first);
      copy(run, steps - run, 0);  // circular: the rest wraps to the front
    }
    check_launch(ctx);
  }

 private:
  bool circular_;
};

bool where_ok(const rt::KernelInfo& i) {
  return all_tensors(i) && i.input_dtype(0) == rt::DataType::kBool && movable_input(i, 1) &&
         movable_input(i, 2);
}

bool eye_ok(const rt::KernelInfo& i) {
  return all_tensors(i) && i.has_input(0) && scalar_type(eye_type(i)).has_value();
}

}  // namespace

void register_copy_kernels(KernelTable& t) {
  t.add(cuda_def("Expand", moves_input0, fn(expand)), HostIo{{1}, {}});
  t.add(cuda_def("Transpose", moves_input0, make<Transpose>()));
  t.add(cuda_def("Concat", concat_ok, fn(concat), 4));  // Concat-1 had a default axis
  t.add(cuda_def("Split", moves_input0, fn(split), 2), HostIo{{1}, {}});
  t.add(cuda_def("Slice", moves_input0, fn(slice)), HostIo{{1, 2, 3, 4}, {}});
  t.add(cuda_def("Tile", moves_input0, fn(tile), 6), HostIo{{1}, {}});
  t.add(cuda_def("Pad", moves_input0, make<Pad>(), 2), HostIo{{1, 2, 3}, {}});
  t.add(cuda_def("Where", where_ok, fn(where)));
  t.add(cuda_def("ConstantOfShape", ConstantOfShape::supports, make<ConstantOfShape>()), HostIo{{0}, {}});
  t.add(cuda_def("Trilu", moves_input0, fn(trilu)), HostIo{{1}, {}});
  t.add(cuda_def("EyeLike", eye_ok, fn(eye_like)));
  t.add(cuda_def("TensorScatter", TensorScatter::supports, make<TensorScatter>()), HostIo{{2}, {}});
}

}  // namespace tessera::cuda
