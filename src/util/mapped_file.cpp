#include "util/mapped_file.h"

#include <sys/mman.h>

#include <cerrno>
#include <system_error>

namespace tessera::util {

std::shared_ptr<const MappedFile> MappedFile::map(int fd, size_t size, bool populate) {
  if (size == 0) return std::shared_ptr<const MappedFile>(new MappedFile(nullptr, 0));
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
  if (addr == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap");
  return std::shared_ptr<const MappedFile>(new MappedFile(addr, size));
}

MappedFile::~MappedFile() {
  if (addr_) ::munmap(addr_, size_);
}

}  // namespace tessera::util
