// The convolution algorithms cuDNN's heuristic chose, kept across runs: one line per configuration in
// $XDG_CACHE_HOME/tessera/cudnn-algos.tsv (~/.cache/tessera/ without XDG_CACHE_HOME), keyed by the GPU's
// name, cuDNN's version and the convolution's shapes and window. The file is rewritten whole through a
// temporary file and a rename, so a reader never sees half of it; unreadable lines are ignored, and a
// cached choice is used only after cuDNN accepts it again for the configuration.
#pragma once

#include <optional>
#include <string>

namespace tessera::cuda {

struct AlgoChoice {
  int algo = 0;  // cudnnConvolutionFwdAlgo_t or cudnnConvolutionBwdDataAlgo_t
  int math = 0;  // cudnnMathType_t
};

// "<GPU name>|cudnn <version>|" for the current device: the start of every key.
std::string algo_key_prefix();
std::optional<AlgoChoice> cached_algo(const std::string& key);
// Records the choice and rewrites the file; a file that cannot be written is left as it was (the cache
// only saves the heuristic's time).
void remember_algo(const std::string& key, AlgoChoice choice);

}  // namespace tessera::cuda
