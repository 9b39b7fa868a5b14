// The pooling schema shared by the blocked and the channels-last layout ops (pool_schema.h).
#include "ops/layout/pool_schema.h"

#include "ops/layout/blocked.h"

namespace tessera::ops::layout {

OpSchema pool_schema(const char* name, const char* doc, std::vector<std::string> types, InferFn infer) {
  OpSchema s(name, 1, kDomain);
  s.category(Category::kPooling)
      .doc(doc)
      .input("X", "T")
      .output("Y", "T")
      .types("T", std::move(types))
      .attr("auto_pad", "NOTSET")
      .attr("ceil_mode", int64_t{0})
      .attr_optional("dilations", ir::AttrType::kInts)
      .attr("kernel_shape", ir::AttrType::kInts)
      .attr_optional("pads", ir::AttrType::kInts)
      .attr_optional("strides", ir::AttrType::kInts)
      .infer(std::move(infer));
  return s;
}

}  // namespace tessera::ops::layout
