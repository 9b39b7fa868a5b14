// Reference kernel of Einsum: a direct loop over the index space. Each output element is the sum, over
// the labels missing from the output, of the product of the operands' elements. A label repeated within
// an operand walks its diagonal; '...' stands for broadcast axes aligned from the right; without '->'
// the output is the ellipsis followed by the labels used once, in alphabetical (ASCII) order.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <vector>

#include "runtime/dispatch.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using rt::KernelContext;
using rt::Tensor;

// One term of the equation: its letters, with '.' standing for the ellipsis.
std::string parse_term(const std::string& s, const std::string& eq) {
  std::string t;
  bool ellipsis = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == '.') {
      if (ellipsis || s.compare(i, 3, "...") != 0)
        throw rt::KernelError(fmt::format("equation '{}': '{}' has a stray '.'", eq, s));
      ellipsis = true;
      t.push_back('.');
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(ch)))
      throw rt::KernelError(
          fmt::format("equation '{}': '{}' is not a subscript letter", eq, std::string(1, ch)));
    t.push_back(ch);
  }
  return t;
}

class Einsum : public rt::OpKernel {
 public:
  explicit Einsum(const rt::KernelInfo& info) {
    for (char ch : info.get_string("equation")) {
      if (!std::isspace(static_cast<unsigned char>(ch))) eq_.push_back(ch);
    }
    size_t arrow = eq_.find("->");
    std::string lhs = eq_.substr(0, arrow);
    for (size_t start = 0;;) {
      size_t comma = lhs.find(',', start);
      terms_.push_back(parse_term(lhs.substr(start, comma - start), eq_));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (arrow != std::string::npos) {
      explicit_ = true;
      out_ = parse_term(eq_.substr(arrow + 2), eq_);
    }
  }

  void compute(KernelContext& ctx) const override {
    if (ctx.input_count() != terms_.size()) {
      ctx.fail(fmt::format("equation '{}' has {} operand terms but the node has {} inputs", eq_,
                           terms_.size(), ctx.input_count()));
    }
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < terms_.size(); ++i) {
      ins.push_back(&ctx.input(i));
      if (ins.back()->dtype() != ins[0]->dtype()) ctx.fail("all inputs must have the same element type");
    }
    Plan p = plan(ins);
    rt::dispatch(rt::NumericTypes{}, ins[0]->dtype(), "Einsum", [&]<class T>() { run<T>(ctx, ins, p); });
  }

 private:
  // Label ids: 0..E-1 are the ellipsis axes, E + letter for the letters.
  struct Plan {
    std::vector<int64_t> sizes;                // per label id
    std::vector<int> out_ids, sum_ids;         // output labels in order, summed labels
    std::vector<std::vector<int64_t>> stride;  // per input, per label id (0 where absent or broadcast)
    rt::Shape out_shape;
  };

  Plan plan(const std::vector<const Tensor*>& ins) const {
    size_t ell = 0;
    std::vector<size_t> ell_rank(ins.size(), 0);
    for (size_t i = 0; i < ins.size(); ++i) {
      const std::string& t = terms_[i];
      bool has_ell = t.find('.') != std::string::npos;
      size_t named = t.size() - (has_ell ? 1 : 0);
      size_t rank = static_cast<size_t>(ins[i]->rank());
      if (has_ell ? rank < named : rank != named) {
        throw rt::KernelError(fmt::format("input {} has shape {} but its term in equation '{}' names {} axes",
                                          i, rt::shape_str(ins[i]->shape()), eq_, named));
      }
      ell_rank[i] = rank - named;
      ell = std::max(ell, ell_rank[i]);
    }
    const int letters = 128;
    Plan p;
    p.sizes.assign(ell + letters, -1);
    std::vector<int> count(ell + letters, 0);
    p.stride.assign(ins.size(), std::vector<int64_t>(ell + letters, 0));
    for (size_t i = 0; i < ins.size(); ++i) {
      const rt::Shape& shape = ins[i]->shape();
      std::vector<int64_t> strides(shape.size(), 1);
      for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
      size_t axis = 0;
      for (char ch : terms_[i]) {
        if (ch == '.') {
          for (size_t e = 0; e < ell_rank[i]; ++e, ++axis) {
            int id = static_cast<int>(ell - ell_rank[i] + e);
            bind(p, count, id, shape[axis], true, i);
            if (shape[axis] != 1) p.stride[i][id] += strides[axis];
          }
          continue;
        }
        int id = static_cast<int>(ell) + static_cast<unsigned char>(ch);
        bind(p, count, id, shape[axis], false, i);
        p.stride[i][id] += strides[axis];
        ++axis;
      }
    }
    std::vector<bool> in_out(ell + letters, false);
    auto add_out = [&](int id) {
      if (in_out[id])
        throw rt::KernelError(fmt::format("equation '{}': an output subscript appears twice", eq_));
      in_out[id] = true;
      p.out_ids.push_back(id);
    };
    if (explicit_) {
      for (char ch : out_) {
        if (ch == '.') {
          for (size_t e = 0; e < ell; ++e) add_out(static_cast<int>(e));
          continue;
        }
        int id = static_cast<int>(ell) + static_cast<unsigned char>(ch);
        if (count[id] == 0)
          throw rt::KernelError(
              fmt::format("equation '{}': output subscript '{}' appears in no input", eq_, ch));
        add_out(id);
      }
    } else {
      for (size_t e = 0; e < ell; ++e) add_out(static_cast<int>(e));
      for (int c = 0; c < letters; ++c) {
        if (count[ell + c] == 1) add_out(static_cast<int>(ell) + c);
      }
    }
    for (size_t id = 0; id < ell + letters; ++id) {
      if (count[id] > 0 && !in_out[id]) p.sum_ids.push_back(static_cast<int>(id));
    }
    for (int id : p.out_ids) p.out_shape.push_back(p.sizes[id] < 0 ? 1 : p.sizes[id]);
    rt::shape_numel(p.out_shape);
    return p;
  }

  // Records the size of label `id` seen on an axis of input i; ellipsis axes broadcast from size 1.
  void bind(Plan& p, std::vector<int>& count, int id, int64_t size, bool ellipsis, size_t input) const {
    ++count[id];
    int64_t& s = p.sizes[id];
    if (s < 0 || (ellipsis && s == 1)) {
      s = size;
    } else if (s != size && !(ellipsis && size == 1)) {
      throw rt::KernelError(
          fmt::format("equation '{}': input {} has size {} for a subscript that has size {} elsewhere", eq_,
                      input, size, s));
    }
  }

  template <class T>
  void run(KernelContext& ctx, const std::vector<const Tensor*>& ins, const Plan& p) const {
    using C = std::conditional_t<rt::is_float_v<T>, rt::compute_t<T>,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
    using U = std::make_unsigned_t<std::conditional_t<rt::is_float_v<T>, int64_t, C>>;
    Tensor& y = ctx.output(0, ins[0]->dtype(), p.out_shape);
    T* yp = y.data<T>();
    const size_t k = ins.size();
    std::vector<const T*> data(k);
    for (size_t i = 0; i < k; ++i) data[i] = ins[i]->data<T>();
    std::vector<int64_t> sum_sizes;
    for (int id : p.sum_ids) sum_sizes.push_back(p.sizes[id]);
    const int64_t sum_count = rt::shape_numel(sum_sizes);
    const int64_t total = y.numel();
    auto mul = [](C a, C b) -> C {
      if constexpr (rt::is_float_v<T>) {
        return a * b;
      } else {
        return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
      }
    };
    auto add = [](C a, C b) -> C {
      if constexpr (rt::is_float_v<T>) {
        return a + b;
      } else {
        return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
      }
    };
    ctx.threads().parallel_for(total, std::max<int64_t>(1, 4096 / std::max<int64_t>(sum_count, 1)),
                               [&](int64_t o0, int64_t o1) {
                                 std::vector<int64_t> base(k), off(k), sidx(p.sum_ids.size());
                                 for (int64_t o = o0; o < o1; ++o) {
                                   // Offsets of the output position in each input.
                                   std::fill(base.begin(), base.end(), 0);
                                   int64_t r = o;
                                   for (size_t d = p.out_ids.size(); d-- > 0;) {
                                     int id = p.out_ids[d];
                                     int64_t v = r % p.out_shape[d];
                                     r /= p.out_shape[d];
                                     for (size_t i = 0; i < k; ++i) base[i] += v * p.stride[i][id];
                                   }
                                   C acc = C(0);
                                   off = base;
                                   std::fill(sidx.begin(), sidx.end(), 0);
                                   for (int64_t s = 0; s < sum_count; ++s) {
                                     C prod = static_cast<C>(data[0][off[0]]);
                                     for (size_t i = 1; i < k; ++i)
                                       prod = mul(prod, static_cast<C>(data[i][off[i]]));
                                     acc = add(acc, prod);
                                     // Next summed position (odometer over sum_ids, last fastest).
                                     for (size_t d = p.sum_ids.size(); d-- > 0;) {
                                       int id = p.sum_ids[d];
                                       if (++sidx[d] < p.sizes[id]) {
                                         for (size_t i = 0; i < k; ++i) off[i] += p.stride[i][id];
                                         break;
                                       }
                                       for (size_t i = 0; i < k; ++i)
                                         off[i] -= (p.sizes[id] - 1) * p.stride[i][id];
                                       sidx[d] = 0;
                                     }
                                   }
                                   yp[o] = static_cast<T>(acc);
                                 }
                               });
  }

  std::string eq_;
  std::vector<std::string> terms_;
  std::string out_;
  bool explicit_ = false;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_einsum) {
  reg.add(tessera::rt::KernelDef::of<Einsum>("Einsum"));
}
