// Replacing a file so that readers (and a crash) see either the old content or the new, never a mix:
// the content goes to a temporary file in the same folder, is fsync'd, renamed over the target, and
// the folder is fsync'd so the rename itself is durable.
//
// Writing is split from committing so that several files (a model and its external data) can all be
// written and synced before any of them replaces its target: a failure while writing leaves every
// target untouched.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

#include "util/unique_fd.h"

namespace tessera::util {

class AtomicFile {
 public:
  // Creates the temporary file beside `name` inside the folder `dir` (which this object takes).
  // Throws std::system_error.
  AtomicFile(UniqueFd dir, std::string name);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // removes the temporary file unless committed

  void write(std::span<const std::byte> bytes);
  void write_zeros(size_t count);
  // `count` zero bytes as a hole (the file extended, nothing written): a sparse file where the filesystem
  // supports it, zeros where it does not.
  void skip(size_t count);
  int fd() const { return fd_.get(); }
  size_t size() const { return size_; }

  // Flushes the content to disk and closes the temporary file.
  void sync();
  // Renames the temporary file over the target and syncs the folder; sync() first.
  void commit();

 private:
  UniqueFd dir_;
  std::string name_, temp_name_;
  UniqueFd fd_;
  size_t size_ = 0;
  bool committed_ = false;
};

// Writes a whole file atomically (temporary file in the same folder, fsync, rename); throws
// std::system_error naming the file.
void write_file_atomically(const std::filesystem::path& file, std::span<const std::byte> bytes);

}  // namespace tessera::util
