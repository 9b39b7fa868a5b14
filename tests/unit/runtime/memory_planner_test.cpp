#include "runtime/memory_planner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace rt = tessera::rt;
using tessera::ir::DataType;

namespace {

// A chain a -> b -> c -> d where each tensor dies once the next exists: two buffers suffice.
void chain(rt::MemoryPlanner& p, int64_t n) {
  rt::Tensor prev = p.allocate(DataType::kFloat, {n});
  for (int i = 0; i < 3; ++i) {
    rt::Tensor next = p.allocate(DataType::kFloat, {n});
    prev = next;
  }
}

}  // namespace

TEST(MemoryPlanner, ReusesBuffersOfAChain) {
  rt::MemoryPlanner p;
  p.begin_run(true);
  chain(p, 1024);
  p.end_run();
  auto s = p.stats();
  EXPECT_EQ(s.lower_bound_bytes, 2 * 4096u);
  EXPECT_EQ(s.arena_bytes, 2 * 4096u);
  p.begin_run(false);
  chain(p, 1024);
  p.end_run();
  s = p.stats();
  EXPECT_TRUE(s.planned);
  EXPECT_EQ(s.planned_allocations, 4u);
  EXPECT_EQ(s.fallback_allocations, 0u);
  EXPECT_LE(s.peak_bytes, s.lower_bound_bytes * 12 / 10);
}

TEST(MemoryPlanner, LargerAllocationFallsBackToTheHeap) {
  rt::MemoryPlanner p;
  p.begin_run(true);
  chain(p, 256);
  p.end_run();
  p.begin_run(false);
  chain(p, 512);  // twice the recorded sizes: the plan cannot hold them
  p.end_run();
  EXPECT_EQ(p.stats().fallback_allocations, 4u);
}

TEST(MemoryPlanner, LiveTensorIsNeverOverwritten) {
  rt::MemoryPlanner p;
  p.begin_run(true);
  chain(p, 64);
  p.end_run();
  // Planned run where the first tensor stays alive longer than recorded: the slots sharing its bytes
  // must not be handed out while it lives.
  p.begin_run(false);
  rt::Tensor keep = p.allocate(DataType::kFloat, {64});
  keep.data<float>()[0] = 42.0f;
  rt::Tensor prev = p.allocate(DataType::kFloat, {64});
  for (int i = 0; i < 2; ++i) {
    rt::Tensor next = p.allocate(DataType::kFloat, {64});
    next.data<float>()[0] = -1.0f;
    prev = next;
  }
  p.end_run();
  EXPECT_EQ(keep.data<float>()[0], 42.0f);
  EXPECT_GE(p.stats().fallback_allocations, 1u);
}

TEST(MemoryPlanner, TensorsKeptPastTheRunAreNotPlanned) {
  rt::MemoryPlanner p;
  rt::Tensor out;
  p.begin_run(true);
  out = p.allocate(DataType::kFloat, {100});
  p.end_run();
  EXPECT_EQ(p.stats().arena_bytes, 0u);  // the output escaped the run: it lives on the heap
  EXPECT_EQ(p.stats().lower_bound_bytes, 400u);
}

// Tensors that each fit the limit but together do not: the run stops before allocating the one that
// would cross it, naming the total, and the planner works again after the limit is lifted.
TEST(MemoryPlanner, TheRunAsAWholeStaysWithinTheLimit) {
  rt::set_max_tensor_bytes(1 << 20);
  rt::MemoryPlanner p;
  p.begin_run(true);
  std::vector<rt::Tensor> held;
  std::string error;
  try {
    for (int i = 0; i < 8; ++i) held.push_back(p.allocate(DataType::kFloat, {64 * 1024}));  // 256 KiB each
  } catch (const rt::KernelError& e) {
    error = e.what();
  }
  EXPECT_EQ(held.size(), 4u) << "four 256 KiB tensors fill 1 MiB; the fifth would pass it";
  EXPECT_NE(error.find("more than the limit of 1048576 bytes for one run"), std::string::npos) << error;
  held.clear();
  p.abort_run();
  rt::set_max_tensor_bytes(0);
  p.begin_run(true);
  for (int i = 0; i < 8; ++i) held.push_back(p.allocate(DataType::kFloat, {64 * 1024}));
  p.end_run();
  EXPECT_EQ(held.size(), 8u);
}
