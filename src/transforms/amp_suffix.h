// Running only what changed, for convert amp's search. Each trial is the model converted with another
// block list; it differs from the last state the search kept only from the first node whose precision
// changed (and the Casts around it). So a trial runs from the latest checkpoint (every n-th named node of
// the original main graph) before which its main graph equals the kept state's node for node, with the
// initializers those nodes read: the values that cross the checkpoint are fed in as the kept state's
// run computed them, and the nodes before it are not run. Every run also hands back the values crossing
// the later checkpoints, which become the cache when the trial is kept.
//
// The suffix computes what the whole model would (the same kernels on the same inputs; the session's
// basic rewrites change no arithmetic), so the search decides the same as with full runs:
// tests/unit/transforms/amp_test.cpp compares the two. Float16 values are fed as float32 through a Cast
// back (exact), and a suffix the session cannot run is run whole.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/model.h"
#include "runtime/session.h"

namespace tessera::transforms {

using Feeds = std::vector<std::pair<std::string, rt::Value>>;

class SuffixRunner {
 public:
  // `original` names the checkpoints; `checkpoints` of them (0: every trial runs whole).
  SuffixRunner(const ir::Model& original, rt::SessionOptions options, const std::vector<Feeds>& feeds,
               int checkpoints);

  // Called with each feed set's index and outputs as they come; returning true skips the remaining
  // sets (the trial failed on this one: no need to run the others). Called from set 0 again when a
  // suffix run fails and the model is run whole.
  using Stop = std::function<bool(size_t set, const std::vector<rt::Value>& outputs)>;

  // Runs `model` (a conversion of the original) on every feed set, or until `stop` says so; the outputs
  // per feed set run, in the order of model's graph outputs. Throws what the session throws.
  std::vector<std::vector<rt::Value>> run(const ir::Model& model, const Stop& stop = {});
  // The model last run becomes the kept state the next runs start from (not one stopped early).
  void keep();

  int64_t nodes_run() const { return nodes_run_; }
  int64_t nodes_skipped() const { return nodes_skipped_; }
  int fallbacks() const { return fallbacks_; }  // suffix runs that failed and were run whole
  const std::string& first_fallback() const { return first_fallback_; }  // why the first one failed
  double session_seconds() const { return session_s_; }
  double run_seconds() const { return run_s_; }

 private:
  struct Start {
    size_t position = 0;                // first node run
    std::vector<std::string> crossing;  // values made before it and read from it on
  };
  Start start_for(const ir::Model& model) const;
  std::vector<std::vector<rt::Value>> run_from(const ir::Model& model, const Start& start, const Stop& stop);

  std::vector<std::string> checkpoints_;  // node names, in file order
  rt::SessionOptions options_;
  const std::vector<Feeds>& feeds_;
  std::optional<ir::Model> kept_, last_;
  bool last_complete_ = false;  // the last run ran every feed set
  // Per feed set: values of the kept state that cross a checkpoint, by name.
  std::vector<std::unordered_map<std::string, rt::Value>> kept_values_, last_values_;
  int64_t nodes_run_ = 0, nodes_skipped_ = 0;
  int fallbacks_ = 0;
  std::string first_fallback_;
  double session_s_ = 0, run_s_ = 0;
};

}  // namespace tessera::transforms
