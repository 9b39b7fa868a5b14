// A graph compiled for execution: values numbered into slots, a kernel per node placed on a backend,
// the copies between devices where placement changes, the slots each node releases (the last use of a
// value frees it, so memory follows liveness), and the compiled bodies of control-flow attributes.
// Subgraphs see the values of enclosing graphs by name (ONNX outer scope); compilation resolves those
// names once and the enclosing node keeps them alive until it has run.
//
// Placement: each backend, in order of preference, claims the nodes it can run (Backend::claim, from
// the nodes' inferred types); the host backend, last, takes the rest. A value read on another device
// than the one that made it is copied once per device, before its first reader there (a node inserted
// by the compiler, MemcpyToDevice / MemcpyToHost), and every later reader on that device reads the
// copy: no value goes back and forth per node. Weights read on a device are copied there when the
// graph is compiled. Graph inputs, outputs and outer-scope values live on the host, and so do the inputs
// a device kernel reads on the host and the outputs it makes there (Backend::input_on_host: a Reshape's
// shape, Shape's output), so a shape computation never travels to the device and back.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/model.h"
#include "runtime/backend.h"
#include "runtime/kernel.h"

namespace tessera::rt {

struct ExecNode {
  const ir::Node* node = nullptr;
  std::unique_ptr<ir::Node> own_node;  // the node of a copy the compiler inserted (node points to it)
  std::unique_ptr<KernelInfo> info;
  KernelPtr kernel;
  std::string kernel_name;  // "reference", "dnnl"...
  Backend* backend = nullptr;
  std::vector<int> inputs;   // slot per input; -1 when left out
  std::vector<int> outputs;  // slot per output; -1 when left out
  std::vector<int> release;  // slots whose last use is this node
  // Per input: 1 when this node is the value's last reader and reads it through this input only, so
  // that a kernel may write an output into it (KernelContext::output_reusing).
  std::vector<uint8_t> last_use;
  std::vector<std::unique_ptr<ExecGraph>> subgraphs;
};

// The kernel's view of a node of `model` (schema, opset, attributes) with the inferred `types` (may be
// null), as placement sees it: for asking a backend whether it would run the node.
std::unique_ptr<KernelInfo> make_kernel_info(const ir::Node& n, const ir::Model& model,
                                             const std::unordered_map<std::string, ir::Type>* types);

// What compilation needs from the session.
struct CompileOptions {
  const ir::Model* model = nullptr;  // opset imports
  std::vector<Backend*> backends;    // in order of preference; the host (CPU) backend last
  // Inferred value types (check::CheckResult::value_types), handed to the kernels; may be null.
  const std::unordered_map<std::string, ir::Type>* types = nullptr;
  std::string graph_path;  // for messages: "main", "main/If_0:then_branch"
  // SessionOptions::cancel: once set, compilation stops between weights (copying a large model's takes
  // a second) with CompileError "session build cancelled".
  const std::atomic<bool>* cancel = nullptr;
};

class ExecGraph {
 public:
  // Throws CompileError naming the node when an op has no kernel or a value is undefined.
  static std::unique_ptr<ExecGraph> compile(const ir::Graph& g, const CompileOptions& opts,
                                            const ExecGraph* enclosing = nullptr);

  const ir::Graph& graph() const { return *graph_; }
  const std::string& path() const { return path_; }
  int slot_count() const { return static_cast<int>(names_.size()); }
  const std::string& slot_name(int s) const { return names_[static_cast<size_t>(s)]; }
  int find_slot(const std::string& name) const;  // -1 when the graph does not know the name
  // The slot a subgraph reads for outer-scope value `name`: its host copy when the value lives on a
  // device, else find_slot(name).
  int outer_slot(const std::string& name) const;
  // Whether the name is a slot here or in an enclosing graph.
  bool resolves(const std::string& name) const;
  const std::vector<int>& input_slots() const { return inputs_; }
  const std::vector<int>& output_slots() const { return outputs_; }
  // Whether graph input `i` is read only by copies to backend `b` (and is no graph output): a value
  // already in b's memory can then be fed as it is.
  bool input_read_only_on(size_t i, const Backend* b) const;
  const std::vector<std::pair<int, Value>>& constants() const { return constants_; }
  // Names taken from enclosing graphs: (local slot, name).
  const std::vector<std::pair<int, std::string>>& outer() const { return outer_; }
  const std::vector<ExecNode>& nodes() const { return nodes_; }
  std::vector<ExecNode>& mutable_nodes() { return nodes_; }  // for preparing the kernels
  // Forgets a constant every reader has taken its own copy of (Session::prepare_kernels).
  void drop_constant(int slot);
  // Slots of inputs and constants released before any node runs (never used).
  const std::vector<int>& unused() const { return unused_; }
  // Copies inserted between devices (this graph only).
  size_t copy_count() const { return copies_; }

 private:
  void place_and_create_kernels(const CompileOptions& opts);
  void insert_copies(Backend* host);
  int copy_slot(int slot, Backend* from, Backend* to, std::vector<ExecNode>& out);
  void compute_liveness();

  const ir::Graph* graph_ = nullptr;
  const ExecGraph* enclosing_ = nullptr;
  std::string path_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, int> slots_;
  std::vector<int> inputs_, outputs_, unused_;
  std::vector<std::pair<int, Value>> constants_;
  std::vector<std::pair<int, std::string>> outer_;
  std::vector<ExecNode> nodes_;
  std::unordered_map<std::string, int> host_copies_;  // value name -> slot of its host copy
  size_t copies_ = 0;
};

class CompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tessera::rt
