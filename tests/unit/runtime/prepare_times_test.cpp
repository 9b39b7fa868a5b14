// TESSERA_PREPARE_TIMES=1: a session build prints the time its kernels took to prepare, by operator
// (stderr), so that a slow session build (tessera profile's session_build_ms) can be traced to the
// kernels that spend it; without the variable nothing is printed.
#include <gtest/gtest.h>

#include <cstdlib>

#include "ir/builder.h"
#include "runtime/session.h"

namespace tessera::rt {
namespace {

ir::Model two_ops() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  ir::Shape s{ir::Dim::of(4), ir::Dim::of(8)};
  auto x = b.input("x", ir::Type::tensor(ir::DataType::kFloat, s));
  auto y = b.node("MatMul", {x, b.random_normal("w", {8, 8}, 0.5f)});
  b.output(b.node("Relu", {y}), ir::Type::tensor(ir::DataType::kFloat));
  return m;
}

std::string build_output(bool on) {
  if (on) {
    setenv("TESSERA_PREPARE_TIMES", "1", 1);
  } else {
    unsetenv("TESSERA_PREPARE_TIMES");
  }
  testing::internal::CaptureStderr();
  { Session s(two_ops(), {.optimization = OptLevel::kNone, .threads = 1}); }
  std::string out = testing::internal::GetCapturedStderr();
  unsetenv("TESSERA_PREPARE_TIMES");
  return out;
}

TEST(SessionPrepareTimes, PrintedByOperatorOnlyWhenAskedFor) {
  const std::string on = build_output(true);
  EXPECT_NE(on.find("prepare MatMul"), std::string::npos) << on;
  EXPECT_NE(on.find("prepare Relu"), std::string::npos) << on;
  EXPECT_NE(on.find("1 nodes"), std::string::npos) << on;
  EXPECT_EQ(build_output(false).find("prepare "), std::string::npos);
}

}  // namespace
}  // namespace tessera::rt
