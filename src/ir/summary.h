// A model at a glance: what `tessera info` prints and the studio's model panel shows.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/model.h"

namespace tessera::ir {

struct ModelSummary {
  int64_t ir_version = 0;
  std::vector<OpsetImport> opsets;
  std::string producer;
  std::vector<ValueInfo> inputs;  // graph inputs that are not initializers
  std::vector<ValueInfo> outputs;
  std::map<std::string, int64_t>
      op_counts;                // "Conv" or "com.microsoft.Attention" -> count, subgraphs included
  int64_t node_count = 0;       // subgraphs and function bodies included
  int64_t parameter_count = 0;  // elements of all initializers
  int64_t parameter_bytes = 0;
  std::vector<std::string> external_files;  // distinct external data locations
  int64_t function_count = 0;
};

ModelSummary summarize(const Model& model);

}  // namespace tessera::ir
