// tessera function list MODEL
// tessera function inline MODEL -o OUT [--name DOMAIN:NAME]
// tessera function delete MODEL -o OUT --name DOMAIN:NAME
// tessera function extract MODEL -o OUT --name DOMAIN:NAME     (as tessera extract --function)
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/transform_io.h"
#include "ir/commands/history.h"
#include "onnx/onnx_io.h"
#include "transforms/extract.h"
#include "transforms/function_create.h"
#include "transforms/functions.h"

namespace tessera::cli {

namespace {

void add_list(CLI::App* fn, int& status) {
  auto* cmd = fn->add_subcommand("list", "List the model's local functions: signature, size, calls");
  auto model = std::make_shared<std::string>();
  cmd->add_option("MODEL", *model, "ONNX model file")->required();
  cmd->callback([model, &status] {
    ir::Model m;
    try {
      m = onnx::load_model(*model);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tessera function list: cannot read {}: {}\n", *model, e.what());
      status = kUnreadable;
      return;
    }
    auto list = transforms::list_functions(m);
    if (list.empty()) fmt::print("{}: no local functions\n", *model);
    for (const auto& f : list) {
      fmt::print("{}({}) -> ({})  {} nodes, {} calls", f.key, fmt::join(f.inputs, ", "),
                 fmt::join(f.outputs, ", "), f.nodes, f.calls);
      if (!f.attributes.empty()) fmt::print("  attributes: {}", fmt::join(f.attributes, ", "));
      fmt::print("\n");
    }
  });
}

void add_edit(CLI::App* fn, int& status, const std::string& name, const std::string& help,
              bool name_required) {
  auto* cmd = fn->add_subcommand(name, help);
  auto io = add_transform_io(cmd, name != "extract");
  auto key = std::make_shared<std::string>();
  auto* opt = cmd->add_option("--name", *key, "The function, DOMAIN:NAME");
  if (name_required) opt->required();
  cmd->callback([io, key, name, &status] {
    run_transform("function " + name, *io, status, [&](ir::Model& m) {
      if (name == "extract") {
        transforms::Report r;
        transforms::ExtractOptions o;
        o.function = *key;
        m = transforms::extract(m, o, r);
        return r;
      }
      ir::History h(m);
      return name == "inline" ? transforms::inline_function(h, *key) : transforms::delete_function(h, *key);
    });
  });
}

void add_create(CLI::App* fn, int& status) {
  auto* cmd = fn->add_subcommand(
      "create",
      "Group nodes into a local function and replace them by a call; with several groups of the same\n"
      "structure (--prefix, --scope, --find-repeats), one function and a call per group (differing\n"
      "attributes become parameters)");
  auto io = add_transform_io(cmd);
  auto opts = std::make_shared<transforms::FunctionCreateOptions>();
  cmd->add_option("--name", opts->name, "The function's name")->required();
  cmd->add_option("--domain", opts->domain, "Its domain (default: local)");
  cmd->add_option("--nodes", opts->nodes, "One group: these node names")->delimiter(',');
  cmd->add_option("--prefix", opts->prefixes, "One group per prefix of node names (scope)")->delimiter(',');
  cmd->add_option("--scope", opts->scope,
                  "One group per distinct text this expression (ECMAScript) matches at the start of node\n"
                  "names, e.g. '/encoder/layer\\.[0-9]+/attention/'");
  cmd->add_flag("--find-repeats", opts->find_repeats,
                "Find the groups without names: the most nodes covered by contiguous blocks (file order)\n"
                "of the same structure, e.g. each layer of a stack");
  cmd->callback([io, opts, &status] {
    run_transform("function create", *io, status, [&](ir::Model& m) {
      ir::History h(m);
      return transforms::create_function(h, *opts);
    });
  });
}

}  // namespace

void add_function_command(CLI::App& app, int& status) {
  auto* cmd =
      app.add_subcommand("function", "Local functions (templates): list, create, inline, delete, extract");
  cmd->require_subcommand(1);
  add_list(cmd, status);
  add_create(cmd, status);
  add_edit(cmd, status, "inline", "Replace calls by the function's body (all functions without --name)",
           false);
  add_edit(cmd, status, "delete", "Remove a function; its calls stay as custom-operator nodes", true);
  add_edit(cmd, status, "extract", "Save a function's body as a model (input types from its first call)",
           true);
}

}  // namespace tessera::cli
