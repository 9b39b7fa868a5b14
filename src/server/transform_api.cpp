#include "server/transform_api.h"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "onnx/onnx_io.h"
#include "transforms/convert_tensors.h"
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

Report sanitize(ir::History& h, const json& o) {
  transforms::SanitizeOptions opts;
  opts.fold_threshold = integer(o, "fold_threshold", opts.fold_threshold, 0);
  opts.passes = static_cast<int>(integer(o, "passes", 0, 0));
  if (opts.passes > 1000) throw HttpError{400, "option 'passes' must be at most 1000"};
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
Report import_layer(ir::History& h, const json& o, const PathResolver& resolve) {
  transforms::ImportLayerOptions opts;
  opts.name = text(o, "name");
  opts.domain = text(o, "domain", opts.domain);
  std::string path = text(o, "path");
  if (path.empty()) throw HttpError{400, "option 'path' (the model to import) is missing"};
  if (opts.name.empty()) throw HttpError{400, "option 'name' (the layer's operator name) is missing"};
  std::filesystem::path file = resolve(path);
  ir::Model other;
  try {
    other = onnx::load_model(file);
  } catch (const std::exception& e) {
    throw HttpError{400, fmt::format("cannot read '{}': {}", path, e.what())};
  }
  return transforms::import_layer(h, other, opts);
}

using Runner = std::function<Report(ir::History&, const json&, const PathResolver&)>;

// A transformation that reads no file.
template <class F>
Runner plain(F f) {
  return [f](ir::History& h, const json& o, const PathResolver&) { return f(h, o); };
}

const std::map<std::string, Runner>& runners() {
  static const std::map<std::string, Runner> kRunners = {
      {"fp16",
       plain([](ir::History& h, const json& o) { return float_convert(h, o, ir::DataType::kFloat16); })},
      {"bf16",
       plain([](ir::History& h, const json& o) { return float_convert(h, o, ir::DataType::kBFloat16); })},
      {"sanitize", plain(sanitize)},
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
  try {
    changes = doc.edit([&](ir::History& h) { report = it->second(h, options, resolve); });
  } catch (const transforms::TransformError& e) {
    throw HttpError{422, e.what()};
  }
  return report_json(report, !changes.empty());
}

}  // namespace tessera::server
