#include "cli/json_types.h"

namespace tessera::cli {

nlohmann::json dims_json(const ir::Shape& s) {
  nlohmann::json out = nlohmann::json::array();
  for (const ir::Dim& d : s) {
    if (d.is_static()) {
      out.push_back(d.value);
    } else if (d.is_symbolic()) {
      out.push_back(d.param);
    } else {
      out.push_back(nullptr);
    }
  }
  return out;
}

nlohmann::json value_json(const ir::ValueInfo& v) {
  nlohmann::json j{{"name", v.name}, {"type", v.type.type_string()}};
  j["shape"] = v.type.shape ? dims_json(*v.type.shape) : nlohmann::json(nullptr);
  return j;
}

}  // namespace tessera::cli
