// Opening files named by an untrusted relative path (an ONNX external-data location, say) so that
// nothing outside a given folder can be reached: no absolute paths, no "..", and no symbolic link in
// any component, checked one component at a time with openat(O_NOFOLLOW) rather than by looking at
// the path string, so a link swapped in between a check and the open is still refused.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/unique_fd.h"

namespace tessera::util {

// The components of a relative '/'-separated path ("." components dropped), or a description of why
// the path is refused: "is absolute", "contains '..'", "has an empty component", ...
struct RelativePath {
  std::vector<std::string> parts;
  std::string problem;  // empty when the path is acceptable
};
RelativePath split_relative_path(std::string_view path);

// Opens the folder holding `path`'s last component, walking from `root_fd`; returns it and the last
// component. With `create_dirs`, missing folders are created (mode 0755). Throws std::system_error
// whose what() names the offending component ("'sub' is a symbolic link").
struct ParentDir {
  UniqueFd fd;
  std::string leaf;
};
ParentDir open_parent_beneath(int root_fd, const RelativePath& path, bool create_dirs = false);

// Opens `path` read-only beneath `root_fd` with the walk above; the file itself must not be a link.
UniqueFd open_file_beneath(int root_fd, const RelativePath& path);

// Opens a folder for use as root_fd.
UniqueFd open_dir(const std::string& dir);

}  // namespace tessera::util
