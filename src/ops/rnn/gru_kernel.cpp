// Reference kernel of GRU; the recurrence is shared with the other recurrent ops (recurrent_ref.h).
#include "ops/rnn/recurrent_ref.h"

namespace {

namespace recurrent = tessera::ops::recurrent;

class GRUKernel : public recurrent::RecurrentKernel {
 public:
  explicit GRUKernel(const tessera::rt::KernelInfo& info) : RecurrentKernel(info, recurrent::Cell::kGru) {}
};

}  // namespace

TESSERA_REGISTER_KERNELS(rnn_gru) {
  reg.add(tessera::rt::KernelDef::of<GRUKernel>("GRU"));
}
