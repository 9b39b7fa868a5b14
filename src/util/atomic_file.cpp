#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <random>
#include <system_error>
#include <vector>

namespace tessera::util {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

std::string random_suffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  uint64_t r = rng();
  for (int i = 0; i < 12; ++i, r >>= 4) s += kHex[r & 15];
  return s;
}

}  // namespace

AtomicFile::AtomicFile(UniqueFd dir, std::string name) : dir_(std::move(dir)), name_(std::move(name)) {
  // A hidden name with a random part: O_EXCL then never clobbers anything, even a concurrent save.
  for (int attempt = 0; attempt < 16 && !fd_; ++attempt) {
    temp_name_ = "." + name_ + ".tmp-" + random_suffix();
    int fd =
        ::openat(dir_.get(), temp_name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
      fd_.reset(fd);
    } else if (errno != EEXIST) {
      fail("cannot create a temporary file beside '" + name_ + "'");
    }
  }
  if (!fd_) fail("cannot create a temporary file beside '" + name_ + "'");
}

AtomicFile::~AtomicFile() {
  if (!committed_) ::unlinkat(dir_.get(), temp_name_.c_str(), 0);
}

void AtomicFile::write(std::span<const std::byte> bytes) {
  const std::byte* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    // Linux writes at most about 2 GiB per call; larger tensors take several.
    ssize_t n = ::write(fd_.get(), p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("writing '" + name_ + "'");
    p += n;
    left -= static_cast<size_t>(n);
    size_ += static_cast<size_t>(n);
  }
}

void AtomicFile::write_zeros(size_t count) {
  static const std::vector<std::byte> kZeros(4096);
  while (count > 0) {
    size_t n = std::min(count, kZeros.size());
    write(std::span(kZeros.data(), n));
    count -= n;
  }
}

void AtomicFile::skip(size_t count) {
  if (count == 0) return;
  size_ += count;
  if (::ftruncate(fd_.get(), static_cast<off_t>(size_)) != 0) fail("extending '" + name_ + "'");
  if (::lseek(fd_.get(), static_cast<off_t>(size_), SEEK_SET) < 0) fail("seeking in '" + name_ + "'");
}

void AtomicFile::sync() {
  if (::fsync(fd_.get()) != 0) fail("syncing '" + name_ + "'");
  fd_.reset();
}

void AtomicFile::commit() {
  if (::renameat(dir_.get(), temp_name_.c_str(), dir_.get(), name_.c_str()) != 0)
    fail("replacing '" + name_ + "'");
  committed_ = true;
  if (::fsync(dir_.get()) != 0) fail("syncing the folder of '" + name_ + "'");
}

void write_file_atomically(const std::filesystem::path& file, std::span<const std::byte> bytes) {
  std::filesystem::path dir = file.parent_path().empty() ? "." : file.parent_path();
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) throw std::system_error(errno, std::generic_category(), "cannot open folder " + dir.string());
  AtomicFile f(std::move(dir_fd), file.filename().string());
  f.write(bytes);
  f.sync();
  f.commit();
}

}  // namespace tessera::util
