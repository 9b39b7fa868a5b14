#include "transforms/convert_tensors.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <regex>

#include "check/checker.h"
#include "ir/commands/commands.h"
#include "transforms/observer.h"
#include "transforms/tensor_convert.h"

namespace tessera::transforms {

namespace {

struct Converter {
  ir::History& h;
  const TensorConvertOptions& o;
  Report& report;
  std::optional<std::regex> init_re, attr_re;
  bool all_initializers = false;

  void note(const std::string& what, const ConversionStats& st) {
    report.add("tensors converted");
    report.add("elements changed", st.changed);
    report.details.push_back(fmt::format("{}: {} elements, {} changed", what, st.elements, st.changed));
    if (st.changed == 0) return;
    report.warnings.push_back(fmt::format(
        "{}: {} of {} elements changed, largest change {:g}{}", what, st.changed, st.elements, st.max_change,
        st.clamped ? fmt::format(" ({} clamped to the type's range)", st.clamped) : std::string()));
  }

  void initializers(const ir::GraphPath& path, const ir::Graph& g, const std::string& where) {
    if (!all_initializers && !init_re) return;
    Steps steps("converting initializers", where == "main" ? g.initializers.size() : 0, 0, 0.8);
    for (const auto& t : g.initializers) {
      if (where == "main") steps.at(static_cast<size_t>(&t - g.initializers.data()));
      if (t.dtype != o.from || (init_re && !std::regex_search(t.name, *init_re))) continue;
      ConversionStats st;
      ir::Tensor c = convert_tensor(t, o.to, &st);
      h.execute(std::make_unique<ir::ReplaceInitializer>(path, std::move(c)));
      note(fmt::format("{}: initializer '{}'", where, t.name), st);
    }
  }

  // A list attribute in the other list type: floats <-> ints, the only two ONNX has.
  std::optional<ir::Attribute> convert_list(const ir::Attribute& a, ConversionStats& st) {
    ir::Attribute c = a;
    if (a.type == ir::AttrType::kFloats && o.from == ir::DataType::kFloat && o.to == ir::DataType::kInt64) {
      c.type = ir::AttrType::kInts;
      c.floats.clear();
      for (float f : a.floats) {
        int64_t v = std::isfinite(f) ? static_cast<int64_t>(f) : 0;
        c.ints.push_back(v);
        ++st.elements;
        double d = std::fabs(static_cast<double>(v) - f);
        if (d != 0) ++st.changed, st.max_change = std::max(st.max_change, d);
      }
      return c;
    }
    if (a.type == ir::AttrType::kInts && o.from == ir::DataType::kInt64 && o.to == ir::DataType::kFloat) {
      c.type = ir::AttrType::kFloats;
      c.ints.clear();
      for (int64_t i : a.ints) {
        float v = static_cast<float>(i);
        c.floats.push_back(v);
        ++st.elements;
        double d = std::fabs(static_cast<double>(v) - static_cast<double>(i));
        if (d != 0) ++st.changed, st.max_change = std::max(st.max_change, d);
      }
      return c;
    }
    return std::nullopt;
  }

  void attributes(const ir::GraphPath& path, const ir::Graph& g, const std::string& where) {
    if (!attr_re) return;
    for (const auto& n : g.nodes) {
      for (const auto& a : n.attributes) {
        if (a.is_reference() || !std::regex_search(n.name + "." + a.name, *attr_re)) continue;
        ConversionStats st;
        std::optional<ir::Attribute> c;
        if (a.type == ir::AttrType::kTensor || a.type == ir::AttrType::kTensors) {
          bool any = false;
          ir::Attribute t = a;
          for (auto& x : t.tensors) {
            if (x.dtype != o.from) continue;
            x = convert_tensor(x, o.to, &st);
            any = true;
          }
          if (any) c = std::move(t);
        } else {
          c = convert_list(a, st);
        }
        if (!c) continue;
        h.execute(std::make_unique<ir::SetAttribute>(path, ir::NodeRef(n.id), std::move(*c)));
        note(fmt::format("{}: attribute '{}.{}'", where, n.name, a.name), st);
      }
    }
  }

  void graph(const ir::GraphPath& path, const std::string& where) {
    // Commands change the graph: read it again after each step through the path.
    const ir::Graph& g = ir::resolve_graph(h.model(), path);
    std::vector<std::tuple<ir::NodeId, std::string, size_t, std::string>> subs;
    for (const auto& n : g.nodes)
      for (const auto& a : n.attributes)
        for (size_t k = 0; k < a.graphs.size(); ++k)
          subs.emplace_back(n.id, a.name, k, fmt::format("{}/{}.{}", where, n.name, a.name));
    initializers(path, ir::resolve_graph(h.model(), path), where);
    attributes(path, ir::resolve_graph(h.model(), path), where);
    for (const auto& [id, attr, k, w] : subs) graph(path.sub(id, attr, k), w);
  }
};

std::optional<std::regex> compile(const std::string& re, const char* option) {
  if (re.empty()) return std::nullopt;
  try {
    return std::regex(re, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw TransformError(fmt::format("{} '{}' is not a valid regular expression: {}", option, re, e.what()));
  }
}

}  // namespace

Report convert_tensors(ir::History& h, const TensorConvertOptions& o) {
  if (!convertible_dtype(o.to) || !convertible_dtype(o.from)) {
    throw TransformError(fmt::format("cannot convert {} to {}: both must be bool, integer or float types",
                                     ir::dtype_name(o.from), ir::dtype_name(o.to)));
  }
  if (o.to == o.from) throw TransformError(fmt::format("--from and --to are both {}", ir::dtype_name(o.to)));
  Report report;
  Converter c{h, o, report, compile(o.initializers, "--initializers"), compile(o.attributes, "--attributes")};
  c.all_initializers = o.initializers.empty() && o.attributes.empty();
  ir::BatchScope batch(h, fmt::format("Convert tensors to {}", ir::dtype_name(o.to)));
  try {
    c.graph(ir::GraphPath::main_graph(), "main");
    for (size_t i = 0; i < h.model().functions.size(); ++i) {
      const ir::Function& f = h.model().functions[i];
      c.graph(ir::GraphPath::function_body(f.domain, f.name, f.overload),
              fmt::format("function {}{}", f.domain.empty() ? "" : f.domain + ".", f.name));
    }
  } catch (const ir::CommandError& e) {
    throw TransformError(e.what());
  } catch (const std::invalid_argument& e) {
    throw TransformError(e.what());
  }
  // Checked before the batch is recorded: a cancel here still leaves the model as it was.
  report_progress(0.9, "type-checking the result");
  auto checked = check::check_model(h.model());
  batch.commit();
  if (report.get("tensors converted") == 0) report.warnings.push_back("no tensor matched the selection");
  if (checked.diagnostics.has_errors()) {
    report.warnings.push_back(
        fmt::format("the converted model does not type-check ({} errors; see tessera check)",
                    checked.diagnostics.count(check::Severity::kError)));
  }
  return report;
}

}  // namespace tessera::transforms
