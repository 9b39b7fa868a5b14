#include "transforms/transform_test_util.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <unordered_map>

#include "check/checker.h"
#include "ir/builder.h"
#include "onnx/onnx_io.h"
#include "runtime/session.h"
#include "transforms/tensor_convert.h"

namespace tessera::transforms::test {

ir::Model opset17_model() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  m.graph.name = "main";
  return m;
}

ir::Type float_type(const std::vector<int64_t>& dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(ir::Dim::of(d));
  return ir::Type::tensor(ir::DataType::kFloat, s);
}

namespace fs = std::filesystem;
using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::Type;

namespace {

Type F(std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return Type::tensor(DataType::kFloat, s);
}

ir::Tensor floats(std::string name, std::vector<int64_t> dims, std::vector<float> v) {
  return ir::make_tensor(std::move(name), DataType::kFloat, std::move(dims), v);
}

ir::Graph branch(const std::string& name, bool then) {
  ir::Graph g;
  g.name = name;
  ir::GraphBuilder b(g);
  std::string out;
  if (then) {
    out = b.node("Relu", {"softmax"}, {}, "relu");
  } else {
    b.initializer(floats("two_else", {}, {2.0f}));
    out = b.node("Mul", {"softmax", "two_else"}, {}, "double");
  }
  b.output(out, F({2, 4}));
  return g;
}

ir::Graph loop_body() {
  ir::Graph g;
  g.name = "body";
  ir::GraphBuilder b(g);
  b.input("iter", Type::tensor(DataType::kInt64, ir::Shape{}));
  b.input("cond_in", Type::tensor(DataType::kBool, ir::Shape{}));
  b.input("acc", F({2, 4}));
  std::string half = b.node("Constant", {}, {Attribute::of_tensor("value", floats("", {}, {0.5f}))}, "half");
  std::string cond_out = b.node("Identity", {"cond_in"}, {}, "cond_out");
  std::string acc_out = b.node("Add", {"acc", half}, {}, "acc_out");
  b.output(cond_out, Type::tensor(DataType::kBool, ir::Shape{}));
  b.output(acc_out, F({2, 4}));
  return g;
}

ir::Function scale_function() {
  ir::Function f;
  f.name = "Scale";
  f.domain = "custom";
  f.opset_imports = {{"", 17}};
  ir::GraphBuilder b(f.body);
  f.body.inputs.push_back({"X", {}, {}, {}});
  std::string two = b.node("Constant", {}, {Attribute::of_tensor("value", floats("", {}, {2.0f}))}, "two");
  std::string y = b.node("Mul", {"X", two}, {}, "Y");
  f.body.outputs.push_back({y, {}, {}, {}});
  return f;
}

}  // namespace

ir::Model control_flow_model() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}, {"custom", 1}};
  m.graph.name = "main";
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({2, 4}));
  std::string cond = b.input("cond", Type::tensor(DataType::kBool, ir::Shape{}));
  std::string w = b.random_normal("w", {4, 4}, 0.5f);
  std::string mm = b.node("MatMul", {x, w}, {}, "mm");
  std::string c = b.node("Constant", {},
                         {Attribute::of_tensor("value", floats("", {4}, {0.1f, -0.2f, 0.3f, 0.0f}))}, "c");
  std::string add = b.node("Add", {mm, c}, {}, "add");
  std::string sm = b.node("Softmax", {add}, {Attribute::of_int("axis", -1)}, "softmax");
  std::string y_if = b.node("If", {cond},
                            {Attribute::of_graph("then_branch", branch("then", true)),
                             Attribute::of_graph("else_branch", branch("else", false))},
                            "if");
  std::string trips = b.constant_ints("trips", {3});
  m.graph.initializers.back().dims.clear();  // a scalar trip count
  std::string yes = b.initializer(ir::make_tensor<uint8_t>("yes", DataType::kBool, {}, {1}));
  std::string loop_out =
      b.node("Loop", {trips, yes, y_if}, {Attribute::of_graph("body", loop_body())}, "loop");
  std::string scaled = b.nodes("Scale", {loop_out}, {}, "scale", 1, "custom")[0];
  std::string z =
      b.node("Cast", {scaled}, {Attribute::of_int("to", static_cast<int64_t>(DataType::kFloat))}, "cast");
  b.output(z, F({2, 4}));
  m.functions.push_back(scale_function());
  return m;
}

std::vector<std::pair<std::string, rt::Value>> feeds_for(const ir::Model& m, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<std::pair<std::string, rt::Value>> out;
  for (const auto& in : m.graph.inputs) {
    if (m.graph.find_initializer(in.name)) continue;
    std::vector<int64_t> dims;
    for (const auto& d : *in.type.shape) dims.push_back(d.is_static() ? d.value : 2);
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    if (in.type.elem == DataType::kBool) {
      out.emplace_back(in.name,
                       rt::Tensor::from_vector<bool>(DataType::kBool, dims, std::vector<bool>(n, true)));
      continue;
    }
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = dist(rng);
    rt::Tensor t = rt::Tensor::from_vector<float>(DataType::kFloat, dims, v);
    // A float16 / bfloat16 input: the same values, rounded the way a caller would round them.
    if (in.type.elem != DataType::kFloat)
      t = rt::Tensor::from_ir(convert_tensor(t.to_ir(in.name), in.type.elem));
    out.emplace_back(in.name, t);
  }
  return out;
}

std::vector<std::vector<double>> run_model(const ir::Model& m,
                                           const std::vector<std::pair<std::string, rt::Value>>& feeds) {
  rt::Session s(m, {.optimization = rt::OptLevel::kNone, .threads = 1});
  std::vector<std::vector<double>> out;
  for (const auto& v : s.run(feeds)) {
    const rt::Tensor& t = v.tensor();
    std::vector<double> d(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) d[static_cast<size_t>(i)] = t.to_double(i);
    out.push_back(std::move(d));
  }
  return out;
}

bool have_python_onnx() {
  static const bool have = std::system("/usr/bin/python3 -c 'import onnx' >/dev/null 2>&1") == 0;
  return have;
}

::testing::AssertionResult onnx_checker_accepts(const ir::Model& m) {
  if (!have_python_onnx()) return ::testing::AssertionSuccess() << "(python3-onnx missing: not checked)";
  fs::path dir = fs::temp_directory_path() / fmt::format("tessera_onnx_check_{}", ::getpid());
  fs::create_directories(dir);
  fs::path file = dir / "model.onnx";
  onnx::save_model(m, file);
  fs::path log = dir / "log.txt";
  std::string cmd = fmt::format(
      "/usr/bin/python3 -c 'import onnx,sys; onnx.checker.check_model(onnx.load(sys.argv[1]), "
      "full_check=True)' "
      "'{}' >'{}' 2>&1",
      file.string(), log.string());
  int rc = std::system(cmd.c_str());
  std::string text;
  if (rc != 0) {
    std::FILE* f = std::fopen(log.c_str(), "r");
    char buf[4096];
    size_t n;
    while (f && (n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    if (f) std::fclose(f);
  }
  fs::remove_all(dir);
  if (rc == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "onnx.checker: " << text;
}

namespace {

using CastOutputs = std::unordered_map<std::string, const ir::Node*>;

const ir::Node* producer(const ir::Graph& g, const std::string& v) {
  for (const auto& n : g.nodes)
    if (std::find(n.outputs.begin(), n.outputs.end(), v) != n.outputs.end()) return &n;
  return nullptr;
}

// Whether output k of a control-flow node is made by a Cast in every one of its bodies.
bool cast_in_every_body(const ir::Node& n, size_t k) {
  size_t kb = k;
  if (n.op_type == "Loop") {
    if (k < n.inputs.size() - 2) return false;  // carried values keep their type
    kb = k + 1;
  } else if (n.op_type != "If" && n.op_type != "Scan") {
    return false;
  }
  bool any = false;
  for (const auto& a : n.attributes) {
    for (const auto& sub : a.graphs) {
      if (kb >= sub->outputs.size()) return false;
      const ir::Node* p = producer(*sub, sub->outputs[kb].name);
      if (!p || p->op_type != "Cast") return false;
      any = true;
    }
  }
  return any;
}

// Casts reading a Cast's output, in the same graph or an enclosing one, and Casts reading a control-flow
// output that every body makes with a Cast.
void casts_in(const ir::Graph& g, CastOutputs cast_out, std::vector<std::string>& pairs, int& count,
              const std::string& op) {
  std::unordered_map<std::string, std::pair<const ir::Node*, size_t>> flow_out;
  for (const auto& n : g.nodes) {
    if (n.op_type == "Cast") cast_out[n.outputs[0]] = &n;
    for (size_t k = 0; k < n.outputs.size(); ++k) flow_out[n.outputs[k]] = {&n, k};
  }
  for (const auto& n : g.nodes) {
    if (n.op_type == op) ++count;
    if (n.op_type == "Cast" && cast_out.count(n.inputs[0]))
      pairs.push_back(fmt::format("'{}' reads '{}'", n.name, cast_out[n.inputs[0]]->name));
    auto f = flow_out.find(n.inputs.empty() ? "" : n.inputs[0]);
    if (n.op_type == "Cast" && f != flow_out.end() && cast_in_every_body(*f->second.first, f->second.second))
      pairs.push_back(fmt::format("'{}' reads '{}', made by a Cast in each body", n.name, n.inputs[0]));
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) casts_in(*sub, cast_out, pairs, count, op);
  }
}

}  // namespace

::testing::AssertionResult no_cast_pairs(const ir::Model& m) {
  std::vector<std::string> pairs;
  int count = 0;
  casts_in(m.graph, {}, pairs, count, "Cast");
  for (const auto& f : m.functions) casts_in(f.body, {}, pairs, count, "Cast");
  if (pairs.empty()) return ::testing::AssertionSuccess();
  auto r = ::testing::AssertionFailure() << "Cast pairs:";
  for (const auto& p : pairs) r << " " << p;
  return r;
}

int count_op(const ir::Model& m, const std::string& op) {
  std::vector<std::string> pairs;
  int count = 0;
  casts_in(m.graph, {}, pairs, count, op);
  for (const auto& f : m.functions) casts_in(f.body, {}, pairs, count, op);
  return count;
}

}  // namespace tessera::transforms::test
