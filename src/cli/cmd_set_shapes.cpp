// tessera set-shapes MODEL -o OUT [--shape NAME=1x3x224x224]... [--dim-param NAME:AXIS=batch]...
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/transform_io.h"
#include "ir/commands/history.h"
#include "transforms/set_shapes.h"

namespace tessera::cli {

namespace {

// "NAME=SHAPE" -> the input shape; the last '=' splits, so input names may contain '='.
std::optional<transforms::InputShape> parse_shape_arg(const std::string& s) {
  size_t eq = s.rfind('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  auto dims = transforms::parse_shape(s.substr(eq + 1));
  if (!dims) return std::nullopt;
  return transforms::InputShape{s.substr(0, eq), *dims};
}

// "NAME:AXIS=VARIABLE".
std::optional<transforms::InputDimParam> parse_dim_param(const std::string& s) {
  size_t eq = s.rfind('=');
  if (eq == std::string::npos) return std::nullopt;
  size_t colon = s.rfind(':', eq);
  if (colon == std::string::npos || colon == 0 || eq + 1 == s.size()) return std::nullopt;
  try {
    size_t used = 0;
    std::string axis = s.substr(colon + 1, eq - colon - 1);
    int64_t a = std::stoll(axis, &used);
    if (used != axis.size()) return std::nullopt;
    return transforms::InputDimParam{s.substr(0, colon), a, s.substr(eq + 1)};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

void add_set_shapes_command(CLI::App& app, int& status) {
  auto* cmd =
      app.add_subcommand("set-shapes",
                         "Set graph input sizes or dimension variables, then store the inferred type of "
                         "every\nintermediate value (value_info)");
  auto io = add_transform_io(cmd);
  auto shapes = std::make_shared<std::vector<std::string>>();
  auto dims = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--shape", *shapes, "NAME=1x3x224x224 (a non-numeric size is a dimension variable)");
  cmd->add_option("--dim-param", *dims, "NAME:AXIS=VARIABLE, e.g. input:0=batch");
  cmd->callback([io, shapes, dims, &status] {
    transforms::SetShapesOptions opts;
    for (const auto& s : *shapes) {
      auto v = parse_shape_arg(s);
      if (!v) {
        fmt::print(stderr, "tessera set-shapes: --shape '{}' is not NAME=1x3x224x224\n", s);
        status = kUnreadable;
        return;
      }
      opts.shapes.push_back(*v);
    }
    for (const auto& s : *dims) {
      auto v = parse_dim_param(s);
      if (!v) {
        fmt::print(stderr, "tessera set-shapes: --dim-param '{}' is not NAME:AXIS=VARIABLE\n", s);
        status = kUnreadable;
        return;
      }
      opts.dim_params.push_back(*v);
    }
    run_transform("set-shapes", *io, status, [&](ir::Model& m) {
      ir::History h(m);
      return transforms::set_shapes(h, opts);
    });
  });
}

}  // namespace tessera::cli
