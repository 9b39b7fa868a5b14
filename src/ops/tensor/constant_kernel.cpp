// Reference kernel of Constant. The value is built once, when the session is created, and handed out
// on every run without a copy (values are immutable once produced). A sparse_value is densified.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;
namespace ir = tessera::ir;

// Scatters the sparse values into a zero tensor of its dense shape. Indices are either [NNZ] linear
// positions or [NNZ, rank] coordinates, as in ONNX's SparseTensorProto.
Tensor densify(const ir::SparseTensor& sp) {
  Tensor values = Tensor::from_ir(sp.values);
  Tensor dense = Tensor::zeros(values.dtype(), sp.dims);
  const int64_t nnz = values.numel();
  if (values.rank() != 1) throw KernelError("sparse_value: values must be 1-D");
  std::vector<int64_t> linear(static_cast<size_t>(nnz), 0);
  if (nnz > 0) {
    Tensor idx = Tensor::from_ir(sp.indices);
    if (!ir::dtype_is_int(idx.dtype())) throw KernelError("sparse_value: indices must be integers");
    std::vector<int64_t> iv = idx.to_int64_vector();
    const int64_t rank = static_cast<int64_t>(sp.dims.size());
    std::vector<int64_t> strides = strides_of(sp.dims);
    if (idx.rank() == 1 && idx.dim(0) == nnz) {
      for (int64_t k = 0; k < nnz; ++k) {
        if (iv[k] < 0 || iv[k] >= dense.numel())
          throw KernelError(
              fmt::format("sparse_value index {} is out of range [0, {})", iv[k], dense.numel()));
        linear[k] = iv[k];
      }
    } else if (idx.rank() == 2 && idx.dim(0) == nnz && idx.dim(1) == rank) {
      for (int64_t k = 0; k < nnz; ++k) {
        for (int64_t d = 0; d < rank; ++d) {
          int64_t c = iv[k * rank + d];
          if (c < 0 || c >= sp.dims[d])
            throw KernelError(fmt::format("sparse_value index {} is out of range for dimension {}", c, d));
          linear[k] += c * strides[d];
        }
      }
    } else {
      throw KernelError(fmt::format("sparse_value: indices of shape {} do not match {} values of rank {}",
                                    rt::shape_str(idx.shape()), nnz, rank));
    }
  }
  dispatch_storage(values.dtype(), "Constant", [&]<class S>() {
    ElemSrc<S> src(values);
    ElemDst<S> dst(dense);
    for (int64_t k = 0; k < nnz; ++k) dst[linear[k]] = src[k];
    dst.commit();
  });
  return dense;
}

template <class T>
Tensor vector_tensor(DataType dt, const std::vector<T>& v) {
  return Tensor::from_vector<T>(dt, {static_cast<int64_t>(v.size())}, v);
}

Tensor constant_value(const rt::KernelInfo& info) {
  const ir::Node& n = info.node();
  const ir::Attribute* a = nullptr;
  for (const char* name : {"value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints",
                           "value_string", "value_strings"}) {
    if (const ir::Attribute* x = n.attr(name)) {
      if (a)
        throw KernelError(
            fmt::format("Constant has both '{}' and '{}'; it needs exactly one", a->name, name));
      a = x;
    }
  }
  if (!a) throw KernelError("Constant needs one value attribute, got none");
  const std::string& name = a->name;
  if (name == "value") {
    const ir::Tensor* t = info.get_tensor("value");
    if (!t) throw KernelError("Constant: attribute 'value' is not a tensor");
    return Tensor::from_ir(*t);
  }
  if (name == "sparse_value") {
    if (a->sparse_tensors.empty())
      throw KernelError("Constant: attribute 'sparse_value' is not a sparse tensor");
    return densify(a->sparse_tensors[0]);
  }
  if (name == "value_float") return Tensor::scalar<float>(DataType::kFloat, info.get_float(name));
  if (name == "value_floats") return vector_tensor<float>(DataType::kFloat, info.get_floats(name));
  if (name == "value_int") return Tensor::scalar<int64_t>(DataType::kInt64, info.get_int(name));
  if (name == "value_ints") return vector_tensor<int64_t>(DataType::kInt64, info.get_ints(name));
  if (name == "value_string") return Tensor::scalar<std::string>(DataType::kString, info.get_string(name));
  return vector_tensor<std::string>(DataType::kString, info.get_strings(name));
}

class Constant : public rt::OpKernel {
 public:
  explicit Constant(const rt::KernelInfo& info) : value_(constant_value(info)) {}
  void compute(KernelContext& ctx) const override { ctx.set_output(0, value_); }

 private:
  Tensor value_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_constant) {
  reg.add(tessera::rt::KernelDef::of<Constant>("Constant"));
}
