#include "passes/pipeline.h"

#include "passes/rule.h"

namespace tessera::passes {

std::vector<Rewrite> optimize(ir::Model& model, rt::OptLevel level) {
  std::vector<Rewrite> done;
  if (level == rt::OptLevel::kNone) return done;
  run_rules(model, rules_for(rt::OptLevel::kBasic), done);
  if (level == rt::OptLevel::kExtended) run_rules(model, rules_for(rt::OptLevel::kExtended), done);
  return done;
}

}  // namespace tessera::passes
