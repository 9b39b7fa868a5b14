// Reference kernel of LabelEncoder (ai.onnx.ml). Version 1 maps strings to their index in
// classes_strings and integers back to those strings. Versions 2 and 4 map through a table given as
// keys_*/values_* lists or (4) keys_tensor/values_tensor; elements missing from the table take the
// default of the value type (default_tensor in version 4, else default_string/int64/float). Float keys
// match by value, and a NaN key matches NaN inputs.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <unordered_map>

#include "ops/control/tensor_slices.h"
#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::KernelError;
using tessera::rt::KernelInfo;
using tessera::rt::Tensor;

bool is_float(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble;
}
bool is_int(DataType t) {
  return t == DataType::kInt64 || t == DataType::kInt32 || t == DataType::kInt16;
}

double float_at(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kFloat ? static_cast<double>(t.data<float>()[i]) : t.data<double>()[i];
}
int64_t int_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kInt16:
      return t.data<int16_t>()[i];
    case DataType::kInt32:
      return t.data<int32_t>()[i];
    default:
      return t.data<int64_t>()[i];
  }
}

// One side of the table (keys or values) from its attributes; undefined tensor when none is set.
Tensor table_side(const KernelInfo& info, const std::string& side) {
  int count = 0;
  Tensor out;
  if (info.has_attr(side + "_strings")) {
    auto v = info.get_strings(side + "_strings");
    out = Tensor::from_vector<std::string>(DataType::kString, {static_cast<int64_t>(v.size())}, v);
    ++count;
  }
  if (info.has_attr(side + "_int64s")) {
    auto v = info.get_ints(side + "_int64s");
    out = Tensor::from_vector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
    ++count;
  }
  if (info.has_attr(side + "_floats")) {
    auto v = info.get_floats(side + "_floats");
    out = Tensor::from_vector<float>(DataType::kFloat, {static_cast<int64_t>(v.size())}, v);
    ++count;
  }
  if (const tessera::ir::Tensor* t = info.get_tensor(side + "_tensor")) {
    out = Tensor::from_ir(*t);
    out = out.reshaped({out.numel()});
    ++count;
  }
  if (count != 1)
    throw KernelError(
        fmt::format("exactly one of the {0}_strings, {0}_int64s, {0}_floats, {0}_tensor attributes must "
                    "be set, found {1}",
                    side, count));
  return out;
}

class LabelEncoder : public tessera::rt::OpKernel {
 public:
  explicit LabelEncoder(const KernelInfo& info) {
    if (info.since_version() == 1) {
      init_v1(info);
      return;
    }
    keys_ = table_side(info, "keys");
    values_ = table_side(info, "values");
    if (keys_.numel() != values_.numel())
      throw KernelError(fmt::format("{} keys but {} values", keys_.numel(), values_.numel()));
    default_ = default_for(info, values_.dtype());
    index_keys();
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (v1_) return compute_v1(ctx, x);
    if (x.dtype() != keys_.dtype())
      ctx.fail(fmt::format("input 'X' is {} but the keys are {}", tessera::ir::dtype_name(x.dtype()),
                           tessera::ir::dtype_name(keys_.dtype())));
    Tensor& y = ctx.output(0, values_.dtype(), x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t at = find(x, i);
      if (at >= 0)
        tessera::ops::kernels::copy_elements(values_, at, y, i, 1);
      else
        tessera::ops::kernels::copy_elements(default_, 0, y, i, 1);
    }
  }

 private:
  static Tensor default_for(const KernelInfo& info, DataType vt) {
    if (const tessera::ir::Tensor* t = info.get_tensor("default_tensor")) {
      Tensor d = Tensor::from_ir(*t);
      if (d.numel() != 1 || d.dtype() != vt)
        throw KernelError(fmt::format("attribute 'default_tensor' must hold one {} value, got {} {}",
                                      tessera::ir::dtype_name(vt), tessera::ir::dtype_name(d.dtype()),
                                      tessera::rt::shape_str(d.shape())));
      return d;
    }
    switch (vt) {
      case DataType::kString:
        return Tensor::scalar<std::string>(vt, info.get_string("default_string", "_Unused"));
      case DataType::kInt64:
        return Tensor::scalar<int64_t>(vt, info.get_int("default_int64", -1));
      case DataType::kInt32:
        return Tensor::scalar<int32_t>(vt, static_cast<int32_t>(info.get_int("default_int64", -1)));
      case DataType::kInt16:
        return Tensor::scalar<int16_t>(vt, static_cast<int16_t>(info.get_int("default_int64", -1)));
      case DataType::kFloat:
        return Tensor::scalar<float>(vt, info.get_float("default_float", -0.0f));
      case DataType::kDouble:
        return Tensor::scalar<double>(vt, info.get_float("default_float", -0.0f));
      default:
        throw KernelError(fmt::format("values of type {} are not supported", tessera::ir::dtype_name(vt)));
    }
  }

  void index_keys() {
    DataType kt = keys_.dtype();
    for (int64_t i = keys_.numel() - 1; i >= 0; --i) {  // backwards: the first of duplicate keys wins
      if (kt == DataType::kString) {
        str_index_[keys_.data<std::string>()[i]] = i;
      } else if (is_int(kt)) {
        int_index_[int_at(keys_, i)] = i;
      } else if (is_float(kt)) {
        double k = float_at(keys_, i);
        if (std::isnan(k))
          nan_index_ = i;
        else
          float_index_[k] = i;
      } else {
        throw KernelError(fmt::format("keys of type {} are not supported", tessera::ir::dtype_name(kt)));
      }
    }
  }

  // Index of x[i] among the keys, -1 when absent.
  int64_t find(const Tensor& x, int64_t i) const {
    DataType kt = keys_.dtype();
    if (kt == DataType::kString) {
      auto it = str_index_.find(x.data<std::string>()[i]);
      return it == str_index_.end() ? -1 : it->second;
    }
    if (is_int(kt)) {
      auto it = int_index_.find(int_at(x, i));
      return it == int_index_.end() ? -1 : it->second;
    }
    double v = float_at(x, i);
    if (std::isnan(v)) return nan_index_;
    auto it = float_index_.find(v);
    return it == float_index_.end() ? -1 : it->second;
  }

  void init_v1(const KernelInfo& info) {
    v1_ = true;
    classes_ = info.get_strings("classes_strings", {});
    for (size_t i = 0; i < classes_.size(); ++i) str_index_.emplace(classes_[i], static_cast<int64_t>(i));
    default_int_ = info.get_int("default_int64", -1);
    default_str_ = info.get_string("default_string", "_Unused");
  }

  void compute_v1(KernelContext& ctx, const Tensor& x) const {
    if (x.dtype() == DataType::kString) {
      int64_t* out = ctx.output(0, DataType::kInt64, x.shape()).data<int64_t>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto it = str_index_.find(x.data<std::string>()[i]);
        out[i] = it == str_index_.end() ? default_int_ : it->second;
      }
    } else if (x.dtype() == DataType::kInt64) {
      std::string* out = ctx.output(0, DataType::kString, x.shape()).data<std::string>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        int64_t v = x.data<int64_t>()[i];
        out[i] = v >= 0 && v < static_cast<int64_t>(classes_.size()) ? classes_[static_cast<size_t>(v)]
                                                                     : default_str_;
      }
    } else {
      ctx.fail(fmt::format("input 'X' must be string or int64, got {}", tessera::ir::dtype_name(x.dtype())));
    }
  }

  bool v1_ = false;
  Tensor keys_, values_, default_;
  std::unordered_map<std::string, int64_t> str_index_;
  std::unordered_map<int64_t, int64_t> int_index_;
  std::map<double, int64_t> float_index_;
  int64_t nan_index_ = -1;
  std::vector<std::string> classes_;
  int64_t default_int_ = -1;
  std::string default_str_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_label_encoder) {
  reg.add(tessera::rt::KernelDef::of<LabelEncoder>("LabelEncoder").in_domain("ai.onnx.ml"));
}
