// What the CPU kernels keep for the length of one run, dropped when a run begins (Session::run).
#pragma once

namespace tessera::cpu {

// Forgets what FiniteSums learnt of tensors (conv_activation.h, KnownMagnitudes): a tensor the
// caller holds may change between runs.
void begin_run();

}  // namespace tessera::cpu
