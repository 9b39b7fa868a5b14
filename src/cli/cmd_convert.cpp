// tessera convert fp16 MODEL -o OUT [--to fp16|bf16] [--keep-io-types] [--op-block-list OPS]
//                      [--node-block-list NODES]
// tessera convert tensors MODEL -o OUT --to TYPE [--from TYPE] [--initializers REGEX] [--attributes REGEX]
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/run_inputs.h"
#include "cli/transform_io.h"
#include "ir/commands/history.h"
#include "transforms/amp.h"
#include "transforms/convert_tensors.h"
#include "transforms/float16.h"

namespace tessera::cli {

namespace {

std::optional<ir::DataType> parse_dtype(const std::string& s) {
  if (s == "fp16" || s == "half") return ir::DataType::kFloat16;
  if (s == "bf16") return ir::DataType::kBFloat16;
  if (s == "fp32") return ir::DataType::kFloat;
  if (s == "fp64") return ir::DataType::kDouble;
  return ir::dtype_from_name(s);
}

void add_float16(CLI::App* convert, int& status) {
  auto* cmd = convert->add_subcommand(
      "fp16",
      "Convert float32 to float16 (or bfloat16 with --to bf16): weights, constants, Cast targets and value\n"
      "types, in subgraphs and local functions; blocked nodes stay float32 behind shared Casts");
  auto io = add_transform_io(cmd);
  auto opts = std::make_shared<transforms::FloatConvertOptions>();
  auto to = std::make_shared<std::string>("fp16");
  cmd->add_option("--to", *to, "fp16 (default) or bf16")->check(CLI::IsMember({"fp16", "bf16"}));
  cmd->add_flag("--keep-io-types", opts->keep_io_types,
                "Graph inputs and outputs stay float32, with one Cast at each boundary");
  cmd->add_option("--op-block-list", opts->op_block_list,
                  "Operator types that stay float32 (OP or DOMAIN:OP)")
      ->delimiter(',');
  cmd->add_option("--node-block-list", opts->node_block_list, "Node names that stay float32")->delimiter(',');
  cmd->callback([io, opts, to, &status] {
    opts->to = *to == "bf16" ? ir::DataType::kBFloat16 : ir::DataType::kFloat16;
    run_transform("convert fp16", *io, status, [&](ir::Model& m) {
      ir::History h(m);
      return transforms::convert_float(h, *opts);
    });
  });
}

void add_tensors(CLI::App* convert, int& status) {
  auto* cmd = convert->add_subcommand(
      "tensors",
      "Convert the element type of selected initializers and tensor / list attributes (lossy changes are\n"
      "reported: elements changed, largest change)");
  auto io = add_transform_io(cmd);
  auto to = std::make_shared<std::string>();
  auto from = std::make_shared<std::string>("float");
  auto opts = std::make_shared<transforms::TensorConvertOptions>();
  cmd->add_option("--to", *to, "Target element type (float16, bfloat16, float, double, int8 ... int64)")
      ->required();
  cmd->add_option("--from", *from, "Only tensors of this type (default float)");
  cmd->add_option("--initializers", opts->initializers,
                  "Regular expression over initializer names (default: all, unless --attributes is given)");
  cmd->add_option("--attributes", opts->attributes,
                  "Regular expression over NODE.ATTRIBUTE names of tensor and list attributes");
  cmd->callback([io, to, from, opts, &status] {
    auto t = parse_dtype(*to), f = parse_dtype(*from);
    if (!t || !f) {
      fmt::print(stderr, "tessera convert tensors: unknown element type '{}'\n", !t ? *to : *from);
      status = kUnreadable;
      return;
    }
    opts->to = *t;
    opts->from = *f;
    run_transform("convert tensors", *io, status, [&](ir::Model& m) {
      ir::History h(m);
      return transforms::convert_tensors(h, *opts);
    });
  });
}

void add_amp(CLI::App* convert, int& status) {
  auto* cmd = convert->add_subcommand(
      "amp",
      "Automatic mixed precision: as many nodes in float16 as the tolerance allows on the given inputs\n"
      "(or random ones), checked by running the model; inputs and outputs stay float32");
  auto io = add_transform_io(cmd);
  auto opts = std::make_shared<transforms::AmpOptions>();
  auto run = std::make_shared<RunSettings>();
  cmd->add_option("--input,-i", run->inputs, "NAME=FILE (.npy, .pb, image); random values otherwise");
  cmd->add_option("--shape", run->shapes, "NAME=1x3x224x224 for random inputs of symbolic shape");
  cmd->add_option("--seed", run->seed, "Seed of the random inputs");
  cmd->add_option("--rtol", opts->rtol, "Relative tolerance (default 1e-2)");
  cmd->add_option("--atol", opts->atol, "Absolute tolerance (default 1e-3)");
  cmd->add_option("--headroom", opts->headroom,
                  "Share of the tolerance left unused on the given inputs, for other inputs (default 0.2)")
      ->check(CLI::Range(0.0, 0.95));
  cmd->add_option("--backend", run->backend, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option("--threads", run->threads, "Threads (default: all)");
  cmd->add_option("--max-runs", opts->max_runs,
                  "The search's budget in whole-model runs (default 40; the two instrumented runs not "
                  "counted; a trial run from a checkpoint counts the share of the nodes it ran); groups it "
                  "cannot split further stay float32")
      ->check(CLI::Range(2, 100000));
  cmd->add_option("--checkpoints", opts->checkpoints,
                  "Trials run only from the latest of this many checkpoints where they equal the state kept "
                  "(default 32; 0: every trial runs the whole model; the decisions are the same)")
      ->check(CLI::Range(0, 100000));
  auto check_sets = std::make_shared<int>(1);
  cmd->add_option("--check-sets", *check_sets,
                  "Input sets made by shuffling the given inputs' elements (0/1 masks kept) on which the "
                  "tolerance must hold too, for inputs the search did not see (default 1)")
      ->check(CLI::Range(0, 16));
  cmd->callback([io, opts, run, check_sets, &status] {
    run_transform("convert amp", *io, status, [&](ir::Model& m) {
      run->optimization = "basic";
      opts->session = session_options(*run);
      std::vector<transforms::Feeds> feeds;
      try {
        rt::Session probe(m, opts->session);
        feeds.push_back(gather_inputs(probe, *run));
        for (auto& f : transforms::shuffled_feeds(feeds[0], *check_sets, run->seed + 1))
          feeds.push_back(std::move(f));
      } catch (const std::exception& e) {
        throw transforms::TransformError(fmt::format("cannot prepare the inputs: {}", e.what()));
      }
      ir::History h(m);
      return transforms::convert_amp(h, *opts, feeds);
    });
  });
}

}  // namespace

void add_convert_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("convert", "Precision and element type conversions of a model");
  cmd->require_subcommand(1);
  add_float16(cmd, status);
  add_tensors(cmd, status);
  add_amp(cmd, status);
}

}  // namespace tessera::cli
