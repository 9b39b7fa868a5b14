// A read-only memory mapping of a whole file. Tensors loaded from a file keep a shared pointer to the
// mapping, so the bytes are read lazily by the kernel's page cache and never copied.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace tessera::util {

class MappedFile {
 public:
  // Maps the first `size` bytes of the open file `fd` (which may be closed afterwards). A size of 0
  // maps nothing and yields an empty span. `populate` reads the whole file in now, which is faster
  // than page faults when every byte is about to be read (parsing). Throws std::system_error.
  static std::shared_ptr<const MappedFile> map(int fd, size_t size, bool populate = false);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(addr_), size_}; }

 private:
  MappedFile(void* addr, size_t size) : addr_(addr), size_(size) {}
  void* addr_;
  size_t size_;
};

// Gives back the pages of [data, data + size) when the range lies in a live mapping made by MappedFile:
// they are read from the file again if touched later. Only whole pages inside the range go, since a
// neighbouring tensor may share the pages at its ends. Returns false (and does nothing) for memory that
// is not such a mapping: heap memory must never be discarded this way. A runtime that keeps its own
// layout of a weight calls it, so that the weight is not held twice.
bool discard_mapped(const void* data, size_t size);

}  // namespace tessera::util
