#include "runtime/memory_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "runtime/backend.h"

namespace tessera::rt {

namespace {
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
constexpr size_t kAlign = 64;
// Beyond this many allocations in one run (long loops), the rest stay on the heap: placing them costs
// more time than the memory is worth. Placing is quadratic in the count (and n log n more per block
// when the blocks all live at once, as a Loop's scan slices do): 20,000 took minutes.
constexpr size_t kMaxPlanned = 4096;
size_t round_up(size_t n) {
  return (std::max<size_t>(n, 1) + kAlign - 1) / kAlign * kAlign;
}
}  // namespace

struct Record {
  size_t bytes = 0;
  uint64_t alloc_t = 0, free_t = kNever;
};

struct Slot {
  size_t offset = 0, bytes = 0;
  bool placed = false;
  std::vector<uint32_t> overlaps;  // slots sharing bytes with this one (at other times)
};

struct MemoryPlanner::State {
  Backend* backend = nullptr;
  std::unique_ptr<Backend> own_backend;  // when planning the host's memory without a session's backend
  std::mutex mu;
  bool recording = true;
  uint64_t clock = 0;
  size_t next = 0;  // allocation counter of the run
  std::vector<Record> records;
  std::vector<Slot> plan;
  std::vector<uint8_t> alive;  // per plan slot
  std::shared_ptr<std::byte> arena;
  size_t arena_bytes = 0, lower_bound = 0;
  size_t heap_in_use = 0, heap_peak = 0;
  size_t fallbacks = 0, planned_allocs = 0;
  bool last_planned = false;
  bool planned_once = false;
  uint64_t generation = 0;  // of recording runs: a late release from an older run must not count
};

MemoryPlanner::MemoryPlanner(Backend* backend) : st_(std::make_shared<State>()) {
  if (!backend) {
    st_->own_backend = make_cpu_backend();
    backend = st_->own_backend.get();
  }
  st_->backend = backend;
}
MemoryPlanner::~MemoryPlanner() = default;

bool MemoryPlanner::has_plan() const {
  std::lock_guard lock(st_->mu);
  return st_->planned_once;
}

void MemoryPlanner::begin_run(bool replan) {
  std::lock_guard lock(st_->mu);
  st_->next = 0;
  st_->heap_peak = st_->heap_in_use;
  st_->fallbacks = 0;
  st_->planned_allocs = 0;
  st_->recording = replan || !st_->planned_once;
  st_->last_planned = !st_->recording;
  if (st_->recording) {
    st_->records.clear();
    st_->clock = 0;
    st_->generation++;
  }
}

namespace {

// Greedy by size: largest first, each at the lowest offset that no time-overlapping placed block uses.
void build_plan(MemoryPlanner::State& st) {
  const size_t n = std::min(st.records.size(), kMaxPlanned);
  st.plan.assign(n, Slot{});
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < n; ++i)
    if (st.records[i].free_t != kNever && st.records[i].bytes > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return st.records[a].bytes > st.records[b].bytes; });
  std::vector<uint32_t> placed;
  size_t arena = 0;
  for (uint32_t i : order) {
    const Record& r = st.records[i];
    size_t size = round_up(r.bytes);
    std::vector<std::pair<size_t, size_t>> busy;  // [begin, end) of time-overlapping placed blocks
    for (uint32_t j : placed) {
      const Record& q = st.records[j];
      if (q.alloc_t < r.free_t && r.alloc_t < q.free_t)
        busy.emplace_back(st.plan[j].offset, st.plan[j].offset + st.plan[j].bytes);
    }
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (auto [b, e] : busy) {
      if (b >= off + size) break;
      off = std::max(off, e);
    }
    st.plan[i] = Slot{off, size, true, {}};
    placed.push_back(i);
    arena = std::max(arena, off + size);
  }
  for (size_t a = 0; a < placed.size(); ++a)
    for (size_t b = a + 1; b < placed.size(); ++b) {
      Slot& x = st.plan[placed[a]];
      Slot& y = st.plan[placed[b]];
      if (x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes) {
        x.overlaps.push_back(placed[b]);
        y.overlaps.push_back(placed[a]);
      }
    }
  // The lower bound: the most bytes live at once, over every allocation of the recorded run.
  std::vector<std::pair<uint64_t, int64_t>> events;
  for (const Record& r : st.records) {
    events.emplace_back(r.alloc_t, static_cast<int64_t>(r.bytes));
    if (r.free_t != kNever) events.emplace_back(r.free_t, -static_cast<int64_t>(r.bytes));
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, most = 0;
  for (auto [t, d] : events) most = std::max(most, live += d);
  st.lower_bound = static_cast<size_t>(most);
  st.arena_bytes = arena;
  st.alive.assign(n, 0);
  st.arena.reset();  // the old arena first: a device may not hold two
  if (arena) st.arena = std::static_pointer_cast<std::byte>(st.backend->allocate(arena));
}

}  // namespace

void MemoryPlanner::end_run() {
  std::lock_guard lock(st_->mu);
  if (!st_->recording) return;
  // A device's tensors still alive when its run ends are the outputs the run leaves on the device
  // (RunOptions::outputs_on_device), which the session lets go when the next run starts: they are
  // planned, so that a captured device graph does not allocate them. The host's outputs go to callers
  // who keep them for as long as they like, and stay out of the plan.
  if (!st_->backend->is_host())
    for (Record& r : st_->records)
      if (r.free_t == kNever) r.free_t = st_->clock + 1;
  build_plan(*st_);
  st_->recording = false;
  st_->planned_once = true;
}

void MemoryPlanner::abort_run() {
  std::lock_guard lock(st_->mu);
  if (!st_->recording) return;
  st_->records.clear();
  st_->recording = false;
  st_->generation++;  // late releases of the failed run's tensors must not touch the next recording
}

Tensor MemoryPlanner::allocate(DataType dtype, Shape shape, bool zero) {
  int64_t n = shape_numel(shape);
  if (dtype == DataType::kString) return Tensor::zeros(dtype, std::move(shape));
  size_t bytes = dtype_bytes(dtype, n);
  check_tensor_bytes(dtype, shape, bytes);
  auto st = st_;
  std::unique_lock lock(st->mu);
  size_t k = st->next++;
  if (!st->recording && k < st->plan.size() && st->plan[k].placed && bytes <= st->plan[k].bytes) {
    Slot& s = st->plan[k];
    // The slot itself may still be held from an earlier run (a device output fed back in).
    bool free = !st->alive[k] &&
                std::none_of(s.overlaps.begin(), s.overlaps.end(), [&](uint32_t j) { return st->alive[j]; });
    if (free) {
      st->alive[k] = 1;
      st->planned_allocs++;
      std::byte* p = st->arena.get() + s.offset;
      auto arena = st->arena;
      std::shared_ptr<void> data(p, [st, arena, k](void*) {
        std::lock_guard l(st->mu);
        if (st->arena == arena && k < st->alive.size()) st->alive[k] = 0;
      });
      lock.unlock();  // the slot is ours: clear it outside the lock
      if (zero) st->backend->fill_zero(p, bytes, st->backend->stream());
      return Tensor(dtype, std::move(shape), std::move(data), st->backend->device());
    }
  }
  // The host's run as a whole stays within the same limit as one tensor (rt::max_tensor_bytes: physical
  // memory, or what `tessera run --memory-limit` sets): many tensors that each fit can still add up to
  // more than the machine has, and must stop with a message here rather than in the kernel's OOM killer.
  size_t held = (st->last_planned ? st->arena_bytes : 0) + st->heap_in_use + round_up(bytes);
  if (st->backend->is_host() && held > max_tensor_bytes()) {
    throw KernelError(fmt::format(
        "a {} tensor of shape {} would bring the run's memory to {} bytes, more than the limit of {} bytes "
        "for one run",
        ir::dtype_name(dtype), shape_str(shape), held, max_tensor_bytes()));
  }
  if (!st->recording) st->fallbacks++;
  bool record = st->recording;
  uint64_t gen = st->generation;
  uint64_t t = ++st->clock;
  if (record) st->records.push_back(Record{bytes, t, kNever});
  st->heap_in_use += round_up(bytes);
  st->heap_peak = std::max(st->heap_peak, st->heap_in_use);
  lock.unlock();
  std::shared_ptr<void> block;
  try {
    block = st->backend->allocate(round_up(bytes));
  } catch (...) {
    std::lock_guard l(st->mu);
    st->heap_in_use -= round_up(bytes);
    throw;
  }
  void* p = block.get();
  if (zero) st->backend->fill_zero(p, bytes, st->backend->stream());
  // The block goes back to the backend when the tensor's last reference goes; the planner's books are
  // kept in the same deleter.
  std::shared_ptr<void> data(p, [st, k, record, gen, bytes, block](void*) mutable {
    block.reset();
    std::lock_guard l(st->mu);
    st->heap_in_use -= round_up(bytes);
    if (record && st->recording && st->generation == gen && k < st->records.size())
      st->records[k].free_t = ++st->clock;
  });
  return Tensor(dtype, std::move(shape), std::move(data), st->backend->device());
}

MemoryStats MemoryPlanner::stats() const {
  std::lock_guard lock(st_->mu);
  MemoryStats s;
  s.arena_bytes = st_->arena_bytes;
  s.lower_bound_bytes = st_->lower_bound;
  s.peak_bytes = (st_->last_planned ? st_->arena_bytes : 0) + st_->heap_peak;
  s.planned_allocations = st_->planned_allocs;
  s.fallback_allocations = st_->fallbacks;
  s.planned = st_->last_planned;
  return s;
}

}  // namespace tessera::rt
