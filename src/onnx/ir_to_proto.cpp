// ir::Model -> ModelProto, the inverse of proto_to_ir.cpp. Numeric tensor data goes wherever the
// TensorPlacer puts it (raw_data or external); strings stay in string_data.
#include <fmt/format.h>

#include "onnx/convert.h"

namespace tessera::onnx::detail {
namespace {

using ir::AttrType;

template <class Entries>
void put_pairs(const std::vector<ir::StringPair>& from, Entries* to) {
  for (const auto& [k, v] : from) {
    auto* e = to->Add();
    e->set_key(k);
    e->set_value(v);
  }
}

template <class Repeated>
void put_strings(const std::vector<std::string>& from, Repeated* to) {
  for (const std::string& s : from) to->Add()->assign(s);
}

void put_shape(const ir::Shape& shape, onnx_pb::TensorShapeProto* p) {
  for (const ir::Dim& d : shape) {
    auto* dp = p->add_dim();
    if (d.value >= 0) {
      dp->set_dim_value(d.value);
    } else if (!d.param.empty()) {
      dp->set_dim_param(d.param);
    }
    if (!d.denotation.empty()) dp->set_denotation(d.denotation);
  }
}

void put_type(const ir::Type& t, onnx_pb::TypeProto* p) {
  using Kind = ir::Type::Kind;
  switch (t.kind) {
    case Kind::kTensor: {
      auto* tt = p->mutable_tensor_type();
      if (t.elem != ir::DataType::kUndefined) tt->set_elem_type(static_cast<int32_t>(t.elem));
      if (t.shape) put_shape(*t.shape, tt->mutable_shape());
      break;
    }
    case Kind::kSparseTensor: {
      auto* st = p->mutable_sparse_tensor_type();
      if (t.elem != ir::DataType::kUndefined) st->set_elem_type(static_cast<int32_t>(t.elem));
      if (t.shape) put_shape(*t.shape, st->mutable_shape());
      break;
    }
    case Kind::kSequence: {
      auto* s = p->mutable_sequence_type();
      if (t.inner) put_type(*t.inner, s->mutable_elem_type());
      break;
    }
    case Kind::kOptional: {
      auto* o = p->mutable_optional_type();
      if (t.inner) put_type(*t.inner, o->mutable_elem_type());
      break;
    }
    case Kind::kMap: {
      auto* m = p->mutable_map_type();
      m->set_key_type(static_cast<int32_t>(t.elem));
      if (t.inner) put_type(*t.inner, m->mutable_value_type());
      break;
    }
    case Kind::kOpaque: {
      auto* o = p->mutable_opaque_type();
      if (!t.opaque_domain.empty()) o->set_domain(t.opaque_domain);
      if (!t.opaque_name.empty()) o->set_name(t.opaque_name);
      break;
    }
    case Kind::kNone:
      break;
  }
  if (!t.denotation.empty()) p->set_denotation(t.denotation);
}

void put_value_info(const ir::ValueInfo& v, onnx_pb::ValueInfoProto* p) {
  p->set_name(v.name);
  if (!v.type.is_none() || !v.type.denotation.empty()) put_type(v.type, p->mutable_type());
  if (!v.doc_string.empty()) p->set_doc_string(v.doc_string);
  put_pairs(v.metadata_props, p->mutable_metadata_props());
}

void put_opsets(const std::vector<ir::OpsetImport>& from,
                google::protobuf::RepeatedPtrField<onnx_pb::OperatorSetIdProto>* to) {
  for (const ir::OpsetImport& o : from) {
    auto* op = to->Add();
    op->set_domain(o.domain);
    op->set_version(o.version);
  }
}

class Writer {
 public:
  explicit Writer(TensorPlacer& placer) : placer_(placer) {}

  void tensor(const ir::Tensor& t, onnx_pb::TensorProto* p) {
    for (int64_t d : t.dims) p->add_dims(d);
    p->set_data_type(static_cast<int32_t>(t.dtype));
    if (t.segment) {
      p->mutable_segment()->set_begin(t.segment->first);
      p->mutable_segment()->set_end(t.segment->second);
    }
    p->set_name(t.name);
    if (!t.doc_string.empty()) p->set_doc_string(t.doc_string);
    put_pairs(t.metadata_props, p->mutable_metadata_props());
    if (t.dtype == ir::DataType::kString) {
      put_strings(t.strings, p->mutable_string_data());
    } else {
      placer_.place(t, p);
    }
    p->mutable_unknown_fields()->assign(t.unknown_fields);
  }

  void sparse(const ir::SparseTensor& s, onnx_pb::SparseTensorProto* p) {
    tensor(s.values, p->mutable_values());
    tensor(s.indices, p->mutable_indices());
    for (int64_t d : s.dims) p->add_dims(d);
  }

  void attribute(const ir::Attribute& a, onnx_pb::AttributeProto* p) {
    p->set_name(a.name);
    if (!a.ref_attr_name.empty()) p->set_ref_attr_name(a.ref_attr_name);
    if (!a.doc_string.empty()) p->set_doc_string(a.doc_string);
    if (a.type != AttrType::kUndefined) p->set_type(static_cast<int32_t>(a.type));
    // A reference carries no value of its own; write one only if the IR was given one anyway.
    bool ref = a.is_reference();
    switch (a.type) {
      case AttrType::kFloat:
        if (!ref || a.f != 0) p->set_f(a.f);
        break;
      case AttrType::kInt:
        if (!ref || a.i != 0) p->set_i(a.i);
        break;
      case AttrType::kString:
        if (!ref || !a.s.empty()) p->set_s(a.s);
        break;
      case AttrType::kFloats:
        p->mutable_floats()->Add(a.floats.begin(), a.floats.end());
        break;
      case AttrType::kInts:
        p->mutable_ints()->Add(a.ints.begin(), a.ints.end());
        break;
      case AttrType::kStrings:
        put_strings(a.strings, p->mutable_strings());
        break;
      case AttrType::kTensor:
        if (!a.tensors.empty()) tensor(a.tensors[0], p->mutable_t());
        break;
      case AttrType::kTensors:
        for (const ir::Tensor& t : a.tensors) tensor(t, p->add_tensors());
        break;
      case AttrType::kGraph:
        if (!a.graphs.empty()) graph(*a.graphs[0], p->mutable_g());
        break;
      case AttrType::kGraphs:
        for (const auto& g : a.graphs) graph(*g, p->add_graphs());
        break;
      case AttrType::kSparseTensor:
        if (!a.sparse_tensors.empty()) sparse(a.sparse_tensors[0], p->mutable_sparse_tensor());
        break;
      case AttrType::kSparseTensors:
        for (const auto& s : a.sparse_tensors) sparse(s, p->add_sparse_tensors());
        break;
      case AttrType::kTypeProto:
        if (!a.types.empty()) put_type(a.types[0], p->mutable_tp());
        break;
      case AttrType::kTypeProtos:
        for (const ir::Type& t : a.types) put_type(t, p->add_type_protos());
        break;
      case AttrType::kUndefined:
        break;
    }
    p->mutable_unknown_fields()->assign(a.unknown_fields);
  }

  void node(const ir::Node& n, onnx_pb::NodeProto* p) {
    put_strings(n.inputs, p->mutable_input());
    put_strings(n.outputs, p->mutable_output());
    if (!n.name.empty()) p->set_name(n.name);
    p->set_op_type(n.op_type);
    if (!n.domain.empty()) p->set_domain(n.domain);
    if (!n.overload.empty()) p->set_overload(n.overload);
    for (const ir::Attribute& a : n.attributes) attribute(a, p->add_attribute());
    if (!n.doc_string.empty()) p->set_doc_string(n.doc_string);
    put_pairs(n.metadata_props, p->mutable_metadata_props());
    put_strings(n.device_configurations, p->mutable_device_configurations());
    p->mutable_unknown_fields()->assign(n.unknown_fields);
  }

  void graph(const ir::Graph& g, onnx_pb::GraphProto* p) {
    for (const ir::Node& n : g.nodes) node(n, p->add_node());
    if (!g.name.empty()) p->set_name(g.name);
    for (const ir::Tensor& t : g.initializers) tensor(t, p->add_initializer());
    for (const ir::SparseTensor& s : g.sparse_initializers) sparse(s, p->add_sparse_initializer());
    if (!g.doc_string.empty()) p->set_doc_string(g.doc_string);
    for (const ir::ValueInfo& v : g.inputs) put_value_info(v, p->add_input());
    for (const ir::ValueInfo& v : g.outputs) put_value_info(v, p->add_output());
    for (const ir::ValueInfo& v : g.value_info) put_value_info(v, p->add_value_info());
    put_strings(g.quantization_annotation, p->mutable_quantization_annotation());
    put_pairs(g.metadata_props, p->mutable_metadata_props());
    p->mutable_unknown_fields()->assign(g.unknown_fields);
  }

  void function(const ir::Function& f, onnx_pb::FunctionProto* p) {
    p->set_name(f.name);
    for (const ir::ValueInfo& v : f.body.inputs) p->add_input(v.name);
    for (const ir::ValueInfo& v : f.body.outputs) p->add_output(v.name);
    put_strings(f.attributes, p->mutable_attribute());
    for (const ir::Attribute& a : f.attribute_defaults) attribute(a, p->add_attribute_proto());
    for (const ir::Node& n : f.body.nodes) node(n, p->add_node());
    if (!f.doc_string.empty()) p->set_doc_string(f.doc_string);
    put_opsets(f.opset_imports, p->mutable_opset_import());
    p->set_domain(f.domain);
    if (!f.overload.empty()) p->set_overload(f.overload);
    for (const ir::ValueInfo& v : f.body.value_info) put_value_info(v, p->add_value_info());
    put_pairs(f.metadata_props, p->mutable_metadata_props());
    p->mutable_unknown_fields()->assign(f.unknown_fields);
  }

 private:
  TensorPlacer& placer_;
};

}  // namespace

void model_to_proto(const ir::Model& m, onnx_pb::ModelProto* p, TensorPlacer& placer) {
  Writer w(placer);
  p->set_ir_version(m.ir_version);
  put_opsets(m.opset_imports, p->mutable_opset_import());
  if (!m.producer_name.empty()) p->set_producer_name(m.producer_name);
  if (!m.producer_version.empty()) p->set_producer_version(m.producer_version);
  if (!m.domain.empty()) p->set_domain(m.domain);
  if (m.model_version != 0) p->set_model_version(m.model_version);
  if (!m.doc_string.empty()) p->set_doc_string(m.doc_string);
  w.graph(m.graph, p->mutable_graph());
  put_pairs(m.metadata_props, p->mutable_metadata_props());
  put_strings(m.training_info, p->mutable_training_info());
  for (const ir::Function& f : m.functions) w.function(f, p->add_functions());
  put_strings(m.configuration, p->mutable_configuration());
  p->mutable_unknown_fields()->assign(m.unknown_fields);
}

}  // namespace tessera::onnx::detail
