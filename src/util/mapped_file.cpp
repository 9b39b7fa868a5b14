#include "util/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <mutex>
#include <system_error>

namespace tessera::util {

namespace {

// The live mappings (start -> size), for discard_mapped.
struct Mappings {
  std::mutex mu;
  std::map<uintptr_t, size_t> ranges;
};

Mappings& mappings() {
  static Mappings m;
  return m;
}

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::map(int fd, size_t size, bool populate) {
  if (size == 0) return std::shared_ptr<const MappedFile>(new MappedFile(nullptr, 0));
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
  if (addr == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap");
  {
    std::lock_guard lock(mappings().mu);
    mappings().ranges[reinterpret_cast<uintptr_t>(addr)] = size;
  }
  return std::shared_ptr<const MappedFile>(new MappedFile(addr, size));
}

MappedFile::~MappedFile() {
  if (!addr_) return;
  {
    std::lock_guard lock(mappings().mu);
    mappings().ranges.erase(reinterpret_cast<uintptr_t>(addr_));
  }
  ::munmap(addr_, size_);
}

bool discard_mapped(const void* data, size_t size) {
  auto begin = reinterpret_cast<uintptr_t>(data);
  auto end = begin + size;
  {
    std::lock_guard lock(mappings().mu);
    auto& r = mappings().ranges;
    auto it = r.upper_bound(begin);
    if (it == r.begin()) return false;
    --it;
    if (end > it->first + it->second) return false;
  }
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  return true;
}

}  // namespace tessera::util
