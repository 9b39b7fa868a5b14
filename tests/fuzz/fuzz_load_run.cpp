// libFuzzer target: arbitrary bytes -> load -> check -> rt::Session -> one run on small inputs.
//
// Expected answers to a bad model are Tessera's own errors: LoadError from the loader, error
// diagnostics from the checker, RunError from the session (building it or running it; kernels' and
// compilation errors arrive wrapped in it). A crash, a sanitizer report, a hang, a memory blow-up, an
// InternalError (a kernel failing with something other than KernelError) or any other exception type
// is a finding.
//
// The options come from the input's bytes, so every input always runs the same way: one to three
// threads, the default optimisation level or (one input in four) none, and reference kernels one
// input in four.
// Inputs get the declared element type with free and symbolic dimensions set to 1 or 2, and values
// drawn from a table with zeros, negatives, large values, NaN and infinities. A run still going after
// 5 seconds is cancelled (see the watchdog below).
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "check/checker.h"
#include "onnx/onnx_io.h"
#include "runtime/half.h"
#include "runtime/session.h"

namespace {

using namespace tessera;

// Inputs larger than this are refused (the fuzzer looks for bugs, not for slow big runs).
constexpr int64_t kMaxElements = int64_t{1} << 16;
constexpr int64_t kMaxTotalElements = int64_t{1} << 18;
// What one run-time tensor may take: well under libFuzzer's -rss_limit_mb, so that a shape the runtime
// fails to refuse shows up as an out-of-memory finding, and one it refuses as a KernelError.
constexpr size_t kMaxTensorBytes = size_t{256} << 20;
// libFuzzer may run an input twice (a second time under the leak checker when the first freed less
// than it allocated, as a cancelled run does), so twice this plus the time a cancel takes to land must
// stay well under -timeout (30 s in scripts/sanitize.sh).
constexpr std::chrono::seconds kRunLimit{5};

// A small deterministic generator seeded from the input.
struct Rng {
  uint64_t s;
  uint64_t next() {
    s += 0x9e3779b97f4a7c15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

const double kValues[] = {0,    1,     -1,    2,     -2,   3,        0.5,        -0.5, 7,
                          127,  -128,  255,   1e4,   -1e4, 65504,    2147483647, 1e9,  -1e9,
                          1e30, -1e30, 1e-30, 1e300, NAN,  INFINITY, -INFINITY,  0,    1};
const int64_t kInts[] = {0,
                         1,
                         -1,
                         2,
                         -2,
                         3,
                         4,
                         5,
                         7,
                         8,
                         -3,
                         127,
                         -128,
                         255,
                         256,
                         65535,
                         1 << 20,
                         2147483647,
                         std::numeric_limits<int32_t>::min(),
                         std::numeric_limits<int64_t>::max(),
                         std::numeric_limits<int64_t>::min(),
                         0,
                         1};

template <class T>
void fill_float(rt::Tensor& t, Rng& r) {
  for (auto& x : t.span<T>()) x = static_cast<T>(static_cast<float>(kValues[r.next() % std::size(kValues)]));
}

template <class T>
void fill_int(rt::Tensor& t, Rng& r) {
  // Small values most of the time (indices, axes, sizes that work), the extremes now and then.
  for (auto& x : t.span<T>()) {
    uint64_t v = r.next();
    int64_t i = v % 4 ? static_cast<int64_t>(v >> 8) % 5 - 1 : kInts[(v >> 8) % std::size(kInts)];
    x = static_cast<T>(i);  // wraps for the narrow types: more extremes
  }
}

void fill(rt::Tensor& t, Rng& r) {
  using ir::DataType;
  switch (t.dtype()) {
    case DataType::kFloat:
      for (auto& x : t.span<float>()) x = static_cast<float>(kValues[r.next() % std::size(kValues)]);
      return;
    case DataType::kDouble:
      for (auto& x : t.span<double>()) x = kValues[r.next() % std::size(kValues)];
      return;
    case DataType::kFloat16:
      return fill_float<rt::Float16>(t, r);
    case DataType::kBFloat16:
      return fill_float<rt::BFloat16>(t, r);
    case DataType::kInt8:
      return fill_int<int8_t>(t, r);
    case DataType::kInt16:
      return fill_int<int16_t>(t, r);
    case DataType::kInt32:
      return fill_int<int32_t>(t, r);
    case DataType::kInt64:
      return fill_int<int64_t>(t, r);
    case DataType::kUint8:
      return fill_int<uint8_t>(t, r);
    case DataType::kUint16:
      return fill_int<uint16_t>(t, r);
    case DataType::kUint32:
      return fill_int<uint32_t>(t, r);
    case DataType::kUint64:
      return fill_int<uint64_t>(t, r);
    case DataType::kBool:
      for (auto& x : t.span<bool>()) x = r.next() % 2;
      return;
    case DataType::kString: {
      static const char* const kStrings[] = {"", "a", "hello", "Hello World", "  x ", "1.5", "\xc3\xa9"};
      for (auto& x : t.span<std::string>()) x = kStrings[r.next() % std::size(kStrings)];
      return;
    }
    default: {  // float8, complex, packed sub-byte types: any bit pattern is a value
      auto* p = static_cast<uint8_t*>(t.raw());
      for (size_t i = 0, n = t.nbytes(); i < n; ++i) p[i] = static_cast<uint8_t>(r.next());
      return;
    }
  }
}

struct Feeder {
  Rng rng;
  std::map<std::string, int64_t> symbols;  // the same symbol gets the same size in every input
  int64_t total = 0;

  int64_t dim(const ir::Dim& d) {
    if (d.is_static()) return d.value;
    if (d.is_symbolic()) {
      auto [it, fresh] = symbols.emplace(d.param, 0);
      if (fresh) it->second = 1 + static_cast<int64_t>(rng.next() % 2);
      return it->second;
    }
    return 1 + static_cast<int64_t>(rng.next() % 2);
  }

  // nullopt: refused (too large, or a type this target does not build).
  std::optional<rt::Value> value(const ir::Type& t, int depth) {
    if (depth > 3) return std::nullopt;
    switch (t.kind) {
      case ir::Type::Kind::kTensor: {
        rt::Shape shape;
        if (t.shape) {
          int64_t n = 1;
          for (const auto& d : *t.shape) {
            int64_t v = dim(d);
            if (v > kMaxElements || (v > 0 && n > kMaxElements / v)) return std::nullopt;
            n *= v;
            shape.push_back(v);
          }
        } else if (rng.next() % 2) {
          shape.push_back(2);  // unknown rank: a vector or a scalar
        }
        int64_t n = rt::shape_numel(shape);
        if (n > kMaxElements || (total += n) > kMaxTotalElements) return std::nullopt;
        ir::DataType dt = t.elem == ir::DataType::kUndefined ? ir::DataType::kFloat : t.elem;
        rt::Tensor x = rt::Tensor::zeros(dt, std::move(shape));
        fill(x, rng);
        return rt::Value(std::move(x));
      }
      case ir::Type::Kind::kSequence: {
        rt::Sequence s;
        s.elem_type = t.inner ? *t.inner : ir::Type::tensor(ir::DataType::kFloat);
        int count = static_cast<int>(rng.next() % 3);
        for (int i = 0; i < count; ++i) {
          auto v = value(s.elem_type, depth + 1);
          if (!v) return std::nullopt;
          s.items.push_back(std::move(*v));
        }
        return rt::Value::sequence(std::move(s));
      }
      case ir::Type::Kind::kOptional:
        if (!t.inner || rng.next() % 3 == 0) return rt::Value::none(t.inner ? *t.inner : ir::Type{});
        return value(*t.inner, depth + 1);
      default:  // untyped, maps, sparse tensors, opaque: not built here
        return std::nullopt;
    }
  }
};

uint64_t hash(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rt::set_max_tensor_bytes(kMaxTensorBytes);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ir::Model model;
  try {
    model = onnx::load_model_from_memory(std::span(reinterpret_cast<const std::byte*>(data), size));
  } catch (const onnx::LoadError&) {
    return 0;
  }
  if (check::check_model(model).diagnostics.has_errors()) return 0;

  uint64_t h = hash(data, size);
  rt::SessionOptions so;
  so.threads = 1 + static_cast<int>((h >> 16) % 3);  // 2 and 3 threads: kernels' odd splits too
  if (h % 4 == 0) so.optimization = rt::OptLevel::kNone;
  so.reference_kernels = (h >> 8) % 4 == 0;
  std::unique_ptr<rt::Session> session;
  try {
    session = std::make_unique<rt::Session>(std::move(model), so);
  } catch (const rt::InternalError&) {
    throw;  // a finding: libFuzzer reports the uncaught exception
  } catch (const rt::RunError&) {
    return 0;
  }

  Feeder feeder{Rng{h}, {}, 0};
  std::vector<std::pair<std::string, rt::Value>> feeds;
  for (const auto& in : session->inputs()) {
    auto v = feeder.value(in.type, 0);
    if (!v) return 0;
    feeds.emplace_back(in.name, std::move(*v));
  }
  // A data-driven trip count (Loop's M from an input, Range expanded into a Loop) can ask for a run
  // of hours, which the model is allowed to: the watchdog cancels it, as a user would, and only a run
  // that does not stop when cancelled is a hang (libFuzzer's -timeout, set above kRunLimit).
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, kRunLimit, [&] { return done; })) session->cancel();
  });
  auto stop_watchdog = [&] {
    {
      std::lock_guard lock(mu);
      done = true;
    }
    cv.notify_one();
    watchdog.join();
  };
  try {
    (void)session->run(feeds);
  } catch (const rt::InternalError&) {
    stop_watchdog();
    throw;  // a finding
  } catch (const rt::RunError&) {
  }
  stop_watchdog();
  return 0;
}
