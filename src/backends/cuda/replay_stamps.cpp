#include "backends/cuda/replay_stamps.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace tessera::cuda {

namespace {

// The graph's nodes in chain order, or empty where the graph is not a chain.
std::vector<cudaGraphNode_t> chain_of(cudaGraph_t g, std::string& why) {
  size_t n = 0, e = 0;
  if (cudaGraphGetNodes(g, nullptr, &n) != cudaSuccess ||
      cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &e) != cudaSuccess) {
    why = "the captured graph cannot be read";
    return {};
  }
  // With their data: edges that carry any (a programmatic launch's) are not given without it.
  std::vector<cudaGraphNode_t> from(e), to(e);
  std::vector<cudaGraphEdgeData> data(e);
  if (e && cudaGraphGetEdges(g, from.data(), to.data(), data.data(), &e) != cudaSuccess) {
    why = "the captured graph's edges cannot be read";
    return {};
  }
  std::unordered_map<cudaGraphNode_t, cudaGraphNode_t> next;
  std::unordered_map<cudaGraphNode_t, int> in;
  for (size_t i = 0; i < e; ++i) {
    if (!next.emplace(from[i], to[i]).second || ++in[to[i]] > 1) {
      why = fmt::format("the captured graph is not a chain ({} nodes, {} edges)", n, e);
      return {};
    }
  }
  std::vector<cudaGraphNode_t> nodes(n);
  if (n && cudaGraphGetNodes(g, nodes.data(), &n) != cudaSuccess) {
    why = "the captured graph's nodes cannot be read";
    return {};
  }
  std::vector<cudaGraphNode_t> roots;
  for (cudaGraphNode_t v : nodes)
    if (!in.count(v)) roots.push_back(v);
  if (roots.size() != 1 || e + 1 != n) {
    why = fmt::format("the captured graph is not a chain ({} nodes, {} edges, {} roots)", n, e, roots.size());
    return {};
  }
  std::vector<cudaGraphNode_t> chain{roots.front()};
  for (auto it = next.find(chain.back()); it != next.end(); it = next.find(chain.back()))
    chain.push_back(it->second);
  return chain;
}

// One boundary's graph: `g` cloned with a stamp kernel writing to `at` before `before` (a node of `g`),
// or after the chain's last node `last` where `before` is null; instantiated.
cudaGraphExec_t stamped_copy(cudaGraph_t g, cudaGraphNode_t before, cudaGraphNode_t last, uint64_t* at) {
  cudaGraph_t c = nullptr;
  if (cudaGraphClone(&c, g) != cudaSuccess) return nullptr;
  cudaKernelNodeParams p{};
  p.func = const_cast<void*>(stamp_kernel_address());
  p.gridDim = dim3(1);
  p.blockDim = dim3(1);
  void* args[] = {&at};
  p.kernelParams = args;
  cudaGraphNode_t stamp = nullptr, target = nullptr;
  bool ok = cudaGraphNodeFindInClone(&target, before ? before : last, c) == cudaSuccess;
  if (ok && before) {
    // target's dependency (none for the chain's first node) now leads to the stamp, the stamp to target.
    cudaGraphNode_t dep = nullptr;
    cudaGraphEdgeData edge{};
    size_t n = 1;
    ok = cudaGraphNodeGetDependencies(target, &dep, &edge, &n) == cudaSuccess && n <= 1;
    if (ok && n == 1) ok = cudaGraphRemoveDependencies(c, &dep, &target, &edge, 1) == cudaSuccess;
    ok = ok && cudaGraphAddKernelNode(&stamp, c, n == 1 ? &dep : nullptr, n, &p) == cudaSuccess;
    ok = ok && cudaGraphAddDependencies(c, &stamp, &target, nullptr, 1) == cudaSuccess;
  } else if (ok) {
    ok = cudaGraphAddKernelNode(&stamp, c, &target, 1, &p) == cudaSuccess;
  }
  cudaGraphExec_t exec = nullptr;
  if (ok && cudaGraphInstantiate(&exec, c, 0) != cudaSuccess) exec = nullptr;
  cudaGraphDestroy(c);
  if (!exec) cudaGetLastError();
  return exec;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Mapped host memory for the two clock readings of a replay: the gate's opening and the stamp.
struct Clocks {
  uint64_t* host = nullptr;
  uint64_t* device = nullptr;
  Clocks() {
    void* h = nullptr;
    if (cudaHostAlloc(&h, 2 * sizeof(uint64_t), cudaHostAllocMapped) != cudaSuccess) return;
    void* d = nullptr;
    if (cudaHostGetDevicePointer(&d, h, 0) != cudaSuccess) {
      cudaFreeHost(h);
      return;
    }
    host = static_cast<uint64_t*>(h);
    device = static_cast<uint64_t*>(d);
  }
  ~Clocks() {
    if (host) cudaFreeHost(host);
  }
};

}  // namespace

bool stamp_boundaries(cudaGraph_t graph, const std::vector<std::vector<rt::CapturedWork>>& layout,
                      int repeats, cudaStream_t s, ReplayTimer& timer, rt::BoundaryTimes& out) {
  out = {};
  out.start_us.assign(layout.size(), -1.0);
  auto fail = [&](std::string why) {
    cudaGetLastError();
    out.note = std::move(why);
    return false;
  };
  if (repeats < 1) return fail("no replays asked for");
  std::vector<cudaGraphNode_t> chain = chain_of(graph, out.note);
  if (chain.empty()) return fail(out.note.empty() ? "the captured graph is empty" : out.note);
  // The chain's work must come in the layout's order: each node's first work is its boundary.
  std::unordered_map<cudaGraphNode_t, size_t> position;
  for (size_t i = 0; i < chain.size(); ++i) position[chain[i]] = i;
  std::vector<std::pair<size_t, cudaGraphNode_t>> boundaries;  // (layout index, first work node)
  size_t last = 0;
  for (size_t k = 0; k < layout.size(); ++k) {
    if (layout[k].empty()) continue;
    size_t first = SIZE_MAX;
    for (const rt::CapturedWork& w : layout[k]) {
      auto it = position.find(reinterpret_cast<cudaGraphNode_t>(w.key));
      if (it == position.end()) return fail(fmt::format("node {}'s work is not in the captured graph", k));
      first = std::min(first, it->second);
    }
    if (!boundaries.empty() && first < last)
      return fail(fmt::format("node {}'s work starts before node {}'s", k, boundaries.back().first));
    for (const rt::CapturedWork& w : layout[k])
      last = std::max(last, position[reinterpret_cast<cudaGraphNode_t>(w.key)]);
    boundaries.emplace_back(k, chain[first]);
  }
  if (boundaries.empty()) return fail("the captured graph holds no work");
  Clocks clocks;
  if (!clocks.host) return fail("no mapped host memory for the clock readings");
  std::vector<double> device_us;
  auto time_boundary = [&](cudaGraphNode_t before, double& at_us) {
    cudaGraphExec_t exec = stamped_copy(graph, before, chain.back(), clocks.device + 1);
    if (!exec) return false;
    std::vector<double> t;
    for (int r = 0; r < repeats; ++r) {
      clocks.host[0] = clocks.host[1] = 0;
      if (!timer.begin(s, clocks.device)) break;
      const cudaError_t e = cudaGraphLaunch(exec, s);
      timer.end(s);
      const double us = timer.elapsed_us();  // waits for the replay
      if (e != cudaSuccess || us <= 0 || clocks.host[1] < clocks.host[0] || !clocks.host[0]) break;
      t.push_back(static_cast<double>(clocks.host[1] - clocks.host[0]) / 1e3);
      device_us.push_back(us);
    }
    cudaGraphExecDestroy(exec);
    if (t.size() != static_cast<size_t>(repeats)) return false;
    at_us = median(std::move(t));
    out.replays += repeats;
    return true;
  };
  for (const auto& [k, node] : boundaries)
    if (!time_boundary(node, out.start_us[k]))
      return fail(fmt::format("the stamped replay before node {} failed", k));
  if (!time_boundary(nullptr, out.end_us)) return fail("the stamped replay after the last node failed");
  timer.forget();
  out.stamped_device_us = median(std::move(device_us));
  return true;
}

}  // namespace tessera::cuda
