#pragma once

#include <stdexcept>

namespace tessera::ir {

// A refused edit. The message says why in the words of someone editing the model ("node 'conv_9' does
// not exist in graph 'main'"); the command that threw it has left the model untouched.
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tessera::ir
