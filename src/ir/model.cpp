#include "ir/model.h"

namespace tessera::ir {

std::optional<int64_t> Model::opset_version(std::string_view d) const {
  d = canonical_domain(d);
  for (const OpsetImport& o : opset_imports) {
    if (canonical_domain(o.domain) == d) return o.version;
  }
  return std::nullopt;
}

const Function* Model::find_function(std::string_view d, std::string_view name,
                                     std::string_view overload) const {
  for (const Function& f : functions) {
    if (f.domain == d && f.name == name && f.overload == overload) return &f;
  }
  return nullptr;
}

bool Model::operator==(const Model& o) const {
  return ir_version == o.ir_version && opset_imports == o.opset_imports && producer_name == o.producer_name &&
         producer_version == o.producer_version && domain == o.domain && model_version == o.model_version &&
         doc_string == o.doc_string && graph == o.graph && metadata_props == o.metadata_props &&
         training_info == o.training_info && functions == o.functions && configuration == o.configuration &&
         unknown_fields == o.unknown_fields;
}

}  // namespace tessera::ir
