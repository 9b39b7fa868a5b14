#include "runtime/value_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessera::rt {

namespace {

ir::Type inner_type(const ir::Type& t) {
  return t.inner ? *t.inner : ir::Type{};
}

}  // namespace

Value value_from_data(const onnx::DataValue& d, const ir::Type& type) {
  switch (d.kind) {
    case onnx::DataValue::Kind::kTensor:
      return Value(Tensor::from_ir(d.tensor).clone());
    case onnx::DataValue::Kind::kSequence: {
      Sequence s;
      s.elem_type = type.kind == ir::Type::Kind::kSequence ? inner_type(type) : ir::Type{};
      for (const auto& it : d.items) s.items.push_back(value_from_data(it, s.elem_type));
      if (s.elem_type.is_none() && !s.items.empty() && s.items[0].is_tensor())
        s.elem_type = ir::Type::tensor(s.items[0].tensor().dtype());
      return Value::sequence(std::move(s));
    }
    case onnx::DataValue::Kind::kMap: {
      Map m;
      m.keys = Tensor::from_ir(d.keys).clone();
      if (!d.values.empty() && !d.values[0].items.empty())
        m.values = Tensor::from_ir(d.values[0].items[0].tensor);
      return Value::map(std::move(m));
    }
    case onnx::DataValue::Kind::kOptional: {
      ir::Type elem = type.kind == ir::Type::Kind::kOptional ? inner_type(type) : ir::Type{};
      if (d.items.empty()) return Value::none(type);
      return value_from_data(d.items[0], elem);
    }
  }
  return {};
}

onnx::DataValue value_to_data(const Value& v, const std::string& name) {
  onnx::DataValue d;
  d.name = name;
  switch (v.kind()) {
    case Value::Kind::kTensor:
      d.kind = onnx::DataValue::Kind::kTensor;
      d.tensor = v.tensor().to_ir(name);
      break;
    case Value::Kind::kSequence:
      d.kind = onnx::DataValue::Kind::kSequence;
      d.elem_type = 1;
      for (const auto& it : v.sequence().items) d.items.push_back(value_to_data(it));
      break;
    case Value::Kind::kMap: {
      d.kind = onnx::DataValue::Kind::kMap;
      d.keys = v.map().keys.to_ir("keys");
      onnx::DataValue vals;
      vals.kind = onnx::DataValue::Kind::kSequence;
      vals.elem_type = 1;
      onnx::DataValue t;
      t.tensor = v.map().values.to_ir();
      vals.items.push_back(std::move(t));
      d.values.push_back(std::move(vals));
      break;
    }
    case Value::Kind::kNone:
      d.kind = onnx::DataValue::Kind::kOptional;
      break;
  }
  return d;
}

namespace {

std::string compare_tensors(const Tensor& e, const Tensor& a, const Tolerance& tol) {
  if (e.dtype() != a.dtype())
    return fmt::format("element type: expected {}, got {}", ir::dtype_name(e.dtype()),
                       ir::dtype_name(a.dtype()));
  if (e.shape() != a.shape())
    return fmt::format("shape: expected {}, got {}", shape_str(e.shape()), shape_str(a.shape()));
  int64_t bad = 0, first = -1;
  double max_abs = 0;
  if (e.dtype() == DataType::kString) {
    for (int64_t i = 0; i < e.numel(); ++i)
      if (e.data<std::string>()[i] != a.data<std::string>()[i] && bad++ == 0) first = i;
    if (!bad) return {};
    return fmt::format("element {} of {}: expected \"{}\", got \"{}\" ({} differ)", first,
                       shape_str(e.shape()), e.data<std::string>()[first], a.data<std::string>()[first], bad);
  }
  if (ir::dtype_bits(e.dtype()) < 8 || (ir::dtype_is_float(e.dtype()) && ir::dtype_bits(e.dtype()) == 8)) {
    // Packed and 8-bit float types: compare the bytes.
    if (e.nbytes() == a.nbytes() && std::memcmp(e.raw(), a.raw(), e.nbytes()) == 0) return {};
    return fmt::format("{} bytes differ", ir::dtype_name(e.dtype()));
  }
  bool is_float = ir::dtype_is_float(e.dtype());
  for (int64_t i = 0; i < e.numel(); ++i) {
    double x = e.to_double(i), y = a.to_double(i);
    bool ok;
    if (!is_float) {
      ok = e.to_int64(i) == a.to_int64(i) && x == y;
    } else if (std::isnan(x) || std::isnan(y)) {
      ok = std::isnan(x) && std::isnan(y);
    } else if (std::isinf(x) || std::isinf(y)) {
      ok = x == y;
    } else {
      double d = std::fabs(x - y);
      max_abs = std::max(max_abs, d);
      ok = d <= tol.atol + tol.rtol * std::fabs(x);
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (!bad) return {};
  return fmt::format("element {} of {}: expected {}, got {} ({} of {} differ; max abs error {:.3g})", first,
                     shape_str(e.shape()), e.to_double(first), a.to_double(first), bad, e.numel(), max_abs);
}

}  // namespace

std::string compare_values(const Value& expected, const Value& actual, const Tolerance& tol) {
  if (expected.kind() != actual.kind())
    return fmt::format("expected {}, got {}", expected.describe(), actual.describe());
  switch (expected.kind()) {
    case Value::Kind::kNone:
      return {};
    case Value::Kind::kTensor:
      return compare_tensors(expected.tensor(), actual.tensor(), tol);
    case Value::Kind::kMap: {
      std::string k = compare_tensors(expected.map().keys, actual.map().keys, tol);
      if (!k.empty()) return "map keys: " + k;
      std::string v = compare_tensors(expected.map().values, actual.map().values, tol);
      return v.empty() ? v : "map values: " + v;
    }
    case Value::Kind::kSequence: {
      const auto& e = expected.sequence().items;
      const auto& a = actual.sequence().items;
      if (e.size() != a.size())
        return fmt::format("sequence length: expected {}, got {}", e.size(), a.size());
      for (size_t i = 0; i < e.size(); ++i) {
        std::string m = compare_values(e[i], a[i], tol);
        if (!m.empty()) return fmt::format("sequence item {}: {}", i, m);
      }
      return {};
    }
  }
  return {};
}

}  // namespace tessera::rt
