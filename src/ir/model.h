// A whole model: the main graph, opset imports, local functions and metadata.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace tessera::ir {

struct OpsetImport {
  std::string domain;  // "" for the default ONNX domain
  int64_t version = 0;
  bool operator==(const OpsetImport& o) const = default;
};

// Model-local function. The body is kept as a Graph so the same edit commands, checks and passes work
// on it: body.inputs/outputs carry the formal parameter names (their types stay kNone).
struct Function {
  std::string name;
  std::string domain;
  std::string overload;
  std::string doc_string;
  std::vector<std::string> attributes;        // attribute parameters without a default
  std::vector<Attribute> attribute_defaults;  // attribute parameters with a default value
  std::vector<OpsetImport> opset_imports;
  std::vector<StringPair> metadata_props;
  Graph body;
  std::string unknown_fields;

  bool operator==(const Function& o) const = default;
};

struct Model {
  int64_t ir_version = 0;
  std::vector<OpsetImport> opset_imports;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  Graph graph;
  std::vector<StringPair> metadata_props;
  std::vector<std::string> training_info;  // serialized TrainingInfoProto, kept as is
  std::vector<Function> functions;
  std::vector<std::string> configuration;  // serialized DeviceConfigurationProto, kept as is
  std::string unknown_fields;

  // The folder external data locations are relative to; empty for a model built or read from memory.
  std::filesystem::path base_dir;

  // Version of `domain` ("" / "ai.onnx" alike) imported by the model; nullopt when not imported.
  std::optional<int64_t> opset_version(std::string_view domain) const;
  const Function* find_function(std::string_view domain, std::string_view name,
                                std::string_view overload = {}) const;

  // Equality of meaning: every field but base_dir.
  bool operator==(const Model& o) const;
};

// "" and "ai.onnx" name the same domain.
inline std::string_view canonical_domain(std::string_view d) {
  return d == "ai.onnx" ? std::string_view() : d;
}

}  // namespace tessera::ir
