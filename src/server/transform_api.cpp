#include "server/transform_api.h"

#include <fmt/format.h>

#include <cctype>
#include <cstddef>
#include <functional>
#include <map>
#include <random>

#include "io/npy.h"
#include "onnx/onnx_io.h"
#include "transforms/amp.h"
#include "transforms/convert_tensors.h"
#include "transforms/extract.h"
#include "transforms/float16.h"
#include "transforms/function_create.h"
#include "transforms/functions.h"
#include "transforms/import_layer.h"
#include "transforms/sanitize.h"
#include "transforms/set_shapes.h"

namespace tessera::server {

namespace {

using transforms::Report;

// Option readers: a missing option takes its default; one of the wrong JSON type is refused by name.
bool flag(const json& o, const char* key, bool fallback) {
  if (!o.contains(key)) return fallback;
  if (!o[key].is_boolean()) throw HttpError{400, fmt::format("option '{}' must be true or false", key)};
  return o[key].get<bool>();
}

int64_t integer(const json& o, const char* key, int64_t fallback, int64_t least) {
  if (!o.contains(key)) return fallback;
  if (!o[key].is_number_integer() || o[key].get<int64_t>() < least)
    throw HttpError{400, fmt::format("option '{}' must be an integer of at least {}", key, least)};
  return o[key].get<int64_t>();
}

std::string text(const json& o, const char* key, const std::string& fallback = "") {
  if (!o.contains(key)) return fallback;
  if (!o[key].is_string()) throw HttpError{400, fmt::format("option '{}' must be a string", key)};
  return o[key].get<std::string>();
}

// A list of names: a JSON array of strings, or one string of comma-separated names (as typed in a field).
std::vector<std::string> names(const json& o, const char* key) {
  std::vector<std::string> out;
  if (!o.contains(key)) return out;
  const json& v = o[key];
  auto push = [&](std::string s) {
    size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(s.substr(a, b - a + 1));
  };
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    for (size_t start = 0;;) {
      size_t comma = s.find(',', start);
      push(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return out;
  }
  if (!v.is_array()) throw HttpError{400, fmt::format("option '{}' must be a list of names", key)};
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) throw HttpError{400, fmt::format("option '{}'[{}] must be a string", key, i)};
    push(v[i].get<std::string>());
  }
  return out;
}

ir::DataType dtype(const json& o, const char* key, ir::DataType fallback) {
  if (!o.contains(key)) return fallback;
  std::string s = text(o, key);
  std::optional<ir::DataType> t = ir::dtype_from_name(s);
  if (!t || *t == ir::DataType::kUndefined)
    throw HttpError{400, fmt::format("option '{}': '{}' is not a data type", key, s)};
  return *t;
}

Report float_convert(ir::History& h, const json& o, ir::DataType to) {
  transforms::FloatConvertOptions opts;
  opts.to = to;
  opts.keep_io_types = flag(o, "keep_io_types", false);
  opts.op_block_list = names(o, "op_block_list");
  opts.node_block_list = names(o, "node_block_list");
  return transforms::convert_float(h, opts);
}

// Its progress: the sweep it is at (a share of the passes asked for; none when it goes to a fixed point).
Report sanitize(ir::History& h, const json& o, const TransformContext& ctx) {
  transforms::SanitizeOptions opts;
  opts.fold_threshold = integer(o, "fold_threshold", opts.fold_threshold, 0);
  opts.passes = static_cast<int>(integer(o, "passes", 0, 0));
  if (opts.passes > 1000) throw HttpError{400, "option 'passes' must be at most 1000"};
  if (JobControl* job = ctx.job) {
    bool fixed_point = opts.passes == 0;
    opts.progress = [job, fixed_point](int pass, int most) {
      job->progress(fixed_point ? 0.0 : static_cast<double>(pass - 1) / most, fmt::format("sweep {}", pass));
    };
  }
  return transforms::sanitize(h, opts);
}

Report convert_tensors(ir::History& h, const json& o) {
  transforms::TensorConvertOptions opts;
  opts.to = dtype(o, "to", opts.to);
  opts.from = dtype(o, "from", opts.from);
  opts.initializers = text(o, "initializers");
  opts.attributes = text(o, "attributes");
  return transforms::convert_tensors(h, opts);
}

// "shapes": [{"input", "shape": "1x3x224x224"}], "dim_params": [{"input", "axis", "name"}].
Report set_shapes(ir::History& h, const json& o) {
  transforms::SetShapesOptions opts;
  const json empty = json::array();
  const json& shapes = o.contains("shapes") ? o["shapes"] : empty;
  const json& dims = o.contains("dim_params") ? o["dim_params"] : empty;
  if (!shapes.is_array() || !dims.is_array())
    throw HttpError{400, "options 'shapes' and 'dim_params' must be lists"};
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string w = fmt::format("shapes[{}]", i);
    if (!shapes[i].is_object()) throw HttpError{400, fmt::format("option '{}' must be an object", w)};
    std::string input = text(shapes[i], "input"), shape = text(shapes[i], "shape");
    std::optional<ir::Shape> s = transforms::parse_shape(shape);
    if (input.empty()) throw HttpError{400, fmt::format("option '{}': 'input' is empty", w)};
    if (!s)
      throw HttpError{400, fmt::format("option '{}': '{}' is not a shape (e.g. 1x3x224x224)", w, shape)};
    opts.shapes.push_back({input, *s});
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    std::string w = fmt::format("dim_params[{}]", i);
    if (!dims[i].is_object()) throw HttpError{400, fmt::format("option '{}' must be an object", w)};
    transforms::InputDimParam p{text(dims[i], "input"), integer(dims[i], "axis", 0, INT64_MIN),
                                text(dims[i], "name")};
    if (p.input.empty() || p.name.empty())
      throw HttpError{400, fmt::format("option '{}' needs 'input' and 'name'", w)};
    opts.dim_params.push_back(std::move(p));
  }
  if (opts.shapes.empty() && opts.dim_params.empty())
    throw HttpError{400, "set_shapes needs at least one shape or dimension variable"};
  return transforms::set_shapes(h, opts);
}

Report function_create(ir::History& h, const json& o) {
  transforms::FunctionCreateOptions opts;
  opts.name = text(o, "name");
  opts.domain = text(o, "domain", opts.domain);
  opts.nodes = names(o, "nodes");
  opts.prefixes = names(o, "prefixes");
  if (opts.name.empty()) throw HttpError{400, "option 'name' (the function's name) is missing"};
  if (opts.nodes.empty() == opts.prefixes.empty())
    throw HttpError{400, "give either 'nodes' (one group) or 'prefixes' (a group per prefix)"};
  return transforms::create_function(h, opts);
}

// The model an "import_layer" reads: a file the studio may read, loaded whole.
Report import_layer(ir::History& h, const json& o, const TransformContext& ctx) {
  transforms::ImportLayerOptions opts;
  opts.name = text(o, "name");
  opts.domain = text(o, "domain", opts.domain);
  std::string path = text(o, "path");
  if (path.empty()) throw HttpError{400, "option 'path' (the model to import) is missing"};
  if (opts.name.empty()) throw HttpError{400, "option 'name' (the layer's operator name) is missing"};
  std::filesystem::path file = ctx.resolve(path);
  if (ctx.job) ctx.job->progress(0, fmt::format("reading '{}'", path));
  ir::Model other;
  try {
    other = onnx::load_model(file);
  } catch (const std::exception& e) {
    throw HttpError{400, fmt::format("cannot read '{}': {}", path, e.what())};
  }
  return transforms::import_layer(h, other, opts);
}

double number(const json& o, const char* key, double fallback, double least) {
  if (!o.contains(key)) return fallback;
  if (!o[key].is_number() || o[key].get<double>() < least)
    throw HttpError{400, fmt::format("option '{}' must be a number of at least {}", key, least)};
  return o[key].get<double>();
}

// {NAME: text} as a map; an option that is not an object of strings is refused by name.
std::map<std::string, std::string> text_map(const json& o, const char* key) {
  std::map<std::string, std::string> out;
  if (!o.contains(key)) return out;
  if (!o[key].is_object())
    throw HttpError{400, fmt::format("option '{}' must be an object of input names", key)};
  for (auto& [k, v] : o[key].items()) {
    if (!v.is_string()) throw HttpError{400, fmt::format("option '{}'['{}'] must be a string", key, k)};
    out[k] = v.get<std::string>();
  }
  return out;
}

// Integers written into a tensor of zeros of an integer (or boolean) type of a byte or more: `value` in the
// low byte of each element (little-endian), the others staying zero; random 1-9 when `value` is negative.
void small_integers(rt::Tensor& t, uint64_t seed, int value) {
  std::mt19937_64 rng(seed);
  const size_t size = static_cast<size_t>(ir::dtype_bits(t.dtype()) / 8);
  auto* p = static_cast<std::byte*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i)
    p[static_cast<size_t>(i) * size] = std::byte(value >= 0 ? value : 1 + rng() % 9);
}

// Ones in a tensor of zeros of a 4-bit type: two elements a byte, the first in the low nibble.
void sub_byte_ones(rt::Tensor& t) {
  auto* p = static_cast<std::byte*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i) p[i / 2] |= std::byte(i % 2 ? 0x10 : 0x01);
}

}  // namespace

int random_input_constant(const std::string& name) {
  std::string n = name;
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto says = [&n](const char* word) { return n.find(word) != std::string::npos; };
  // Checked first: "token_type_ids" and "segment_ids" are not masks, whatever else their name holds.
  if (says("token_type") || says("segment")) return 0;
  if (says("mask") || says("attention")) return 1;
  return -1;
}

namespace {

// A random value for graph input `vi`: normal floats; integers 1-9 (valid token ids and indices for
// most models; the initializer editor's integer fill spans the whole type), except inputs named as masks
// (1: attend everywhere) or segment ids (0: the first segment), see random_input_constant; booleans
// false, masks true. Free dimensions 1 unless `shape` gives them. Reproducible from `seed`.
rt::Value random_input(const ir::ValueInfo& vi, const std::string& shape, uint64_t seed) {
  if (!vi.type.is_tensor())
    throw HttpError{400,
                    fmt::format("input '{}' is {}: give it as a .npy file", vi.name, vi.type.to_string())};
  std::vector<int64_t> dims;
  if (!shape.empty()) {
    std::optional<ir::Shape> s = transforms::parse_shape(shape);
    if (!s)
      throw HttpError{400,
                      fmt::format("option 'shapes'['{}']: '{}' is not a shape like 1x128", vi.name, shape)};
    for (const auto& d : *s) {
      if (!d.is_static())
        throw HttpError{400, fmt::format("option 'shapes'['{}']: '{}' has a free dimension", vi.name, shape)};
      dims.push_back(d.value);
    }
  } else if (vi.type.shape) {
    for (const auto& d : *vi.type.shape) dims.push_back(d.is_static() ? d.value : 1);
  }
  if (vi.type.shape && dims.size() != vi.type.shape->size())
    throw HttpError{400, fmt::format("option 'shapes'['{}']: rank {} given, the input has rank {}", vi.name,
                                     dims.size(), vi.type.shape->size())};
  ir::DataType t = vi.type.elem;
  const bool bytes = ir::dtype_bits(t) >= 8;  // 4-bit integers keep the editor's fill (1-7 or 1-15)
  const bool ints = !ir::dtype_is_float(t) && t != ir::DataType::kBool;
  const int constant = ir::dtype_is_float(t) ? -1 : random_input_constant(vi.name);
  const bool mask = constant == 1 && t == ir::DataType::kBool;  // a boolean mask: true
  const bool random_nibbles = ints && !bytes && constant < 0;
  const char* kind = ir::dtype_is_float(t) ? "normal" : random_nibbles ? "uniform_int_pos" : "zeros";
  json j{{"name", vi.name},
         {"dtype", ir::dtype_name(t)},
         {"shape", dims},
         {"fill", {{"kind", kind}, {"seed", seed}}}};
  try {
    rt::Tensor values = rt::Tensor::from_ir(ir::tensor_from_json(j)).clone();
    if ((ints && bytes) || mask) small_integers(values, seed, constant);
    if (ints && !bytes && constant == 1) sub_byte_ones(values);
    return rt::Value(std::move(values));
  } catch (const std::exception& e) {
    throw HttpError{400, fmt::format("input '{}': no random values: {}", vi.name, e.what())};
  }
}

}  // namespace

transforms::Feeds amp_feeds(const ir::Model& m, const json& o, const TransformContext& ctx) {
  std::map<std::string, std::string> files = text_map(o, "inputs"), shapes = text_map(o, "shapes");
  uint64_t seed = static_cast<uint64_t>(integer(o, "seed", 0, 0));
  transforms::Feeds feeds;
  for (const ir::ValueInfo& vi : m.graph.inputs) {
    if (m.graph.find_initializer(vi.name)) continue;
    auto file = files.find(vi.name);
    if (file == files.end()) {
      feeds.emplace_back(vi.name, random_input(vi, shapes.count(vi.name) ? shapes[vi.name] : "", seed++));
      continue;
    }
    std::filesystem::path path = ctx.resolve(file->second);
    try {
      feeds.emplace_back(vi.name, rt::Value(rt::Tensor::from_ir(io::read_npy(path, vi.name)).clone()));
    } catch (const std::exception& e) {
      throw HttpError{400, fmt::format("input '{}': cannot read '{}': {}", vi.name, file->second, e.what())};
    }
    files.erase(file);
  }
  for (const auto& [name, file] : files)
    throw HttpError{400, fmt::format("option 'inputs': the model has no input '{}' (file '{}')", name, file)};
  return feeds;
}

namespace {

// Automatic mixed precision; its progress is the share of the run budget spent.
Report amp(ir::History& h, const json& o, const TransformContext& ctx) {
  transforms::AmpOptions opts;
  opts.rtol = number(o, "rtol", opts.rtol, 0);
  opts.atol = number(o, "atol", opts.atol, 0);
  opts.headroom = number(o, "headroom", opts.headroom, 0);
  if (opts.headroom > 0.95) throw HttpError{400, "option 'headroom' must be at most 0.95"};
  opts.max_runs = static_cast<int>(integer(o, "max_runs", opts.max_runs, 2));
  int check_sets = static_cast<int>(integer(o, "check_sets", 1, 0));
  if (check_sets > 16) throw HttpError{400, "option 'check_sets' must be at most 16"};
  opts.session.backend = text(o, "backend", "cpu");
  if (opts.session.backend != "cpu" && opts.session.backend != "cuda" && opts.session.backend != "auto")
    throw HttpError{400,
                    fmt::format("option 'backend': '{}' is not cpu, cuda or auto", opts.session.backend)};
  opts.session.optimization = *rt::opt_level_from_name("basic");
  std::vector<transforms::Feeds> feeds{amp_feeds(h.model(), o, ctx)};
  for (auto& f : transforms::shuffled_feeds(feeds[0], check_sets, integer(o, "seed", 0, 0) + 1))
    feeds.push_back(std::move(f));
  if (ctx.job) {
    JobControl* job = ctx.job;
    opts.progress = [job](double spent) { job->progress(spent, "model runs"); };
    job->progress(0, "reference run");
  }
  return transforms::convert_amp(h, opts, feeds);
}

using Runner = std::function<Report(ir::History&, const json&, const TransformContext&)>;

// A transformation that reads no file and reports no progress.
template <class F>
Runner plain(F f) {
  return [f](ir::History& h, const json& o, const TransformContext&) { return f(h, o); };
}

const std::map<std::string, Runner>& runners() {
  static const std::map<std::string, Runner> kRunners = {
      {"fp16",
       plain([](ir::History& h, const json& o) { return float_convert(h, o, ir::DataType::kFloat16); })},
      {"bf16",
       plain([](ir::History& h, const json& o) { return float_convert(h, o, ir::DataType::kBFloat16); })},
      {"sanitize", sanitize},
      {"convert_tensors", plain(convert_tensors)},
      {"set_shapes", plain(set_shapes)},
      {"function_create", plain(function_create)},
      {"function_inline", plain([](ir::History& h, const json& o) {
         return transforms::inline_function(h, text(o, "function"));
       })},
      {"function_delete", plain([](ir::History& h, const json& o) {
         std::string key = text(o, "function");
         if (key.empty()) throw HttpError{400, "option 'function' (DOMAIN:NAME) is missing"};
         return transforms::delete_function(h, key);
       })},
      {"import_layer", import_layer},
      {"amp", amp},
  };
  return kRunners;
}

json report_json(const Report& r, bool changed) {
  json counts = json::array();
  for (const auto& [what, n] : r.counts) counts.push_back(json::array({what, n}));
  return {
      {"counts", std::move(counts)}, {"warnings", r.warnings}, {"details", r.details}, {"changed", changed}};
}

}  // namespace

json run_transform(Document& doc, const std::string& name, const json& options,
                   std::vector<ir::Change>& changes, const PathResolver& resolve) {
  auto it = runners().find(name);
  if (it == runners().end()) {
    std::string known;
    for (const auto& [k, _] : runners()) known += (known.empty() ? "" : ", ") + k;
    throw HttpError{404, fmt::format("no transformation '{}' (known: {})", name, known)};
  }
  if (!options.is_object()) throw HttpError{400, "'options' must be an object"};
  Report report;
  TransformContext ctx{resolve, nullptr};
  try {
    changes = doc.edit([&](ir::History& h) { report = it->second(h, options, ctx); });
  } catch (const transforms::TransformError& e) {
    throw HttpError{422, e.what()};
  }
  return report_json(report, !changes.empty());
}

namespace {

// "subgraph", "function", or "inputs" and "outputs": exactly one kind of extraction.
transforms::ExtractOptions extract_options(const json& o) {
  transforms::ExtractOptions opts;
  opts.subgraph = text(o, "subgraph");
  opts.function = text(o, "function");
  opts.inputs = names(o, "inputs");
  opts.outputs = names(o, "outputs");
  bool cut = !opts.inputs.empty() || !opts.outputs.empty();
  int kinds = !opts.subgraph.empty() + !opts.function.empty() + cut;
  if (kinds != 1)
    throw HttpError{400,
                    "give exactly one of 'subgraph' (NODE:ATTR), 'function' (DOMAIN:NAME) or a cut "
                    "('inputs' and 'outputs')"};
  if (cut && opts.outputs.empty()) throw HttpError{400, "a cut needs 'outputs' (the values it ends at)"};
  return opts;
}

// The new document's name: the model's, with what was extracted ("model.body.onnx").
std::string extract_name(const std::string& model, const transforms::ExtractOptions& o) {
  std::string stem = model.ends_with(".onnx") ? model.substr(0, model.size() - 5) : model;
  std::string what = !o.subgraph.empty() ? o.subgraph : !o.function.empty() ? o.function : "cut";
  for (char& c : what) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  }
  return fmt::format("{}.{}.onnx", stem, what);
}

// The model as it is now, its version and the document's name, taken under the document's lock.
struct Snapshot {
  ir::Model model;
  uint64_t version;
  std::string name;
};
Snapshot snapshot(Document& doc) {
  std::lock_guard lock(doc.mutex());
  return {doc.model(), doc.version(), doc.to_json().value("name", "model.onnx")};
}

}  // namespace

TransformJobs::Work transform_work(std::shared_ptr<Document> doc, const std::string& name, json options,
                                   PathResolver resolve, EditAnswer answer, AdoptModel adopt) {
  if (!options.is_object()) throw HttpError{400, "'options' must be an object"};
  if (name == "extract") {
    transforms::ExtractOptions opts = extract_options(options);
    return [doc, opts, adopt](JobControl& job) -> json {
      Snapshot snap = snapshot(*doc);
      job.progress(0, "extracting");
      Report report;
      ir::Model out;
      transforms::ObserverScope observed(&job);
      try {
        out = transforms::extract(snap.model, opts, report);
      } catch (const transforms::TransformError& e) {
        throw HttpError{422, e.what()};
      }
      job.check();
      return {{"document", adopt(std::move(out), extract_name(snap.name, opts))},
              {"log", report_json(report, true)}};
    };
  }
  auto it = runners().find(name);
  if (it == runners().end()) {
    std::string known = "extract";
    for (const auto& [k, _] : runners()) known += ", " + k;
    throw HttpError{404, fmt::format("no transformation '{}' (known: {})", name, known)};
  }
  Runner runner = it->second;
  return [doc, name, options, resolve, answer, runner](JobControl& job) -> json {
    // The transformation runs on a copy (tensors are shared, not copied), its result recorded in a
    // history of its own; the document gets the difference as one undo step, under its lock.
    Snapshot snap = snapshot(*doc);
    ir::Model& model = snap.model;
    uint64_t version = snap.version;
    ir::History scratch(model);
    Report report;
    job.progress(0, name);
    try {
      transforms::ObserverScope observed(&job);
      report = runner(scratch, options, TransformContext{resolve, &job});
    } catch (const transforms::TransformError& e) {
      job.check();  // a failure the cancel caused (a session build it stopped) is the cancel
      throw HttpError{422, e.what()};
    } catch (const std::exception&) {
      job.check();
      throw;
    }
    std::string step = scratch.undo_count() ? scratch.undo_description() : name;
    std::lock_guard lock(doc->mutex());
    job.check();
    if (doc->version() != version) {
      throw HttpError{409, fmt::format("the model changed while '{}' ran (version {} -> {}): its result was "
                                       "not applied; run it again",
                                       name, version, doc->version())};
    }
    bool changed = false;
    std::vector<ir::Change> changes =
        doc->edit([&](ir::History& h) { changed = transforms::commit(h, step, std::move(model)); });
    json a = answer(*doc, changes);
    a["log"] = report_json(report, changed);
    return {{"answer", std::move(a)}};
  };
}

}  // namespace tessera::server
