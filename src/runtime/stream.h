// Streams and events: the order in which a device runs work, and markers in that order.
//
// Every kernel runs on its backend's stream (KernelContext::stream()). The CPU backend runs
// synchronously, so its stream is the calling thread and its events complete when recorded; a device
// backend returns its native queue (a cudaStream_t) from native(), which its kernels launch on.
#pragma once

namespace tessera::rt {

class Stream {
 public:
  virtual ~Stream() = default;
  // Waits until everything queued so far has run.
  virtual void synchronize() = 0;
  // The device's own handle (cudaStream_t for CUDA), nullptr on the host.
  virtual void* native() const { return nullptr; }
};

class Event {
 public:
  virtual ~Event() = default;
  virtual void record(Stream& s) = 0;
  virtual void synchronize() = 0;
  // Milliseconds between two recorded events (device time where the device can measure it).
  virtual double elapsed_ms(const Event& since) const = 0;
};

// The stream of host work: synchronous, nothing to wait for.
Stream& host_stream();

}  // namespace tessera::rt
