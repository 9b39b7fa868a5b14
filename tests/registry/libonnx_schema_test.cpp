// Checks Tessera's operator registry against the schemas of Debian's libonnx 1.12 (opsets 1-17):
// every schema libonnx knows must exist in Tessera with the same since-version, inputs, outputs,
// attributes (type, required, default) and type constraints.
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>

#include "ops/registry.h"

namespace {

using tessera::ops::FormalParam;
using tessera::ops::OpRegistry;
using tessera::ops::OpSchema;

std::string option_name(FormalParam::Option o) {
  switch (o) {
    case FormalParam::Option::kSingle:
      return "single";
    case FormalParam::Option::kOptional:
      return "optional";
    case FormalParam::Option::kVariadic:
      return "variadic";
  }
  return "?";
}

std::string option_name(onnx::OpSchema::FormalParameterOption o) {
  switch (o) {
    case onnx::OpSchema::Single:
      return "single";
    case onnx::OpSchema::Optional:
      return "optional";
    case onnx::OpSchema::Variadic:
      return "variadic";
  }
  return "?";
}

// Renders an attribute default the same way for both sides.
std::string render(const onnx::AttributeProto& a) {
  std::ostringstream s;
  auto f = [&](float v) {
    if (std::isnan(v)) {
      s << "nan";
    } else {
      s << v;
    }
  };
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      f(a.f());
      break;
    case onnx::AttributeProto::INT:
      s << a.i();
      break;
    case onnx::AttributeProto::STRING:
      s << "'" << a.s() << "'";
      break;
    case onnx::AttributeProto::FLOATS:
      for (float v : a.floats()) f(v), s << ",";
      break;
    case onnx::AttributeProto::INTS:
      for (auto v : a.ints()) s << v << ",";
      break;
    case onnx::AttributeProto::STRINGS:
      for (const auto& v : a.strings()) s << "'" << v << "',";
      break;
    default:
      s << "<" << a.type() << ">";
  }
  return s.str();
}

std::string render(const tessera::ir::Attribute& a) {
  std::ostringstream s;
  auto f = [&](float v) {
    if (std::isnan(v)) {
      s << "nan";
    } else {
      s << v;
    }
  };
  using tessera::ir::AttrType;
  switch (a.type) {
    case AttrType::kFloat:
      f(a.f);
      break;
    case AttrType::kInt:
      s << a.i;
      break;
    case AttrType::kString:
      s << "'" << a.s << "'";
      break;
    case AttrType::kFloats:
      for (float v : a.floats) f(v), s << ",";
      break;
    case AttrType::kInts:
      for (auto v : a.ints) s << v << ",";
      break;
    case AttrType::kStrings:
      for (const auto& v : a.strings) s << "'" << v << "',";
      break;
    default:
      s << "<" << static_cast<int>(a.type) << ">";
  }
  return s.str();
}

// libonnx spells map types of the ML domain "map(int64, float)"; the IR (and ONNX's own type
// strings of values) say "map(int64,tensor(float))". Same type, other spelling.
std::string normalize_type(const std::string& t) {
  static const std::regex map_re(R"(map\((\w+), (\w+)\))");
  return std::regex_replace(t, map_re, "map($1,tensor($2))");
}

template <class A, class B>
void compare_params(const std::string& what, const std::vector<A>& ours, const std::vector<B>& theirs,
                    std::vector<std::string>& problems) {
  if (ours.size() != theirs.size()) {
    problems.push_back(what + " count " + std::to_string(ours.size()) + " vs libonnx " +
                       std::to_string(theirs.size()));
    return;
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    const auto& o = ours[i];
    const auto& t = theirs[i];
    std::string where = what + " " + std::to_string(i) + " ('" + t.GetName() + "')";
    if (o.name != t.GetName()) problems.push_back(where + ": name '" + o.name + "'");
    if (option_name(o.option) != option_name(t.GetOption()))
      problems.push_back(where + ": " + option_name(o.option) + " vs " + option_name(t.GetOption()));
    if (o.type != t.GetTypeStr())
      problems.push_back(where + ": type '" + o.type + "' vs '" + t.GetTypeStr() + "'");
    if (t.GetOption() == onnx::OpSchema::Variadic) {
      if (o.homogeneous != t.GetIsHomogeneous()) problems.push_back(where + ": homogeneous differs");
      if (o.min_arity != t.GetMinArity())
        problems.push_back(where + ": min arity " + std::to_string(o.min_arity) + " vs " +
                           std::to_string(t.GetMinArity()));
    }
  }
}

std::vector<std::string> compare(const OpSchema& ours, const onnx::OpSchema& theirs) {
  std::vector<std::string> problems;
  compare_params("input", ours.inputs(), theirs.inputs(), problems);
  compare_params("output", ours.outputs(), theirs.outputs(), problems);

  std::set<std::string> their_attrs;
  for (const auto& [name, a] : theirs.attributes()) {
    their_attrs.insert(name);
    const auto* o = ours.find_attr(name);
    if (!o) {
      problems.push_back("attribute '" + name + "' missing");
      continue;
    }
    if (static_cast<int>(o->type) != static_cast<int>(a.type))
      problems.push_back("attribute '" + name + "': type " + std::to_string(static_cast<int>(o->type)) +
                         " vs " + std::to_string(static_cast<int>(a.type)));
    if (o->required != a.required) problems.push_back("attribute '" + name + "': required flag differs");
    bool their_default = a.default_value.has_type() || a.default_value.has_name();
    if (their_default != o->default_value.has_value()) {
      problems.push_back("attribute '" + name +
                         "': " + (their_default ? "default missing" : "unexpected default"));
    } else if (their_default && render(*o->default_value) != render(a.default_value)) {
      problems.push_back("attribute '" + name + "': default " + render(*o->default_value) + " vs " +
                         render(a.default_value));
    }
  }
  for (const auto& a : ours.attributes()) {
    if (!their_attrs.count(a.name)) problems.push_back("extra attribute '" + a.name + "'");
  }

  for (const auto& tc : theirs.typeConstraintParams()) {
    const auto* o = ours.find_type_param(tc.type_param_str);
    if (!o) {
      problems.push_back("type constraint '" + tc.type_param_str + "' missing");
      continue;
    }
    std::set<std::string> a(o->allowed.begin(), o->allowed.end());
    std::set<std::string> b;
    for (const auto& t : tc.allowed_type_strs) b.insert(normalize_type(t));
    if (a != b) {
      std::string diff;
      for (const auto& x : a)
        if (!b.count(x)) diff += " +" + x;
      for (const auto& x : b)
        if (!a.count(x)) diff += " -" + x;
      problems.push_back("type constraint '" + tc.type_param_str + "' differs:" + diff);
    }
  }
  return problems;
}

TEST(Registry, MatchesLibonnxSchemas) {
  const OpRegistry& reg = OpRegistry::global();
  size_t checked = 0;
  std::vector<std::string> failures;
  for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    std::string id = (s.domain().empty() ? "ai.onnx" : s.domain()) + "." + s.Name() + "-" +
                     std::to_string(s.SinceVersion());
    const OpSchema* ours = nullptr;
    for (const OpSchema* v : reg.versions(s.domain(), s.Name())) {
      if (v->since_version() == s.SinceVersion()) ours = v;
    }
    ++checked;
    if (!ours) {
      failures.push_back(id + ": missing");
      continue;
    }
    for (const auto& p : compare(*ours, s)) failures.push_back(id + ": " + p);
  }
  std::string all;
  for (const auto& f : failures) all += f + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " differences in " << checked << " schemas:\n" << all;
  EXPECT_GT(checked, 400u);
}

// Every schema, also those libonnx does not know, carries a description and a category.
TEST(Registry, EverySchemaHasDocAndCategory) {
  std::string missing;
  for (const OpSchema* s : OpRegistry::global().all()) {
    std::string id = s->domain() + "." + s->name() + "-" + std::to_string(s->since_version());
    if (s->get_doc().empty()) missing += id + ": no doc\n";
    if (s->get_category() == tessera::ops::Category::kUncategorized) missing += id + ": no category\n";
    if (!s->infer_fn()) missing += id + ": no shape inference\n";
  }
  EXPECT_TRUE(missing.empty()) << missing;
}

}  // namespace
