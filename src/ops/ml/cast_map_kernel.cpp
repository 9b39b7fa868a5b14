// Reference kernel of CastMap (ai.onnx.ml): turns a map from int64 keys to floats or strings into a
// [1, K] tensor. DENSE lists the values in ascending key order; SPARSE puts the value of key k at
// column k of [1, max_map] (keys outside [0, max_map) are dropped, other columns are 0 or ""). Values
// are converted by cast_to: TO_FLOAT, TO_INT64 (truncated) or TO_STRING.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>

#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::KernelError;
using tessera::rt::Tensor;

// Value i of the map's values as a double (strings parsed; KernelError when not a number).
double value_as_double(const KernelContext& ctx, const Tensor& v, int64_t i) {
  if (v.dtype() != DataType::kString) return v.to_double(i);
  const std::string& s = v.data<std::string>()[i];
  try {
    size_t used = 0;
    double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (const std::exception&) {
  }
  ctx.fail(fmt::format("map value '{}' is not a number", s));
}

std::string value_as_string(const Tensor& v, int64_t i) {
  if (v.dtype() == DataType::kString) return v.data<std::string>()[i];
  return fmt::format("{}", v.to_double(i));
}

class CastMap : public tessera::rt::OpKernel {
 public:
  explicit CastMap(const tessera::rt::KernelInfo& info)
      : sparse_(info.get_string("map_form", "DENSE") == "SPARSE"), max_map_(info.get_int("max_map", 1)) {
    std::string to = info.get_string("cast_to", "TO_FLOAT");
    if (to == "TO_FLOAT") {
      out_ = DataType::kFloat;
    } else if (to == "TO_INT64") {
      out_ = DataType::kInt64;
    } else if (to == "TO_STRING") {
      out_ = DataType::kString;
    } else {
      throw KernelError(fmt::format("cast_to '{}' is not TO_FLOAT, TO_INT64 or TO_STRING", to));
    }
    std::string form = info.get_string("map_form", "DENSE");
    if (form != "DENSE" && form != "SPARSE")
      throw KernelError(fmt::format("map_form '{}' is not DENSE or SPARSE", form));
    if (sparse_ && max_map_ < 0) throw KernelError(fmt::format("max_map is {}; must be >= 0", max_map_));
  }

  void compute(KernelContext& ctx) const override {
    const tessera::rt::Value& in = ctx.value(0);
    if (!in.is_map()) ctx.fail(fmt::format("input 'X' must be a map, got {}", in.describe()));
    const Tensor& keys = in.map().keys;
    const Tensor& vals = in.map().values;
    if (keys.dtype() != DataType::kInt64 || keys.numel() != vals.numel())
      ctx.fail("input 'X' must map int64 keys to as many values");
    std::vector<int64_t> order(static_cast<size_t>(keys.numel()));
    std::iota(order.begin(), order.end(), 0);
    const int64_t* k = keys.data<int64_t>();
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return k[a] < k[b]; });
    int64_t width = sparse_ ? max_map_ : keys.numel();
    Tensor& y = ctx.output(0, out_, {1, width});
    if (out_ == DataType::kFloat) std::fill(y.data<float>(), y.data<float>() + width, 0.0f);
    if (out_ == DataType::kInt64) std::fill(y.data<int64_t>(), y.data<int64_t>() + width, 0);
    for (size_t j = 0; j < order.size(); ++j) {
      int64_t i = order[j];
      int64_t col = sparse_ ? k[i] : static_cast<int64_t>(j);
      if (col < 0 || col >= width) continue;
      if (out_ == DataType::kString) {
        y.data<std::string>()[col] = value_as_string(vals, i);
      } else {
        double d = value_as_double(ctx, vals, i);
        if (out_ == DataType::kFloat) {
          y.data<float>()[col] = static_cast<float>(d);
        } else {
          if (!(std::abs(d) < 9.2e18)) ctx.fail(fmt::format("map value {} does not fit int64", d));
          y.data<int64_t>()[col] = static_cast<int64_t>(d);
        }
      }
    }
  }

 private:
  DataType out_ = DataType::kFloat;
  bool sparse_;
  int64_t max_map_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_cast_map) {
  reg.add(tessera::rt::KernelDef::of<CastMap>("CastMap").in_domain("ai.onnx.ml"));
}
