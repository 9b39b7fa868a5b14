#include "check/diagnostic.h"

#include <fmt/format.h>

namespace tessera::check {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "error";
}

std::string Diagnostic::to_string() const {
  std::string where = graph;
  if (!node.empty()) {
    where += fmt::format(": node '{}' ({})", node, op_type);
  } else if (!op_type.empty()) {
    where += fmt::format(": node #{} ({})", node_index, op_type);
  }
  if (input_index >= 0) where += fmt::format(", input {}", input_index);
  if (output_index >= 0) where += fmt::format(", output {}", output_index);
  return fmt::format("{}: {}: {}", severity_name(severity), where, message);
}

size_t Diagnostics::count(Severity s) const {
  size_t n = 0;
  for (const Diagnostic& d : items) n += d.severity == s;
  return n;
}

}  // namespace tessera::check
