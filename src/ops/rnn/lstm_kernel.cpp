// Reference kernel of LSTM; the recurrence is shared with the other recurrent ops (recurrent_ref.h).
#include "ops/rnn/recurrent_ref.h"

namespace {

namespace recurrent = tessera::ops::recurrent;

class LSTMKernel : public recurrent::RecurrentKernel {
 public:
  explicit LSTMKernel(const tessera::rt::KernelInfo& info) : RecurrentKernel(info, recurrent::Cell::kLstm) {}
};

}  // namespace

TESSERA_REGISTER_KERNELS(rnn_lstm) {
  reg.add(tessera::rt::KernelDef::of<LSTMKernel>("LSTM"));
}
