// Finding a backend by name: the built-in CPU backend, backends registered in-process (tests register
// a simulated device here), or a backend library `libtessera_<name>.so` loaded with dlopen.
//
// A backend library exports one C function:
//
//   extern "C" tessera::rt::Backend* tessera_backend_create(int interface_version,
//                                                          const tessera::rt::BackendOptions* options,
//                                                          char* error, size_t error_size);
//
// It returns nullptr and writes one line into `error` when it cannot serve (no device, a driver too
// old, another interface version). The library is looked for beside the executable, in ../lib from it,
// in $TESSERA_BACKEND_PATH, then by the dynamic loader's own search; it stays loaded for the process.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "passes/target.h"
#include "runtime/backend.h"

namespace tessera::rt {

struct BackendOptions {
  int device = 0;  // which device of the kind (--device N)
  // The session's precision: kTf32 lets float32 matrix products use TF32 tensor cores; kFp32 does not.
  passes::Precision precision = passes::Precision::kFp16;
};

extern "C" {
using BackendCreateFn = Backend* (*)(int interface_version, const BackendOptions* options, char* error,
                                     size_t error_size);
}
inline constexpr const char* kBackendCreateSymbol = "tessera_backend_create";

class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using BackendFactory = std::function<std::unique_ptr<Backend>(const BackendOptions&)>;

// Makes `name` resolvable in this process without a library (tests; statically linked backends).
void register_backend(std::string name, BackendFactory factory);
void unregister_backend(const std::string& name);

// The backend `name` ("cpu", "cuda", ...); throws BackendUnavailable with one line saying why not.
std::unique_ptr<Backend> load_backend(const std::string& name, const BackendOptions& options = {});

// The file names tried for backend `name`, in order (for messages and tests).
std::vector<std::string> backend_library_candidates(const std::string& name);

}  // namespace tessera::rt
