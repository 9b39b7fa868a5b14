#include "passes/fuse_attention_view.h"

#include <algorithm>
#include <numeric>

namespace tessera::passes::attn {
namespace {

constexpr int kGuard = 16;  // view nodes followed above one operand at most

int64_t numel(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// Axes given as a constant second input (opset 13+) or as the `axes` attribute.
std::optional<std::vector<int64_t>> axes_of(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) return constant_ints(g, n.inputs[1]);
  return attr_ints(n, "axes");
}

bool normalize(std::vector<int64_t>& axes, int64_t rank) {
  for (auto& a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return false;
  }
  std::sort(axes.begin(), axes.end());
  return std::adjacent_find(axes.begin(), axes.end()) == axes.end();
}

std::optional<View> transpose(const ir::Node& n, const View& in) {
  const size_t rank = in.axes.size();
  std::vector<int64_t> perm(rank);
  if (auto p = attr_ints(n, "perm")) {
    perm = *p;
  } else {
    for (size_t k = 0; k < rank; ++k) perm[k] = static_cast<int64_t>(rank - 1 - k);
  }
  if (perm.size() != rank) return std::nullopt;
  View out = in;
  for (size_t k = 0; k < rank; ++k) {
    if (perm[k] < 0 || perm[k] >= static_cast<int64_t>(rank)) return std::nullopt;
    out.axes[k] = in.axes[static_cast<size_t>(perm[k])];
  }
  return out;
}

std::optional<View> squeeze(const ir::Graph& g, const ir::Node& n, const View& in) {
  const int64_t rank = static_cast<int64_t>(in.axes.size());
  const std::vector<int64_t> dims = in.dims();
  std::vector<int64_t> axes;
  if (n.inputs.size() > 1 || n.attr("axes")) {
    auto a = axes_of(g, n);
    if (!a || !normalize(*a, rank)) return std::nullopt;
    axes = *a;
  } else {
    for (int64_t k = 0; k < rank; ++k)
      if (dims[static_cast<size_t>(k)] == 1) axes.push_back(k);
  }
  View out;
  out.offset = in.offset;
  for (int64_t k = 0; k < rank; ++k) {
    const bool gone = std::binary_search(axes.begin(), axes.end(), k);
    if (gone && dims[static_cast<size_t>(k)] != 1) return std::nullopt;
    if (!gone) out.axes.push_back(in.axes[static_cast<size_t>(k)]);
  }
  return out;
}

std::optional<View> unsqueeze(const ir::Graph& g, const ir::Node& n, const View& in) {
  auto a = axes_of(g, n);
  if (!a) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in.axes.size() + a->size());
  if (!normalize(*a, rank)) return std::nullopt;
  View out;
  out.offset = in.offset;
  size_t from = 0;
  for (int64_t k = 0; k < rank; ++k)
    out.axes.push_back(std::binary_search(a->begin(), a->end(), k) ? View::Axis{} : in.axes[from++]);
  return out;
}

// Gather of one constant index (a scalar removes the axis, a [1] index keeps it with size 1).
std::optional<View> gather(const ir::Graph& g, const ir::Node& n, const View& in) {
  if (n.inputs.size() != 2) return std::nullopt;
  const ir::Tensor* idx = constant_value(g, n.inputs[1]);
  auto v = constant_ints(g, n.inputs[1]);
  if (!idx || !v || v->size() != 1 || idx->dims.size() > 1) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in.axes.size());
  int64_t axis = attr_int(n, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const auto ax = static_cast<size_t>(axis);
  const int64_t dim = in.dims()[ax];
  int64_t i = (*v)[0];
  if (i < 0) i += dim;
  if (i < 0 || i >= dim) return std::nullopt;
  View out = in;
  // The index's digits in the axis's pieces (innermost last).
  const View::Axis& pieces = in.axes[ax];
  for (size_t k = pieces.size(); k-- > 0;) {
    out.offset += (i % pieces[k].first) * pieces[k].second;
    i /= pieces[k].first;
  }
  if (idx->dims.empty()) {
    out.axes.erase(out.axes.begin() + axis);
  } else {
    out.axes[ax].clear();
  }
  return out;
}

// Reshape: the pieces of every axis in order, regrouped into the new axes, a piece split where a new
// axis ends inside it (its outer part goes with that axis: the piece (d, s) becomes (d1, s * d2),
// (d2, s) with d1 * d2 = d).
std::optional<View> reshape(const ir::Graph& g, const ir::Node& n, const View& in) {
  if (n.inputs.size() != 2) return std::nullopt;
  auto target = constant_ints(g, n.inputs[1]);
  if (!target) return std::nullopt;
  const std::vector<int64_t> in_dims = in.dims();
  const bool allowzero = attr_int(n, "allowzero", 0) != 0;
  std::vector<int64_t> dims = *target;
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 0 && !allowzero) {
      if (k >= in_dims.size()) return std::nullopt;
      dims[k] = in_dims[k];
    }
    if (dims[k] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int64_t>(k);
    } else if (dims[k] < 0) {
      return std::nullopt;
    } else {
      known *= dims[k];
    }
  }
  const int64_t total = numel(in_dims);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) return std::nullopt;
    dims[static_cast<size_t>(infer)] = total / known;
  }
  if (numel(dims) != total || total == 0) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> pieces;
  for (const auto& a : in.axes)
    for (const auto& p : a)
      if (p.first != 1) pieces.push_back(p);
  View out;
  out.offset = in.offset;
  size_t next = 0;
  for (int64_t d : dims) {
    View::Axis axis;
    int64_t have = 1;
    while (have < d) {
      if (next >= pieces.size()) return std::nullopt;
      auto [pd, ps] = pieces[next];
      const int64_t want = d / have;
      if (d % have != 0) return std::nullopt;
      if (pd <= want) {
        if (want % pd != 0) return std::nullopt;
        axis.push_back(pieces[next++]);
        have *= pd;
      } else {
        if (pd % want != 0) return std::nullopt;
        const int64_t inner = pd / want;
        axis.push_back({want, ps * inner});
        pieces[next] = {inner, ps};
        have *= want;
      }
    }
    out.axes.push_back(std::move(axis));
  }
  if (next != pieces.size()) return std::nullopt;
  return out;
}

// Axis `ax` narrowed to [start, start + len); the axis must be one piece (or none: size 1).
std::optional<View> narrow(const View& in, size_t ax, int64_t start, int64_t len) {
  View out = in;
  View::Axis& a = out.axes[ax];
  std::erase_if(a, [](const auto& p) { return p.first == 1; });
  if (len <= 0 || a.size() > 1 || (a.empty() && (start != 0 || len != 1))) return std::nullopt;
  if (a.empty()) return out;
  out.offset += start * a[0].second;
  a[0].first = len;
  if (len == 1) a.clear();
  return out;
}

// Output `which` of a Split: sizes from the second input (opset 13+), the `split` attribute, or equal
// parts (the last one shorter when they do not divide: opset 18's num_outputs).
std::optional<View> split(const ir::Graph& g, const ir::Node& n, const View& in, size_t which) {
  const int64_t rank = static_cast<int64_t>(in.axes.size());
  int64_t axis = attr_int(n, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const auto ax = static_cast<size_t>(axis);
  const int64_t dim = in.dims()[ax];
  std::vector<int64_t> sizes;
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    auto c = constant_ints(g, n.inputs[1]);
    if (!c) return std::nullopt;
    sizes = *c;
  } else if (auto a = attr_ints(n, "split")) {
    sizes = *a;
  } else {
    const auto parts = static_cast<int64_t>(n.outputs.size());
    const int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(chunk, dim - k * chunk));
  }
  if (sizes.size() != n.outputs.size() || numel(sizes) < 0) return std::nullopt;
  int64_t start = 0, total = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] < 0) return std::nullopt;
    if (k < which) start += sizes[k];
    total += sizes[k];
  }
  if (total != dim) return std::nullopt;
  return narrow(in, ax, start, sizes[which]);
}

// Slice with constant starts/ends (axes, steps of 1); opset 1-9 give them as attributes.
std::optional<View> slice(const ir::Graph& g, const ir::Node& n, const View& in) {
  auto input = [&](size_t k) -> std::optional<std::vector<int64_t>> {
    if (n.inputs.size() <= k || n.inputs[k].empty()) return std::nullopt;
    return constant_ints(g, n.inputs[k]);
  };
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (n.inputs.size() > 1) {
    starts = input(1), ends = input(2), axes = input(3), steps = input(4);
    if (!starts || !ends || (n.inputs.size() > 3 && !n.inputs[3].empty() && !axes) ||
        (n.inputs.size() > 4 && !n.inputs[4].empty() && !steps))
      return std::nullopt;
  } else {
    starts = attr_ints(n, "starts"), ends = attr_ints(n, "ends"), axes = attr_ints(n, "axes");
    if (!starts || !ends) return std::nullopt;
  }
  const int64_t rank = static_cast<int64_t>(in.axes.size());
  if (!axes) {
    axes.emplace();
    for (size_t k = 0; k < starts->size(); ++k) axes->push_back(static_cast<int64_t>(k));
  }
  if (ends->size() != starts->size() || axes->size() != starts->size()) return std::nullopt;
  if (steps && (steps->size() != starts->size() ||
                std::any_of(steps->begin(), steps->end(), [](int64_t s) { return s != 1; })))
    return std::nullopt;
  std::optional<View> out = in;
  for (size_t k = 0; k < starts->size() && out; ++k) {
    int64_t axis = (*axes)[k];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    const int64_t dim = out->dims()[static_cast<size_t>(axis)];
    auto clamp = [&](int64_t x) { return std::clamp(x < 0 ? x + dim : x, int64_t{0}, dim); };
    const int64_t b = clamp((*starts)[k]), e = clamp((*ends)[k]);
    out = narrow(*out, static_cast<size_t>(axis), b, e - b);
  }
  return out;
}

}  // namespace

std::optional<View> apply_view_node(const RuleContext& ctx, const ir::Node& n, const View& in,
                                    const std::string& output) {
  const ir::Graph& g = ctx.graph;
  auto at = std::find(n.outputs.begin(), n.outputs.end(), output);
  if (at == n.outputs.end() || n.inputs.empty()) return std::nullopt;
  if (n.outputs.size() != 1 && !is_op(n, "Split")) return std::nullopt;
  std::optional<View> out;
  if (is_op(n, "Transpose")) {
    out = transpose(n, in);
  } else if (is_op(n, "Squeeze")) {
    out = squeeze(g, n, in);
  } else if (is_op(n, "Unsqueeze")) {
    out = unsqueeze(g, n, in);
  } else if (is_op(n, "Gather")) {
    out = gather(g, n, in);
  } else if (is_op(n, "Reshape")) {
    out = reshape(g, n, in);
  } else if (is_op(n, "Split")) {
    out = split(g, n, in, static_cast<size_t>(at - n.outputs.begin()));
  } else if (is_op(n, "Slice")) {
    out = slice(g, n, in);
  } else if (is_op(n, "Identity")) {
    out = in;
  }
  if (!out) return std::nullopt;
  // The checker's static shape, where it knows one, must agree with the view's.
  if (auto s = static_shape(ctx, output); s && *s != out->dims()) return std::nullopt;
  return out;
}

std::optional<Packed> factor_view(const int64_t (&dims)[4], const int64_t (&strides)[4], int64_t offset,
                                  int64_t numel) {
  if (dims[3] < 2 || strides[3] != 1) return std::nullopt;
  // Axes longer than 1, innermost (smallest stride) first; the others are placed in front.
  std::vector<int> order;
  std::vector<int> ones;
  for (int w = 0; w < 4; ++w) (dims[w] > 1 ? order : ones).push_back(w);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return strides[a] < strides[b]; });
  // Built innermost first: (size, which) with which = 0..3 an operand axis, 4 the packed one.
  std::vector<std::pair<int64_t, int>> axes;
  int64_t expected = 1, packed_stride = 0, packed_size = 0;
  auto pack = [&](int64_t stride) {
    if (packed_size || stride <= expected || stride % expected != 0) return false;
    packed_size = stride / expected;
    packed_stride = expected;
    axes.push_back({packed_size, 4});
    return true;
  };
  for (int w : order) {
    if (strides[w] != expected && !pack(strides[w])) return std::nullopt;
    axes.push_back({dims[w], w});
    expected = strides[w] * dims[w];
  }
  if (numel != expected && !pack(numel)) return std::nullopt;
  Packed out;
  if (packed_size) {
    if (offset % packed_stride != 0 || offset / packed_stride >= packed_size) return std::nullopt;
    out.part = offset / packed_stride;
  } else if (offset != 0) {
    return std::nullopt;
  }
  for (int w : ones) axes.push_back({1, w});
  std::reverse(axes.begin(), axes.end());
  out.axes.assign(4, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    out.shape.push_back(axes[k].first);
    if (axes[k].second < 4) out.axes[static_cast<size_t>(axes[k].second)] = static_cast<int64_t>(k);
  }
  return out;
}

std::optional<ChainOperand> chain_operand(const RuleContext& ctx, const std::string& value,
                                          const std::vector<int64_t>& axes) {
  const ir::Graph& g = ctx.graph;
  if (axes.size() != 4) return std::nullopt;
  // The view-like nodes above the operand, operand first.
  std::vector<size_t> up;
  std::vector<std::string> outs;  // the value of each that the chain follows
  std::string v = value;
  for (int guard = 0; guard < kGuard; ++guard) {
    auto p = producer(g, v);
    if (!p) break;
    const ir::Node& n = g.nodes[*p];
    const bool split = is_op(n, "Split");
    if (!(split || is_op(n, "Transpose") || is_op(n, "Squeeze") || is_op(n, "Unsqueeze") ||
          is_op(n, "Gather") || is_op(n, "Slice") || is_op(n, "Reshape") || is_op(n, "Identity")) ||
        (n.outputs.size() != 1 && !split))
      break;
    up.push_back(*p);
    outs.push_back(v);
    v = n.inputs[0];
  }
  // The furthest base first: the longest chain that is a view all the way.
  for (size_t start = up.size(); start-- > 0;) {
    const std::string base = g.nodes[up[start]].inputs[0];
    auto shape = static_shape(ctx, base);
    if (!shape || shape->empty()) continue;
    View view;
    int64_t stride = numel(*shape);
    for (int64_t d : *shape) {
      stride /= d;
      view.axes.push_back(d == 1 ? View::Axis{} : View::Axis{{d, stride}});
    }
    bool ok = true;
    for (size_t k = start + 1; k-- > 0 && ok;) {
      auto next = apply_view_node(ctx, g.nodes[up[k]], view, outs[k]);
      ok = next.has_value();
      if (ok) view = *next;
    }
    if (!ok || view.axes.size() != 4) continue;
    // Each operand axis must be one piece (or none: size 1) to have a stride.
    int64_t d[4], s[4];
    for (size_t w = 0; w < 4 && ok; ++w) {
      View::Axis a = view.axes[static_cast<size_t>(axes[w])];
      std::erase_if(a, [](const auto& p) { return p.first == 1; });
      ok = a.size() <= 1;
      d[w] = a.empty() ? 1 : a[0].first;
      s[w] = a.empty() ? 0 : a[0].second;
    }
    if (!ok) continue;
    auto packed = factor_view(d, s, view.offset, numel(*shape));
    if (!packed) continue;
    ChainOperand out;
    out.base = base;
    out.packed = *packed;
    out.chain.assign(up.rbegin() + static_cast<ptrdiff_t>(up.size() - 1 - start), up.rend());
    // A Transpose or Gather before the last Reshape/Squeeze/Unsqueeze copies data that the plain trace
    // (Transposes right above the product) would leave in place.
    bool seen_view = false;
    for (size_t k = 0; k <= start; ++k) {  // operand first, i.e. downstream to upstream
      const ir::Node& n = g.nodes[up[k]];
      if (is_op(n, "Gather") || is_op(n, "Split") || is_op(n, "Slice") ||
          (is_op(n, "Transpose") && seen_view))
        out.copies = true;
      if (is_op(n, "Reshape") || is_op(n, "Squeeze") || is_op(n, "Unsqueeze")) seen_view = true;
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace tessera::passes::attn
