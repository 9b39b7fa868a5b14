// A heap-allocated value with value semantics: copying a Box copies what it holds. Lets recursive IR
// types (a Graph inside an Attribute inside a Node inside a Graph) be plain copyable values, so a
// model snapshot for undo or a pass's before/after is just a copy.
#pragma once

#include <memory>
#include <utility>

namespace tessera::ir {

template <class T>
class Box {
 public:
  Box() : p_(std::make_unique<T>()) {}
  Box(T v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT(google-explicit-constructor)
  Box(const Box& o) : p_(std::make_unique<T>(*o.p_)) {}
  Box(Box&&) noexcept = default;
  Box& operator=(const Box& o) {
    if (this != &o) p_ = std::make_unique<T>(*o.p_);
    return *this;
  }
  Box& operator=(Box&&) noexcept = default;
  ~Box() = default;

  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  T* get() { return p_.get(); }
  const T* get() const { return p_.get(); }

  bool operator==(const Box& o) const { return *p_ == *o.p_; }

 private:
  std::unique_ptr<T> p_;  // never null except after a move
};

}  // namespace tessera::ir
