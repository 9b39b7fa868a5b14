// The names a main graph already uses, kept beside an edit history so that add_node and rename_node
// check a new name with a hash lookup instead of a scan of the graph (2-3 ms at 50,000 nodes): node
// names, node ids, and the values the graph defines (inputs, initializers, node outputs, and values
// defined inside its nodes' subgraphs, which a new output must not shadow).
//
// The owner (the studio's Document) feeds it every change its History reports (update), right after
// each command, undo, redo or cancelled batch, so it is exact between commands; a command checks names
// through it only while it is made active (Active) around that history call. A batch applies its steps
// with no index active (its own add_node run index covers additions). A hit is confirmed by the
// scanning check, which names the graph in its error; only a miss, the common case, is trusted.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/commands/change.h"
#include "ir/model.h"

namespace tessera::ir {

class NameIndex {
 public:
  // Indexes m's main graph (again).
  void rebuild(const Model& m);
  // Brings the index up to date after `changes` (made to `m`, which must be the model indexed).
  void update(const Model& m, const std::vector<Change>& changes);

  bool has_node_name(std::string_view name) const;
  bool has_node_id(NodeId id) const { return nodes_.count(id) > 0; }
  bool has_value(std::string_view name) const;
  const Model* model() const { return model_; }

  // While one lives, commands on the main graph of `m` check names through `index` (on this thread).
  class Active {
   public:
    Active(NameIndex& index, const Model& m);
    ~Active();
    Active(const Active&) = delete;
    Active& operator=(const Active&) = delete;

   private:
    const NameIndex* saved_;
  };
  // Commands on no index while one lives (a batch's steps: the index is updated after the batch).
  class Suspended {
   public:
    Suspended();
    ~Suspended();
    Suspended(const Suspended&) = delete;
    Suspended& operator=(const Suspended&) = delete;

   private:
    const NameIndex* saved_;
  };
  // The active index when it indexes `g` (its model's main graph), else nullptr.
  static const NameIndex* active_for(const Graph& g);

 private:
  struct Entry {
    std::string name;
    std::vector<std::string> values;  // its outputs and what its subgraphs define
  };
  void add_node(const Node& n);
  void remove_node(NodeId id);
  void add_graph_values(const Graph& g);
  void count(std::unordered_map<std::string, int>& map, const std::string& key, int by);

  const Model* model_ = nullptr;
  bool stale_ = true;
  size_t node_count_ = 0;
  std::unordered_map<NodeId, Entry> nodes_;
  std::unordered_map<std::string, int> node_names_;
  std::unordered_map<std::string, int> values_;
  std::vector<std::string> graph_values_;  // inputs, initializers, sparse initializers
};

}  // namespace tessera::ir
