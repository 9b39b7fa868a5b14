// tessera new -o FILE --opset N [--domain NAME:VERSION]...
#include <fmt/format.h>

#include "cli/commands.h"
#include "onnx/onnx_io.h"
#include "ops/registry.h"

namespace tessera::cli {
namespace {

// The IR version that goes with an ai.onnx opset (the ONNX release table).
int64_t ir_version_for_opset(int64_t opset) {
  if (opset <= 8) return 3;
  if (opset <= 9) return 4;
  if (opset <= 10) return 5;
  if (opset <= 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  if (opset <= 23) return 11;
  if (opset <= 25) return 12;
  return 13;
}

}  // namespace

void add_new_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("new", "Create an empty model importing the given operator sets");
  struct Args {
    std::string out;
    int64_t opset = 0;
    std::vector<std::string> domains;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("-o,--output", a->out, "File to write")->required();
  cmd->add_option("--opset", a->opset, "ai.onnx opset version")->required()->check(CLI::Range(1, 1000));
  cmd->add_option("--domain", a->domains, "Another operator set to import, as NAME:VERSION (repeatable)");
  cmd->callback([a, &status] {
    const auto& reg = ops::OpRegistry::global();
    int latest = reg.latest_version("");
    if (a->opset > latest) {
      fmt::print(stderr, "tessera new: opset {} is newer than {}, the newest Tessera knows\n", a->opset,
                 latest);
      status = kUnreadable;
      return;
    }
    ir::Model m;
    m.ir_version = ir_version_for_opset(a->opset);
    m.producer_name = "tessera";
    m.producer_version = "0.1.0";
    m.graph.name = "main";
    m.opset_imports.push_back({"", a->opset});
    for (const std::string& d : a->domains) {
      auto colon = d.rfind(':');
      int64_t v = 0;
      if (colon == std::string::npos || colon == 0 || !CLI::detail::lexical_cast(d.substr(colon + 1), v) ||
          v <= 0) {
        fmt::print(stderr, "tessera new: --domain '{}' is not NAME:VERSION with a positive version\n", d);
        status = kUnreadable;
        return;
      }
      std::string name = d.substr(0, colon);
      for (const auto& o : m.opset_imports) {
        if (ir::canonical_domain(o.domain) == ir::canonical_domain(name)) {
          fmt::print(stderr, "tessera new: domain '{}' is given twice\n", name);
          status = kUnreadable;
          return;
        }
      }
      m.opset_imports.push_back({name, v});
    }
    try {
      onnx::save_model(m, a->out);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tessera new: cannot write {}: {}\n", a->out, e.what());
      status = kUnreadable;
      return;
    }
    fmt::print("wrote {} (IR {}, opset {})\n", a->out, m.ir_version, a->opset);
    status = kOk;
  });
}

}  // namespace tessera::cli
