// Identity: passes its input through unchanged (tensors, and from opset 14 sequences and optionals).
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(tensor_identity) {
  const char* doc = "Returns its input unchanged. Useful to give a value a second name or to mark a graph output.";
  reg.add(OpSchema("Identity", 1)
              .category(Category::kTensorShape)
              .doc(doc)
              .input("input", "T")
              .output("output", "T")
              .types("T", types::kAllTensor)
              .infer(infer_same_as_input0));
  reg.add(OpSchema("Identity", 13)
              .category(Category::kTensorShape)
              .doc(doc)
              .input("input", "T")
              .output("output", "T")
              .types("T", types::kAllTensorIr4)
              .infer(infer_same_as_input0));
  auto seq_and_optional = [](std::vector<std::string> tensors) {
    std::vector<std::string> all = tensors;
    for (const auto& t : tensors) all.push_back("seq(" + t + ")");
    for (const auto& t : tensors) all.push_back("optional(" + t + ")");
    for (const auto& t : tensors) all.push_back("optional(seq(" + t + "))");
    return all;
  };
  for (auto [version, tensors] : {std::pair{14, types::kAllTensorIr4}, std::pair{16, types::kAllTensorIr4},
                                  std::pair{19, types::kAllTensorIr9}, std::pair{21, types::kAllTensorIr10},
                                  std::pair{23, types::kAllTensorIr11}, std::pair{24, types::kAllTensorIr12},
                                  std::pair{25, types::kAllTensorIr13}}) {
    reg.add(OpSchema("Identity", version)
                .category(Category::kTensorShape)
                .doc(doc)
                .input("input", "V")
                .output("output", "V")
                .types("V", version == 14 ? seq_and_optional(tensors) : seq_and_optional(tensors))
                .infer(infer_same_as_input0));
  }
}
