// Helpers for the ONNX reader/writer tests: temporary folders, raw files, and models built by hand.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "onnx.pb.h"
#include "onnx/onnx_io.h"

namespace tessera::onnx::testing {

namespace fs = std::filesystem;

// A fresh folder under the system temp dir, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::mt19937_64 rng{std::random_device{}()};
    path_ = fs::temp_directory_path() /
            ("tessera-onnx-" + std::to_string(::getpid()) + "-" + std::to_string(rng()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// A minimal valid ModelProto: one Identity node, ready for a test to add the part it is about.
inline onnx_pb::ModelProto minimal_proto() {
  onnx_pb::ModelProto m;
  m.set_ir_version(10);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(21);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* n = g->add_node();
  n->set_op_type("Identity");
  n->add_input("x");
  n->add_output("y");
  g->add_input()->set_name("x");
  g->add_output()->set_name("y");
  return m;
}

// Adds a float initializer "w" of shape `dims` and returns it for the test to fill in.
inline onnx_pb::TensorProto* add_float_initializer(onnx_pb::ModelProto& m, std::vector<int64_t> dims,
                                                   std::string name = "w") {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(std::move(name));
  t->set_data_type(1);
  for (int64_t d : dims) t->add_dims(d);
  return t;
}

inline void add_external(onnx_pb::TensorProto* t, std::vector<std::pair<std::string, std::string>> keys) {
  t->set_data_location(1);
  for (auto& [k, v] : keys) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
}

// The LoadError message loading `m` gives, from memory (with `base_dir`) or "" when it loads.
inline std::string load_error(const onnx_pb::ModelProto& m, const fs::path& base_dir = {},
                              const LoadOptions& options = {}) {
  std::string bytes = m.SerializeAsString();
  try {
    load_model_from_memory(as_bytes(bytes), base_dir, options);
  } catch (const LoadError& e) {
    return e.what();
  }
  return "";
}

}  // namespace tessera::onnx::testing
