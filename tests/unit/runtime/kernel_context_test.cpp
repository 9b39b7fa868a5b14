// KernelContext::output_reusing: an output may take over an input's memory only when this node is the
// input's last reader and nothing else holds that memory; and a session computes the same results
// whether a kernel summed in place or into a copy.
#include <gtest/gtest.h>

#include <tuple>

#include "ir/builder.h"
#include "runtime/kernel.h"
#include "runtime/session.h"
#include "runtime/thread_pool.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;

namespace {

class PlainHost : public rt::ExecutionHost {
 public:
  rt::Tensor allocate(DataType dtype, rt::Shape shape) override {
    return rt::Tensor::zeros(dtype, std::move(shape));
  }
  std::vector<rt::Value> run_subgraph(const rt::ExecGraph&, std::span<const rt::Value>) override {
    return {};
  }
  rt::ThreadPool& threads() override { return pool_; }
  bool cancelled() const override { return false; }

 private:
  rt::ThreadPool pool_{1};
};

struct Fixture {
  ir::Node node;
  rt::KernelInfo info{node, nullptr, 17};
  PlainHost host;
  rt::Value in{rt::Tensor::zeros(DataType::kFloat, {2, 3})};
  std::vector<const rt::Value*> ins{&in};
  std::vector<rt::Value> outs{rt::Value()};

  Fixture() {
    node.op_type = "Test";
    node.inputs = {"a"};
    node.outputs = {"b"};
  }
  rt::Tensor* reuse(std::vector<uint8_t> last_use, DataType dt = DataType::kFloat, rt::Shape shape = {2, 3}) {
    rt::KernelContext ctx(info, ins, outs, host, last_use);
    return ctx.output_reusing(0, 0, dt, shape);
  }
};

}  // namespace

TEST(KernelContext, ReusesAnInputAtItsLastUse) {
  Fixture f;
  const void* mem = f.in.tensor().raw();
  rt::Tensor* out = f.reuse({1});
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->raw(), mem);
  EXPECT_EQ(f.outs[0].tensor().raw(), mem);
}

TEST(KernelContext, DoesNotReuseWhenUnsafe) {
  {
    Fixture f;  // read again later
    EXPECT_EQ(f.reuse({0}), nullptr);
    EXPECT_EQ(f.reuse({}), nullptr);
  }
  {
    Fixture f;  // someone else holds the memory: a caller's feed, an initializer, a view
    rt::Tensor other = f.in.tensor();
    EXPECT_EQ(f.reuse({1}), nullptr);
  }
  {
    Fixture f;  // another type or shape
    EXPECT_EQ(f.reuse({1}, DataType::kDouble), nullptr);
    EXPECT_EQ(f.reuse({1}, DataType::kFloat, {3, 2}), nullptr);
  }
}

namespace {

// x -> Conv(3->16) -> Relu -> r; y = Relu(Conv(r, 16->16, k x k) + r): at the layout level the Add
// becomes the second convolution's Z. With `r_is_output`, r is also a graph output, so the convolution
// must not sum into it. k = 1 takes Tessera's own 1x1 kernel with 8 threads or more.
ir::Model residual_block(bool r_is_output, int64_t k) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(1), ir::Dim::of(3),
                                                                     ir::Dim::of(10), ir::Dim::of(10)}));
  auto c1 = b.node("Conv", {x, b.random_normal("w1", {16, 3, 1, 1}, 0.5f)});
  auto r = b.node("Relu", {c1}, {}, "r");
  const int64_t p = k / 2;
  auto c2 = b.node("Conv", {r, b.random_normal("w2", {16, 16, k, k}, 0.2f)},
                   {ir::Attribute::of_ints("pads", {p, p, p, p})});
  auto sum = b.node("Add", {c2, r});
  b.output(b.node("Relu", {sum}, {}, "y"), ir::Type::tensor(DataType::kFloat));
  if (r_is_output) b.output(r, ir::Type::tensor(DataType::kFloat));
  return m;
}

}  // namespace

TEST(KernelContext, InPlaceResidualMatchesTheUnfusedGraph) {
  std::vector<float> xs(300);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 17) * 0.25f - 2.f;
  auto x = rt::Tensor::from_vector<float>(DataType::kFloat, {1, 3, 10, 10}, xs);
  for (auto [r_out, k, threads] : {std::tuple{false, 3, 2}, {true, 3, 2}, {false, 1, 8}, {true, 1, 8}}) {
    SCOPED_TRACE(::testing::Message() << "r is output " << r_out << ", k " << k << ", threads " << threads);
    std::vector<std::vector<rt::Value>> got;
    for (rt::OptLevel level : {rt::OptLevel::kNone, rt::OptLevel::kLayout}) {
      rt::Session s(residual_block(r_out, k), {.optimization = level, .threads = threads});
      got.push_back(s.run({{"x", x}}));
      got.back() = s.run({{"x", x}});  // the planned run too
    }
    ASSERT_EQ(got[0].size(), got[1].size());
    for (size_t k = 0; k < got[0].size(); ++k) {
      auto want = got[0][k].tensor().span<float>(), have = got[1][k].tensor().span<float>();
      ASSERT_EQ(want.size(), have.size());
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(have[i], want[i], 1e-4f + 1e-4f * std::abs(want[i])) << "output " << k << " at " << i;
    }
  }
}
