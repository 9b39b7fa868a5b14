#include "passes/target.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace tessera::passes {

namespace {

template <class E, size_t N>
std::optional<E> from_name(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) {
  // Case-insensitive: users write layouts both ways (NHWC, nhwc).
  auto same = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  };
  for (const auto& [e, n] : table)
    if (same(n, s)) return e;
  return std::nullopt;
}

template <class E, size_t N>
std::string_view to_name(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [x, n] : table)
    if (x == e) return n;
  return "?";
}

constexpr std::array<std::pair<OptLevel, std::string_view>, 4> kLevels{{{OptLevel::kNone, "none"},
                                                                        {OptLevel::kBasic, "basic"},
                                                                        {OptLevel::kExtended, "extended"},
                                                                        {OptLevel::kLayout, "layout"}}};
constexpr std::array<std::pair<Precision, std::string_view>, 4> kPrecisions{{{Precision::kFp32, "fp32"},
                                                                             {Precision::kTf32, "tf32"},
                                                                             {Precision::kFp16, "fp16"},
                                                                             {Precision::kBf16, "bf16"}}};
constexpr std::array<std::pair<Layout, std::string_view>, 3> kLayouts{
    {{Layout::kNchw, "NCHW"}, {Layout::kNhwc, "NHWC"}, {Layout::kBlocked, "blocked"}}};

}  // namespace

std::string_view opt_level_name(OptLevel l) {
  return to_name(kLevels, l);
}
std::optional<OptLevel> opt_level_from_name(std::string_view s) {
  return from_name(kLevels, s);
}
std::string_view precision_name(Precision p) {
  return to_name(kPrecisions, p);
}
std::optional<Precision> precision_from_name(std::string_view s) {
  return from_name(kPrecisions, s);
}
std::string_view layout_name(Layout l) {
  return to_name(kLayouts, l);
}
std::optional<Layout> layout_from_name(std::string_view s) {
  return from_name(kLayouts, s);
}

bool Target::rule_enabled(std::string_view name) const {
  return std::find(disabled_rules.begin(), disabled_rules.end(), name) == disabled_rules.end();
}

}  // namespace tessera::passes
