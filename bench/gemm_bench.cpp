// Tessera's own GEMM (src/backends/cpu/gemm_f32.h) against oneDNN's matmul with packed weights, set up
// and run the way DnnlMatMul (src/backends/cpu/dnnl_matmul_kernel.cpp) does: weights reordered once
// into the layout the primitive chose, a stream and memory objects per call, bias in the epilogue.
// Shapes: BERT-base's linear layers at sequence 128, batch 1 (M = 128; K x N = 768 x 768, 768 x 3072,
// 3072 x 768), with bias.
//
//   tessera_gemm_bench [--threads N] [--runs 200] [--rounds 10] [--cold]
//
// The two kernels take turns, `rounds` times, each timing runs / rounds calls (the machines' speed
// drifts from minute to minute); the table gives the median of each kernel's calls, after a warm-up,
// and own/oneDNN. With --cold, each call uses the next of enough copies of the weights (256 MiB or
// more) that they come from memory, as in a model whose weights do not fit the caches; otherwise
// one copy stays hot in the caches.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cpu/gemm_f32.h"
#include "runtime/thread_pool.h"

namespace {

using namespace tessera;
using dnnl::memory;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

template <class F>
double time_ms(F&& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, runs = 200, rounds = 10;
  bool cold = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> int {
      if (i + 1 >= argc) {
        fmt::print(stderr, "{} needs a value\n", arg);
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (arg == "--threads")
      threads = next();
    else if (arg == "--runs")
      runs = next();
    else if (arg == "--rounds")
      rounds = next();
    else if (arg == "--cold")
      cold = true;
    else {
      fmt::print(stderr, "usage: tessera_gemm_bench [--threads N] [--runs 200] [--rounds 10] [--cold]\n");
      return 2;
    }
  }
  threads = std::max(threads, 1);
  rounds = std::clamp(rounds, 1, std::max(runs, 1));
  const int per_round = std::max(1, runs / rounds);
  if (!cpu::gemm_supported()) {
    fmt::print(stderr, "this CPU has no AVX-512F: the own GEMM does not run here\n");
    return 1;
  }
  rt::ThreadPool pool(threads);
  omp_set_num_threads(threads);  // oneDNN runs on the same OpenMP threads (set_dnnl_threads)
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);

  fmt::print("threads {}, {} runs per kernel in {} alternating rounds, weights {}\n", threads,
             per_round * rounds, rounds, cold ? "cold (from memory)" : "hot (one copy)");
  fmt::print("{:>4} {:>5} {:>5} | {:>10} {:>10} | {:>9} | {:>9}\n", "M", "K", "N", "own ms", "oneDNN ms",
             "own/dnnl", "max diff");
  const int64_t m = 128;
  for (auto [k, n] : {std::pair<int64_t, int64_t>{768, 768}, {768, 3072}, {3072, 768}}) {
    const size_t weight_bytes = static_cast<size_t>(k * n) * sizeof(float);
    const int copies = cold ? static_cast<int>((size_t{256} << 20) / weight_bytes + 1) : 1;
    auto a = random_vector(static_cast<size_t>(m * k), 1);
    auto w = random_vector(static_cast<size_t>(k * n), 2);
    auto bias = random_vector(static_cast<size_t>(n), 3);
    std::vector<float> c_own(static_cast<size_t>(m * n)), c_dnnl(static_cast<size_t>(m * n));

    // Own: B packed per copy.
    std::vector<cpu::PackedB> packed;
    for (int i = 0; i < copies; ++i) packed.push_back(cpu::pack_b(w.data(), k, n));

    // oneDNN: as DnnlMatMul's packed-weights path.
    memory::desc a_md({m, k}, memory::data_type::f32, memory::format_tag::ab);
    memory::desc b_plain({k, n}, memory::data_type::f32, memory::format_tag::ab);
    memory::desc b_any({k, n}, memory::data_type::f32, memory::format_tag::any);
    memory::desc bias_md({1, n}, memory::data_type::f32, memory::format_tag::ab);
    memory::desc c_md({m, n}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, bias_md, c_md), eng);
    dnnl::matmul prim(pd);
    std::vector<memory> weights;
    {
      dnnl::stream strm(eng);
      memory from(b_plain, eng, w.data());
      for (int i = 0; i < copies; ++i) {
        weights.emplace_back(pd.weights_desc(), eng);
        dnnl::reorder(from, weights.back()).execute(strm, from, weights.back());
      }
      strm.wait();
    }

    int own_next = 0, dnnl_next = 0;
    auto run_own = [&] {
      cpu::gemm_f32(pool, a.data(), m, k, packed[static_cast<size_t>(own_next)], bias.data(), c_own.data(),
                    n);
      own_next = (own_next + 1) % copies;
    };
    auto run_dnnl = [&] {
      dnnl::stream strm(eng);
      memory a_m(a_md, eng, a.data()), c_m(c_md, eng, c_dnnl.data()),
          bias_m(pd.bias_desc(), eng, bias.data());
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, a_m},
                                           {DNNL_ARG_WEIGHTS, weights[static_cast<size_t>(dnnl_next)]},
                                           {DNNL_ARG_BIAS, bias_m},
                                           {DNNL_ARG_DST, c_m}};
      prim.execute(strm, args);
      strm.wait();
      dnnl_next = (dnnl_next + 1) % copies;
    };
    for (int i = 0; i < 20; ++i) {
      run_own();
      run_dnnl();
    }
    std::vector<double> own_ms, dnnl_ms;
    for (int r = 0; r < rounds; ++r) {
      for (int i = 0; i < per_round; ++i) own_ms.push_back(time_ms(run_own));
      for (int i = 0; i < per_round; ++i) dnnl_ms.push_back(time_ms(run_dnnl));
    }
    double diff = 0;
    for (size_t i = 0; i < c_own.size(); ++i) diff = std::max(diff, double(std::abs(c_own[i] - c_dnnl[i])));
    const double own = median(own_ms), dn = median(dnnl_ms);
    fmt::print("{:>4} {:>5} {:>5} | {:>10.4f} {:>10.4f} | {:>9.3f} | {:>9.2e}\n", m, k, n, own, dn, own / dn,
               diff);
  }
  return 0;
}
