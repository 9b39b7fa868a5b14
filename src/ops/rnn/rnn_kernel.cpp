// Reference kernel of RNN; the recurrence is shared with the other recurrent ops (recurrent_ref.h).
#include "ops/rnn/recurrent_ref.h"

namespace {

namespace recurrent = tessera::ops::recurrent;

class RNNKernel : public recurrent::RecurrentKernel {
 public:
  explicit RNNKernel(const tessera::rt::KernelInfo& info) : RecurrentKernel(info, recurrent::Cell::kRnn) {}
};

}  // namespace

TESSERA_REGISTER_KERNELS(rnn_rnn) {
  reg.add(tessera::rt::KernelDef::of<RNNKernel>("RNN"));
}
