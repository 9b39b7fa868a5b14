#include "runtime/broadcast.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera::rt {

Shape broadcast_shapes(std::span<const Shape* const> shapes) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Shape out(rank, 1);
  for (const Shape* s : shapes) {
    size_t off = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t d = (*s)[i];
      int64_t& o = out[off + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const Shape* t : shapes) all += (all.empty() ? "" : " and ") + shape_str(*t);
      throw KernelError(fmt::format("shapes {} do not broadcast (dimension {} of the result)", all, off + i));
    }
  }
  return out;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const Shape* s[] = {&a, &b};
  return broadcast_shapes(s);
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    size_t i = in.size() - 1 - k;
    size_t o = out.size() - 1 - k;
    st[o] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  return st;
}

}  // namespace tessera::rt
