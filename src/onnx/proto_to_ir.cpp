// ModelProto -> ir::Model: every message, field and unknown field the IR has a place for.
#include <fmt/format.h>

#include "onnx/convert.h"

namespace tessera::onnx::detail {
namespace {

using ir::AttrType;

template <class Entries>
std::vector<ir::StringPair> pairs(const Entries& entries) {
  std::vector<ir::StringPair> out;
  out.reserve(entries.size());
  for (const auto& e : entries) out.emplace_back(e.key(), e.value());
  return out;
}

template <class Strings>
std::vector<std::string> strings(const Strings& s) {
  return {s.begin(), s.end()};
}

ir::DataType elem_type(int32_t v, std::string_view where) {
  if (!ir::is_valid_dtype(v)) throw LoadError(fmt::format("{} has unknown element type {}", where, v));
  return static_cast<ir::DataType>(v);
}

ir::Shape shape_from_proto(const onnx_pb::TensorShapeProto& p) {
  ir::Shape shape;
  shape.reserve(p.dim_size());
  for (const auto& d : p.dim()) {
    ir::Dim dim;
    // A negative dim_value means nothing a size could; it reads as unknown, like a missing one.
    if (d.has_dim_value() && d.dim_value() >= 0) dim.value = d.dim_value();
    if (d.has_dim_param()) dim.param = d.dim_param();
    dim.denotation = d.denotation();
    shape.push_back(std::move(dim));
  }
  return shape;
}

ir::Type type_from_proto(const onnx_pb::TypeProto& p, std::string_view where) {
  using Kind = ir::Type::Kind;
  ir::Type t;
  auto inner = [&](bool has, const onnx_pb::TypeProto& in) {
    return has ? std::make_shared<const ir::Type>(type_from_proto(in, where)) : nullptr;
  };
  switch (p.value_case()) {
    case onnx_pb::TypeProto::kTensorType: {
      const auto& tt = p.tensor_type();
      t.kind = Kind::kTensor;
      t.elem = elem_type(tt.elem_type(), where);
      if (tt.has_shape()) t.shape = shape_from_proto(tt.shape());
      break;
    }
    case onnx_pb::TypeProto::kSparseTensorType: {
      const auto& st = p.sparse_tensor_type();
      t.kind = Kind::kSparseTensor;
      t.elem = elem_type(st.elem_type(), where);
      if (st.has_shape()) t.shape = shape_from_proto(st.shape());
      break;
    }
    case onnx_pb::TypeProto::kSequenceType:
      t.kind = Kind::kSequence;
      t.inner = inner(p.sequence_type().has_elem_type(), p.sequence_type().elem_type());
      break;
    case onnx_pb::TypeProto::kOptionalType:
      t.kind = Kind::kOptional;
      t.inner = inner(p.optional_type().has_elem_type(), p.optional_type().elem_type());
      break;
    case onnx_pb::TypeProto::kMapType:
      t.kind = Kind::kMap;
      t.elem = elem_type(p.map_type().key_type(), where);
      t.inner = inner(p.map_type().has_value_type(), p.map_type().value_type());
      break;
    case onnx_pb::TypeProto::kOpaqueType:
      t.kind = Kind::kOpaque;
      t.opaque_domain = p.opaque_type().domain();
      t.opaque_name = p.opaque_type().name();
      break;
    case onnx_pb::TypeProto::VALUE_NOT_SET:
      break;
  }
  t.denotation = p.denotation();
  return t;
}

ir::ValueInfo value_info_from_proto(const onnx_pb::ValueInfoProto& p) {
  ir::ValueInfo v;
  v.name = p.name();
  if (p.has_type()) v.type = type_from_proto(p.type(), fmt::format("value '{}'", p.name()));
  v.doc_string = p.doc_string();
  v.metadata_props = pairs(p.metadata_props());
  return v;
}

// Converting graphs recurses through attributes; `depth` counts subgraph nesting (0: a main graph).
class Converter {
 public:
  explicit Converter(LoadContext& ctx) : ctx_(ctx) {}

  // `raw`: stripped raw_data of the initializers, for the main graph (see LoadContext).
  ir::Graph graph(onnx_pb::GraphProto& p, int depth, const std::vector<ir::BufferPtr>* raw = nullptr) {
    ir::Graph g;
    g.name = p.name();
    g.doc_string = p.doc_string();
    g.nodes.reserve(p.node_size());
    for (auto& n : *p.mutable_node()) g.add_node(node(n, depth));
    g.initializers.reserve(p.initializer_size());
    for (int i = 0; i < p.initializer_size(); ++i) {
      ir::BufferPtr stripped = raw && static_cast<size_t>(i) < raw->size() ? (*raw)[i] : nullptr;
      g.initializers.push_back(tensor_from_proto(*p.mutable_initializer(i), {}, ctx_, std::move(stripped)));
    }
    for (auto& s : *p.mutable_sparse_initializer())
      g.sparse_initializers.push_back(sparse(s, "sparse initializer"));
    for (const auto& v : p.input()) g.inputs.push_back(value_info_from_proto(v));
    for (const auto& v : p.output()) g.outputs.push_back(value_info_from_proto(v));
    for (const auto& v : p.value_info()) g.value_info.push_back(value_info_from_proto(v));
    g.quantization_annotation = strings(p.quantization_annotation());
    g.metadata_props = pairs(p.metadata_props());
    g.unknown_fields = p.unknown_fields();
    return g;
  }

  ir::Node node(onnx_pb::NodeProto& p, int depth) {
    ir::Node n;
    n.name = p.name();
    n.op_type = p.op_type();
    n.domain = ir::canonical_domain(p.domain());
    n.overload = p.overload();
    n.inputs = strings(p.input());
    n.outputs = strings(p.output());
    std::string where = fmt::format("node '{}' ({})", n.name, n.op_type);
    n.attributes.reserve(p.attribute_size());
    for (auto& a : *p.mutable_attribute()) n.attributes.push_back(attribute(a, depth, where));
    n.doc_string = p.doc_string();
    n.metadata_props = pairs(p.metadata_props());
    n.device_configurations = strings(p.device_configurations());
    n.unknown_fields = p.unknown_fields();
    return n;
  }

  ir::Attribute attribute(onnx_pb::AttributeProto& p, int depth, std::string_view owner) {
    ir::Attribute a;
    a.name = p.name();
    a.ref_attr_name = p.ref_attr_name();
    a.doc_string = p.doc_string();
    a.unknown_fields = p.unknown_fields();
    std::string where = fmt::format("attribute '{}' of {}", a.name, owner);
    int32_t type = p.type() != 0 ? p.type() : legacy_type(p);
    if (type < 0 || type > static_cast<int32_t>(AttrType::kTypeProtos)) {
      throw LoadError(fmt::format("{} has unknown type {}", where, type));
    }
    a.type = static_cast<AttrType>(type);
    switch (a.type) {
      case AttrType::kFloat:
        a.f = p.f();
        break;
      case AttrType::kInt:
        a.i = p.i();
        break;
      case AttrType::kString:
        a.s = p.s();
        break;
      case AttrType::kFloats:
        a.floats.assign(p.floats().begin(), p.floats().end());
        break;
      case AttrType::kInts:
        a.ints.assign(p.ints().begin(), p.ints().end());
        break;
      case AttrType::kStrings:
        a.strings = strings(p.strings());
        break;
      case AttrType::kTensor:
        if (p.has_t()) a.tensors.push_back(tensor_from_proto(*p.mutable_t(), where, ctx_));
        break;
      case AttrType::kTensors:
        for (auto& t : *p.mutable_tensors()) a.tensors.push_back(tensor_from_proto(t, where, ctx_));
        break;
      case AttrType::kGraph:
        if (p.has_g()) a.graphs.emplace_back(subgraph(*p.mutable_g(), depth, where));
        break;
      case AttrType::kGraphs:
        for (auto& g : *p.mutable_graphs()) a.graphs.emplace_back(subgraph(g, depth, where));
        break;
      case AttrType::kSparseTensor:
        if (p.has_sparse_tensor()) a.sparse_tensors.push_back(sparse(*p.mutable_sparse_tensor(), where));
        break;
      case AttrType::kSparseTensors:
        for (auto& s : *p.mutable_sparse_tensors()) a.sparse_tensors.push_back(sparse(s, where));
        break;
      case AttrType::kTypeProto:
        if (p.has_tp()) a.types.push_back(type_from_proto(p.tp(), where));
        break;
      case AttrType::kTypeProtos:
        for (const auto& t : p.type_protos()) a.types.push_back(type_from_proto(t, where));
        break;
      case AttrType::kUndefined:
        break;
    }
    return a;
  }

  ir::Function function(onnx_pb::FunctionProto& p) {
    ir::Function f;
    f.name = p.name();
    f.domain = p.domain();
    f.overload = p.overload();
    f.doc_string = p.doc_string();
    std::string where = fmt::format("function '{}'", f.name);
    for (const auto& in : p.input()) f.body.inputs.push_back(ir::ValueInfo{in, {}, {}, {}});
    for (const auto& out : p.output()) f.body.outputs.push_back(ir::ValueInfo{out, {}, {}, {}});
    f.attributes = strings(p.attribute());
    for (auto& a : *p.mutable_attribute_proto()) f.attribute_defaults.push_back(attribute(a, 0, where));
    for (auto& n : *p.mutable_node()) f.body.add_node(node(n, 0));
    for (const auto& v : p.value_info()) f.body.value_info.push_back(value_info_from_proto(v));
    f.opset_imports = opsets(p.opset_import(), where);
    f.metadata_props = pairs(p.metadata_props());
    f.unknown_fields = p.unknown_fields();
    return f;
  }

  static std::vector<ir::OpsetImport> opsets(
      const google::protobuf::RepeatedPtrField<onnx_pb::OperatorSetIdProto>& ps, std::string_view where) {
    std::vector<ir::OpsetImport> out;
    for (const auto& o : ps) {
      if (o.version() < 0) {
        throw LoadError(fmt::format("{} imports opset version {} of domain '{}': negative", where,
                                    o.version(), o.domain()));
      }
      out.push_back({std::string(ir::canonical_domain(o.domain())), o.version()});
    }
    return out;
  }

 private:
  ir::Graph subgraph(onnx_pb::GraphProto& p, int depth, std::string_view where) {
    if (depth + 1 > ctx_.options.max_subgraph_depth) {
      throw LoadError(fmt::format("subgraph '{}' in {} is nested {} deep, past max_subgraph_depth ({})",
                                  p.name(), where, depth + 1, ctx_.options.max_subgraph_depth));
    }
    return graph(p, depth + 1);
  }

  ir::SparseTensor sparse(onnx_pb::SparseTensorProto& p, std::string_view where) {
    ir::SparseTensor s;
    std::string name = p.values().name();
    s.values = tensor_from_proto(*p.mutable_values(), fmt::format("values of {}", where), ctx_);
    s.indices = tensor_from_proto(*p.mutable_indices(),
                                  fmt::format("indices of sparse tensor '{}' in {}", name, where), ctx_);
    s.dims.assign(p.dims().begin(), p.dims().end());
    for (int64_t d : s.dims) {
      if (d < 0) {
        throw LoadError(
            fmt::format("sparse tensor '{}' has a negative dimension in {}", name, dims_string(s.dims)));
      }
    }
    return s;
  }

  // IR version 1 files had no attribute type: it follows from the one value field that is set.
  static int32_t legacy_type(const onnx_pb::AttributeProto& p) {
    if (p.has_f()) return static_cast<int32_t>(AttrType::kFloat);
    if (p.has_i()) return static_cast<int32_t>(AttrType::kInt);
    if (p.has_s()) return static_cast<int32_t>(AttrType::kString);
    if (p.has_t()) return static_cast<int32_t>(AttrType::kTensor);
    if (p.has_g()) return static_cast<int32_t>(AttrType::kGraph);
    if (p.has_sparse_tensor()) return static_cast<int32_t>(AttrType::kSparseTensor);
    if (p.has_tp()) return static_cast<int32_t>(AttrType::kTypeProto);
    if (p.floats_size()) return static_cast<int32_t>(AttrType::kFloats);
    if (p.ints_size()) return static_cast<int32_t>(AttrType::kInts);
    if (p.strings_size()) return static_cast<int32_t>(AttrType::kStrings);
    if (p.tensors_size()) return static_cast<int32_t>(AttrType::kTensors);
    if (p.graphs_size()) return static_cast<int32_t>(AttrType::kGraphs);
    if (p.sparse_tensors_size()) return static_cast<int32_t>(AttrType::kSparseTensors);
    if (p.type_protos_size()) return static_cast<int32_t>(AttrType::kTypeProtos);
    return 0;
  }

  LoadContext& ctx_;
};

}  // namespace

ir::Model model_from_proto(onnx_pb::ModelProto& p, LoadContext& ctx) {
  Converter c(ctx);
  ir::Model m;
  m.ir_version = p.ir_version();
  m.opset_imports = Converter::opsets(p.opset_import(), "the model");
  m.producer_name = p.producer_name();
  m.producer_version = p.producer_version();
  m.domain = p.domain();
  m.model_version = p.model_version();
  m.doc_string = p.doc_string();
  if (p.has_graph()) m.graph = c.graph(*p.mutable_graph(), 0, &ctx.initializer_raw);
  m.metadata_props = pairs(p.metadata_props());
  m.training_info = strings(p.training_info());
  m.functions.reserve(p.functions_size());
  for (auto& f : *p.mutable_functions()) m.functions.push_back(c.function(f));
  m.configuration = strings(p.configuration());
  m.unknown_fields = p.unknown_fields();
  return m;
}

}  // namespace tessera::onnx::detail
