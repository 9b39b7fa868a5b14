// The schemas the layout ops share with the ops they stand for: BlockedConv and NhwcConv take FusedConv's
// signature (ops/contrib/fused_conv.h) and the blocked and channels-last pools one pooling schema
// (ops/layout/pool_schema.h); each keeps its own element types, shape rule and extra attributes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ops/registry.h"

namespace tessera::ops {
namespace {

const OpSchema& schema(const char* domain, const char* op) {
  const OpSchema* s = OpRegistry::global().find(domain, op, 1);
  if (!s) throw std::runtime_error(std::string("no schema ") + domain + ":" + op);
  return *s;
}

// name -> "type required default-or-none", for comparing attribute lists.
std::map<std::string, std::string> attrs_of(const OpSchema& s) {
  std::map<std::string, std::string> out;
  for (const AttrSchema& a : s.attributes())
    out[a.name] =
        std::to_string(static_cast<int>(a.type)) + (a.required ? " required" : " optional") +
        (a.default_value ? " default " + a.default_value->s + std::to_string(a.default_value->i) : " none");
  return out;
}

std::vector<std::string> names(const std::vector<FormalParam>& ps) {
  std::vector<std::string> out;
  for (const auto& p : ps) out.push_back(p.name + (p.option == FormalParam::Option::kOptional ? "?" : ""));
  return out;
}

std::vector<std::string> types_of(const OpSchema& s) {
  return s.find_type_param("T")->allowed;
}

TEST(LayoutSchemas, ConvolutionsShareFusedConvsSignature) {
  const OpSchema& fused = schema("com.microsoft", "FusedConv");
  const OpSchema& blocked = schema("com.tessera", "BlockedConv");
  const OpSchema& nhwc = schema("com.tessera", "NhwcConv");
  const std::vector<std::string> ins{"X", "W", "B?", "Z?"};
  for (const OpSchema* s : {&fused, &blocked, &nhwc}) {
    SCOPED_TRACE(s->name());
    EXPECT_EQ(names(s->inputs()), ins);
    EXPECT_EQ(names(s->outputs()), std::vector<std::string>{"Y"});
    EXPECT_EQ(s->get_category(), Category::kConvolution);
    EXPECT_TRUE(s->infer_fn());
    EXPECT_FALSE(s->get_doc().empty());
  }
  auto want = attrs_of(fused);
  EXPECT_EQ(want.size(), 8u);
  EXPECT_EQ(attrs_of(nhwc), want);
  auto with_block = attrs_of(blocked);
  ASSERT_EQ(with_block.count("block"), 1u);
  EXPECT_EQ(with_block["block"], attrs_of(schema("com.tessera", "ReorderToBlocked"))["block"]);
  with_block.erase("block");
  EXPECT_EQ(with_block, want);
  EXPECT_EQ(types_of(fused),
            (std::vector<std::string>{"tensor(float16)", "tensor(float)", "tensor(double)"}));
  EXPECT_EQ(types_of(blocked), std::vector<std::string>{"tensor(float)"});
  EXPECT_EQ(types_of(nhwc), (std::vector<std::string>{"tensor(float16)", "tensor(float)"}));
}

TEST(LayoutSchemas, PoolsShareOneWindowSchema) {
  const std::vector<std::string> window{"auto_pad",     "ceil_mode", "dilations",
                                        "kernel_shape", "pads",      "strides"};
  std::map<std::string, std::string> first;
  for (const char* op : {"BlockedMaxPool", "BlockedAveragePool", "NhwcMaxPool", "NhwcAveragePool"}) {
    SCOPED_TRACE(op);
    const OpSchema& s = schema("com.tessera", op);
    EXPECT_EQ(s.get_category(), Category::kPooling);
    EXPECT_EQ(names(s.inputs()), std::vector<std::string>{"X"});
    EXPECT_TRUE(s.infer_fn());
    auto attrs = attrs_of(s);
    const bool average = std::string(op).find("Average") != std::string::npos;
    EXPECT_EQ(attrs.erase("count_include_pad"), average ? 1u : 0u);
    std::vector<std::string> got;
    for (const auto& [name, _] : attrs) got.push_back(name);
    EXPECT_EQ(got, window);
    EXPECT_NE(attrs["kernel_shape"].find("required"), std::string::npos);
    if (first.empty()) first = attrs;
    EXPECT_EQ(attrs, first);
    const bool blocked = std::string(op).rfind("Blocked", 0) == 0;
    const std::vector<std::string> want_types =
        blocked ? std::vector<std::string>{"tensor(float)"}
                : std::vector<std::string>{"tensor(float16)", "tensor(float)", "tensor(bfloat16)"};
    EXPECT_EQ(types_of(s), want_types);
  }
}

}  // namespace
}  // namespace tessera::ops
