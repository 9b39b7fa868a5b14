// Einsum: tensor contractions written in Einstein summation notation ("bij,bjk->bik").
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// One side of the equation for one operand: its labels, with '.' standing for the whole ellipsis.
struct Term {
  std::string labels;
  bool ellipsis = false;
};

// The term as written, for messages.
std::string spelled(const Term& t) {
  std::string s;
  for (char ch : t.labels) s += ch == '.' ? std::string("...") : std::string(1, ch);
  return s;
}

Term parse_term(const InferenceContext& ctx, const std::string& s, const std::string& eq) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == '.') {
      if (t.ellipsis || s.compare(i, 3, "...") != 0) {
        ctx.fail(fmt::format(
            "equation '{}': '{}' has a stray '.' (an ellipsis is exactly '...', at most once a term)", eq,
            s));
      }
      t.ellipsis = true;
      t.labels.push_back('.');
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(ch))) {
      ctx.fail(fmt::format("equation '{}': '{}' is not a subscript letter", eq, std::string(1, ch)));
    }
    t.labels.push_back(ch);
  }
  return t;
}

void infer_einsum(InferenceContext& ctx) {
  std::string eq;
  for (char ch : ctx.attr_string("equation")) {
    if (!std::isspace(static_cast<unsigned char>(ch))) eq.push_back(ch);
  }
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(ctx, lhs.substr(start, comma - start), eq));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.num_inputs()) {
    ctx.fail(fmt::format("equation '{}' has {} operand terms but the node has {} inputs", eq, terms.size(),
                         ctx.num_inputs()));
  }
  std::map<char, Dim> dims;
  std::map<char, int> counts;
  std::optional<Shape> ellipsis = Shape{};  // nullopt once an operand with '...' has an unknown rank
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    for (char ch : t.labels) {
      if (ch != '.') ++counts[ch];
    }
    const Shape* s = input_shape(ctx, i);
    if (!s) {
      if (t.ellipsis) ellipsis.reset();
      continue;
    }
    size_t named = t.labels.size() - (t.ellipsis ? 1 : 0);
    if (t.ellipsis ? s->size() < named : s->size() != named) {
      ctx.fail_input(
          i, fmt::format("input {} has rank {} {} but its term '{}' in equation '{}' names {} axes", i,
                         s->size(), ir::shape_to_string(*s), spelled(t), eq, named));
    }
    size_t ell_rank = s->size() - named;
    size_t axis = 0;
    for (char ch : t.labels) {
      if (ch == '.') {
        Shape part(s->begin() + axis, s->begin() + axis + ell_rank);
        if (ellipsis) ellipsis = broadcast_shapes(ctx, *ellipsis, part);
        axis += ell_rank;
        continue;
      }
      auto [it, fresh] = dims.emplace(ch, (*s)[axis]);
      if (!fresh) {
        it->second =
            unify_dims(ctx, it->second, (*s)[axis],
                       fmt::format("equation '{}': subscript '{}' has different sizes in different inputs",
                                   eq, std::string(1, ch)));
      }
      ++axis;
    }
  }
  // The output labels: explicit after '->', else the ellipsis then the labels used once, sorted.
  Term out;
  if (arrow != std::string::npos) {
    out = parse_term(ctx, eq.substr(arrow + 2), eq);
    for (char ch : out.labels) {
      if (ch != '.' && !counts.count(ch)) {
        ctx.fail(
            fmt::format("equation '{}': output subscript '{}' appears in no input", eq, std::string(1, ch)));
      }
      if (ch != '.' && std::count(out.labels.begin(), out.labels.end(), ch) > 1) {
        ctx.fail(fmt::format("equation '{}': output subscript '{}' appears twice", eq, std::string(1, ch)));
      }
    }
  } else {
    bool any_ellipsis = std::any_of(terms.begin(), terms.end(), [](const Term& t) { return t.ellipsis; });
    if (any_ellipsis) out.labels = ".";
    for (auto [ch, n] : counts) {
      if (n == 1) out.labels.push_back(ch);
    }
  }
  Shape y;
  for (char ch : out.labels) {
    if (ch == '.') {
      if (!ellipsis) return propagate_elem(ctx, 0, 0, std::nullopt);
      y.insert(y.end(), ellipsis->begin(), ellipsis->end());
      continue;
    }
    auto it = dims.find(ch);
    y.push_back(it == dims.end() ? Dim::unknown() : it->second);
  }
  propagate_elem(ctx, 0, 0, y);
}

}  // namespace

TESSERA_REGISTER_OPS(nn_einsum) {
  const auto numeric = types::concat({types::kUnsignedInt, types::kSignedInt, types::kFloat});
  for (int v : {12, 28}) {
    reg.add(
        OpSchema("Einsum", v)
            .category(Category::kLinearAlgebra)
            .doc("Evaluates an Einstein summation: the equation names each operand's axes with letters; "
                 "letters missing from the output are summed over, '...' stands for broadcast batch axes.")
            .variadic_input("Inputs", "T")
            .output("Output", "T")
            .types("T", v >= 28 ? types::concat({numeric, types::tensors({"bfloat16"})}) : numeric)
            .attr("equation", tessera::ir::AttrType::kString)
            .infer(infer_einsum));
  }
}
