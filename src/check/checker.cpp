#include "check/checker.h"

#include <fmt/format.h>

#include <unordered_set>

#include "check/graph_checker.h"

namespace tessera::check {

namespace {

// The IR versions whose files Tessera understands (3: opset imports appear; 14: int2/uint2, float8e8m0).
constexpr int64_t kMinIrVersion = 3;
constexpr int64_t kMaxIrVersion = 14;

void check_opset_imports(const std::vector<ir::OpsetImport>& opsets, const std::string& where, Checker& c) {
  std::unordered_set<std::string_view> seen;
  for (const ir::OpsetImport& o : opsets) {
    std::string_view d = ir::canonical_domain(o.domain);
    if (!seen.insert(d).second) {
      c.report(Severity::kError, where, nullptr, -1, -1,
               fmt::format("domain '{}' is imported twice", d.empty() ? "ai.onnx" : d));
    }
    if (o.version <= 0) {
      c.report(Severity::kError, where, nullptr, -1, -1,
               fmt::format("domain '{}' is imported with version {}; versions start at 1",
                           d.empty() ? "ai.onnx" : d, o.version));
    }
  }
}

}  // namespace

bool is_c_identifier(std::string_view name) {
  if (name.empty()) return false;
  auto alpha = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; };
  if (!alpha(name[0])) return false;
  for (char ch : name) {
    if (!alpha(ch) && !(ch >= '0' && ch <= '9')) return false;
  }
  return true;
}

void check_model_header(const ir::Model& model, Checker& checker) {
  const std::string main = "main";
  if (model.ir_version < kMinIrVersion) {
    checker.report(Severity::kError, main, nullptr, -1, -1,
                   fmt::format("IR version {} is older than {}, the first with opset imports",
                               model.ir_version, kMinIrVersion));
  } else if (model.ir_version > kMaxIrVersion) {
    checker.report(
        Severity::kWarning, main, nullptr, -1, -1,
        fmt::format("IR version {} is newer than {}, the newest Tessera knows; fields it does not know "
                    "are kept but not checked",
                    model.ir_version, kMaxIrVersion));
  }
  if (model.opset_imports.empty()) {
    checker.report(Severity::kError, main, nullptr, -1, -1, "the model imports no operator set");
  }
  check_opset_imports(model.opset_imports, main, checker);

  std::unordered_set<std::string> function_ids;
  for (const ir::Function& fn : model.functions) {
    std::string where = fmt::format("function {}{}{}", fn.domain.empty() ? "" : fn.domain + ".", fn.name,
                                    fn.overload.empty() ? "" : ":" + fn.overload);
    if (!function_ids.insert(fn.domain + "\n" + fn.name + "\n" + fn.overload).second) {
      checker.report(Severity::kError, where, nullptr, -1, -1,
                     "a function with this domain and name is defined twice");
    }
    check_opset_imports(fn.opset_imports, where, checker);
    GraphEnv env;
    env.opsets = fn.opset_imports.empty() ? &model.opset_imports : &fn.opset_imports;
    env.function = &fn;
    checker.check_graph(fn.body, where, nullptr, nullptr, env);
  }
}

namespace {
void check_model_into(const ir::Model& model, const CheckOptions& options, CheckResult& result,
                      MainGraphObserver* observer = nullptr) {
  result.diagnostics.items.clear();
  Checker checker(model, options, result.diagnostics);
  checker.set_observer(observer);
  check_model_header(model, checker);
  if (observer) observer->before_main_graph(result.diagnostics.items.size(), checker.symbols());
  const std::string main = "main";

  GraphEnv env;
  env.opsets = &model.opset_imports;
  Scope scope;
  checker.check_graph(model.graph, main, nullptr, nullptr, env, &scope);
  if (observer) observer->after_check(scope);
  result.value_types.clear();
  result.value_types.reserve(scope.values().size());
  for (auto& [name, facts] : scope.values()) {
    if (!facts.type.is_none()) result.value_types.emplace(name, std::move(facts.type));
  }
}
}  // namespace

CheckResult check_model(const ir::Model& model, const CheckOptions& options) {
  CheckResult result;
  check_model_into(model, options, result);
  return result;
}

void check_model_observed(const ir::Model& model, CheckResult& result, MainGraphObserver& observer) {
  check_model_into(model, CheckOptions{}, result, &observer);
}

}  // namespace tessera::check
