// The reference recurrence shared by the RNN, GRU and LSTM kernels, computed in double. Each (direction,
// batch entry) pair is an independent chain over its sequence_lens[b] steps (the rest of Y is zero);
// the reverse direction walks those steps backwards. Gate layouts follow the spec: W and R stack the
// gates along their rows (RNN: i; GRU: z, r, h; LSTM: i, o, f, c), B is [Wb ; Rb] per direction and P
// holds LSTM's peepholes (i, o, f). clip bounds the gate pre-activations; activations come in per
// direction groups (RNN 1: f; GRU 2: f, g; LSTM 3: f, g, h) with activation_alpha/beta consumed in
// order by the functions that take them.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "ops/attention/ref_util.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace tessera::ops::recurrent {

enum class Cell { kRnn, kGru, kLstm };

struct Activation {
  enum class Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = Kind::kTanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (kind) {
      case Kind::kRelu:
        return std::max(0.0, x);
      case Kind::kTanh:
        return std::tanh(x);
      case Kind::kSigmoid:
        return 1.0 / (1.0 + std::exp(-x));
      case Kind::kAffine:
        return alpha * x + beta;
      case Kind::kLeakyRelu:
        return x < 0 ? alpha * x : x;
      case Kind::kThresholdedRelu:
        return x > alpha ? x : 0.0;
      case Kind::kScaledTanh:
        return alpha * std::tanh(beta * x);
      case Kind::kHardSigmoid:
        return std::clamp(alpha * x + beta, 0.0, 1.0);
      case Kind::kElu:
        return x < 0 ? alpha * (std::exp(x) - 1) : x;
      case Kind::kSoftsign:
        return x / (1 + std::fabs(x));
      case Kind::kSoftplus:
        return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0);
    }
    return x;
  }
};

// Parses one activation name (case-insensitive), taking its parameters from the alpha/beta lists at
// the cursors when it has any (falling back to the defaults of the matching ONNX operator).
inline Activation parse_activation(const std::string& name, const std::vector<float>& alphas,
                                   const std::vector<float>& betas, size_t& ai, size_t& bi) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  Activation a;
  auto alpha = [&](double d) { a.alpha = ai < alphas.size() ? alphas[ai++] : d; };
  auto beta = [&](double d) { a.beta = bi < betas.size() ? betas[bi++] : d; };
  using K = Activation::Kind;
  if (n == "relu") {
    a.kind = K::kRelu;
  } else if (n == "tanh") {
    a.kind = K::kTanh;
  } else if (n == "sigmoid") {
    a.kind = K::kSigmoid;
  } else if (n == "affine") {
    a.kind = K::kAffine, alpha(1.0), beta(0.0);
  } else if (n == "leakyrelu") {
    a.kind = K::kLeakyRelu, alpha(0.01);
  } else if (n == "thresholdedrelu") {
    a.kind = K::kThresholdedRelu, alpha(1.0);
  } else if (n == "scaledtanh") {
    a.kind = K::kScaledTanh, alpha(1.0), beta(1.0);
  } else if (n == "hardsigmoid") {
    a.kind = K::kHardSigmoid, alpha(0.2), beta(0.5);
  } else if (n == "elu") {
    a.kind = K::kElu, alpha(1.0);
  } else if (n == "softsign") {
    a.kind = K::kSoftsign;
  } else if (n == "softplus") {
    a.kind = K::kSoftplus;
  } else {
    throw rt::KernelError(fmt::format("activation '{}' is not supported", name));
  }
  return a;
}

class RecurrentKernel : public rt::OpKernel {
 public:
  RecurrentKernel(const rt::KernelInfo& info, Cell cell) : cell_(cell) {
    gates_ = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
    const int per_dir = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3;
    std::string dir = info.get_string("direction", "forward");
    if (dir == "forward" || dir == "foward") {
      dirs_ = 1;
    } else if (dir == "reverse") {
      dirs_ = 1;
      reverse_only_ = true;
    } else if (dir == "bidirectional") {
      dirs_ = 2;
    } else {
      throw rt::KernelError(fmt::format("direction '{}' is not forward, reverse or bidirectional", dir));
    }
    hidden_attr_ = info.has_attr("hidden_size") ? info.get_int("hidden_size") : -1;
    if (info.has_attr("hidden_size") && hidden_attr_ <= 0)
      throw rt::KernelError(fmt::format("hidden_size must be positive, got {}", hidden_attr_));
    if (info.has_attr("clip")) {
      clip_ = info.get_float("clip");
      if (!(clip_ > 0)) throw rt::KernelError(fmt::format("clip must be positive, got {}", clip_));
    }
    layout_ = info.has_attr("layout") ? info.get_int("layout") : 0;
    if (layout_ != 0 && layout_ != 1)
      throw rt::KernelError(fmt::format("layout must be 0 or 1, got {}", layout_));
    linear_before_reset_ = cell == Cell::kGru && info.get_int("linear_before_reset", 0) != 0;
    input_forget_ = cell == Cell::kLstm && info.get_int("input_forget", 0) != 0;
    parse_activations(info, per_dir);
  }

  void compute(rt::KernelContext& ctx) const override;

 private:
  void parse_activations(const rt::KernelInfo& info, int per_dir) {
    std::vector<std::string> names;
    if (info.has_attr("activations")) names = info.get_strings("activations");
    if (names.empty()) {
      if (cell_ == Cell::kRnn) names = {"Tanh"};
      if (cell_ == Cell::kGru) names = {"Sigmoid", "Tanh"};
      if (cell_ == Cell::kLstm) names = {"Sigmoid", "Tanh", "Tanh"};
    }
    const size_t want = static_cast<size_t>(per_dir * dirs_);
    if (names.size() == static_cast<size_t>(per_dir) && dirs_ == 2) {
      const std::vector<std::string> one = names;  // the same functions for both directions
      names.insert(names.end(), one.begin(), one.end());
    }
    if (names.size() < want)
      throw rt::KernelError(
          fmt::format("activations has {} functions; {} direction(s) need {}", names.size(), dirs_, want));
    names.resize(want);  // RNN's default lists two even for one direction
    std::vector<float> alphas = info.get_floats("activation_alpha", {});
    std::vector<float> betas = info.get_floats("activation_beta", {});
    size_t ai = 0, bi = 0;
    for (const std::string& n : names) acts_.push_back(parse_activation(n, alphas, betas, ai, bi));
  }

  double clip(double v) const {
    return clip_ > 0 ? std::clamp(v, -static_cast<double>(clip_), static_cast<double>(clip_)) : v;
  }

  // One direction's parameters (rows of W, R, B and P) and activations.
  struct Direction {
    const double *w, *r, *wb, *rb, *p;  // wb, rb, p may be null
    const Activation* act;
  };
  // Per-chain buffers: gx = x W^T + Wb and gr = h R^T + Rb for every gate row, the next state.
  struct Scratch {
    std::vector<double> gx, gr, next, z, r;
  };

  // Advances one chain by one step: h (and c for LSTM) become the state after input xt.
  void step(const Direction& d, const double* xt, int64_t input, int64_t hidden, std::vector<double>& h,
            std::vector<double>& c, Scratch& s) const;
  void gru_gates(const Direction& d, int64_t hidden, const std::vector<double>& h, Scratch& s) const;
  void lstm_gates(const Direction& d, int64_t hidden, std::vector<double>& c, Scratch& s) const;

  Cell cell_;
  int64_t gates_ = 1, dirs_ = 1, hidden_attr_ = -1, layout_ = 0;
  bool reverse_only_ = false, linear_before_reset_ = false, input_forget_ = false;
  float clip_ = 0;
  std::vector<Activation> acts_;
};

inline void RecurrentKernel::compute(rt::KernelContext& ctx) const {
  enum In { kX, kW, kR, kB, kSeqLens, kInitH, kInitC, kP };
  const rt::Tensor& x = ctx.input(kX);
  const rt::Tensor& w = ctx.input(kW);
  const rt::Tensor& r = ctx.input(kR);
  refk::require_float(x, "X");
  if (w.dtype() != x.dtype() || r.dtype() != x.dtype()) ctx.fail("X, W and R must share an element type");
  if (x.rank() != 3) ctx.fail(fmt::format("X must be 3-D, got {}", rt::shape_str(x.shape())));
  const int64_t seq = layout_ == 0 ? x.dim(0) : x.dim(1);
  const int64_t batch = layout_ == 0 ? x.dim(1) : x.dim(0);
  const int64_t input = x.dim(2);
  if (r.rank() != 3) ctx.fail(fmt::format("R must be 3-D, got {}", rt::shape_str(r.shape())));
  const int64_t hidden = hidden_attr_ > 0 ? hidden_attr_ : r.dim(2);
  const int64_t gh = gates_ * hidden;
  if (w.shape() != rt::Shape{dirs_, gh, input})
    ctx.fail(fmt::format("W {} must be [{}, {}, {}]", rt::shape_str(w.shape()), dirs_, gh, input));
  if (r.shape() != rt::Shape{dirs_, gh, hidden})
    ctx.fail(fmt::format("R {} must be [{}, {}, {}]", rt::shape_str(r.shape()), dirs_, gh, hidden));

  auto optional = [&](int i, const rt::Shape& shape, const char* what) -> std::vector<double> {
    const rt::Tensor* t = ctx.optional_input(i);
    if (!t) return {};
    if (t->dtype() != x.dtype()) ctx.fail(fmt::format("{} must have the element type of X", what));
    if (t->shape() != shape)
      ctx.fail(fmt::format("{} {} must be {}", what, rt::shape_str(t->shape()), rt::shape_str(shape)));
    return refk::to_doubles(*t, what);
  };
  const rt::Shape state_shape =
      layout_ == 0 ? rt::Shape{dirs_, batch, hidden} : rt::Shape{batch, dirs_, hidden};
  std::vector<double> bias = optional(kB, {dirs_, 2 * gh}, "B");
  std::vector<double> init_h = optional(kInitH, state_shape, "initial_h");
  std::vector<double> init_c =
      cell_ == Cell::kLstm ? optional(kInitC, state_shape, "initial_c") : std::vector<double>{};
  std::vector<double> peep =
      cell_ == Cell::kLstm ? optional(kP, {dirs_, 3 * hidden}, "P") : std::vector<double>{};
  std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
  if (const rt::Tensor* t = ctx.optional_input(kSeqLens)) {
    if (t->rank() != 1 || t->dim(0) != batch)
      ctx.fail(fmt::format("sequence_lens {} must be [{}]", rt::shape_str(t->shape()), batch));
    lens = t->to_int64_vector();
    for (size_t b = 0; b < lens.size(); ++b)
      if (lens[b] < 0 || lens[b] > seq)
        ctx.fail(fmt::format("sequence_lens[{}] = {} is outside [0, {}]", b, lens[b], seq));
  }
  const std::vector<double> xd = refk::to_doubles(x, "X");
  const std::vector<double> wd = refk::to_doubles(w, "W");
  const std::vector<double> rd = refk::to_doubles(r, "R");

  // Index helpers for the two layouts.
  auto x_at = [&](int64_t t, int64_t b) {
    return &xd[static_cast<size_t>((layout_ == 0 ? t * batch + b : b * seq + t) * input)];
  };
  auto state_at = [&](int64_t d, int64_t b) {
    return static_cast<size_t>((layout_ == 0 ? d * batch + b : b * dirs_ + d) * hidden);
  };
  auto y_at = [&](int64_t t, int64_t d, int64_t b) {
    return static_cast<size_t>((layout_ == 0 ? (t * dirs_ + d) * batch + b : (b * seq + t) * dirs_ + d) *
                               hidden);
  };
  std::vector<double> y(static_cast<size_t>(seq * dirs_ * batch * hidden), 0.0);
  std::vector<double> yh(static_cast<size_t>(dirs_ * batch * hidden), 0.0), yc(yh.size(), 0.0);
  const int per_dir = static_cast<int>(acts_.size() / static_cast<size_t>(dirs_));

  ctx.threads().parallel_for(dirs_ * batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> h(hidden), c(hidden);
    Scratch scratch{std::vector<double>(gh), std::vector<double>(gh), std::vector<double>(hidden),
                    std::vector<double>(hidden), std::vector<double>(hidden)};
    for (int64_t db = begin; db < end; ++db) {
      const int64_t d = db / batch, b = db % batch;
      const bool reverse = reverse_only_ || d == 1;
      Direction dir;
      dir.act = &acts_[static_cast<size_t>(d * per_dir)];
      dir.w = &wd[static_cast<size_t>(d * gh * input)];
      dir.r = &rd[static_cast<size_t>(d * gh * hidden)];
      dir.wb = bias.empty() ? nullptr : &bias[static_cast<size_t>(d * 2 * gh)];
      dir.rb = bias.empty() ? nullptr : dir.wb + gh;
      dir.p = peep.empty() ? nullptr : &peep[static_cast<size_t>(d * 3 * hidden)];
      const size_t so = state_at(d, b);
      for (int64_t j = 0; j < hidden; ++j) {
        h[j] = init_h.empty() ? 0.0 : init_h[so + j];
        c[j] = init_c.empty() ? 0.0 : init_c[so + j];
      }
      for (int64_t n = 0; n < lens[b]; ++n) {
        const int64_t t = reverse ? lens[b] - 1 - n : n;
        step(dir, x_at(t, b), input, hidden, h, c, scratch);
        std::copy(h.begin(), h.end(), y.begin() + static_cast<std::ptrdiff_t>(y_at(t, d, b)));
      }
      std::copy(h.begin(), h.end(), yh.begin() + static_cast<std::ptrdiff_t>(so));
      std::copy(c.begin(), c.end(), yc.begin() + static_cast<std::ptrdiff_t>(so));
    }
  });

  const int y_index = 0, yh_index = 1, yc_index = 2;
  if (ctx.wants_output(y_index)) {
    rt::Shape ys = layout_ == 0 ? rt::Shape{seq, dirs_, batch, hidden} : rt::Shape{batch, seq, dirs_, hidden};
    refk::store_doubles(ctx.output(y_index, x.dtype(), ys), y, "Y");
  }
  if (ctx.wants_output(yh_index))
    refk::store_doubles(ctx.output(yh_index, x.dtype(), state_shape), yh, "Y_h");
  if (cell_ == Cell::kLstm && ctx.wants_output(yc_index))
    refk::store_doubles(ctx.output(yc_index, x.dtype(), state_shape), yc, "Y_c");
}

inline void RecurrentKernel::step(const Direction& d, const double* xt, int64_t input, int64_t hidden,
                                  std::vector<double>& h, std::vector<double>& c, Scratch& s) const {
  const int64_t gh = gates_ * hidden;
  for (int64_t g = 0; g < gh; ++g) {
    double ax = d.wb ? d.wb[g] : 0.0, ar = d.rb ? d.rb[g] : 0.0;
    for (int64_t k = 0; k < input; ++k) ax += xt[k] * d.w[g * input + k];
    for (int64_t k = 0; k < hidden; ++k) ar += h[k] * d.r[g * hidden + k];
    s.gx[g] = ax;
    s.gr[g] = ar;
  }
  if (cell_ == Cell::kRnn) {
    for (int64_t j = 0; j < hidden; ++j) s.next[j] = d.act[0](clip(s.gx[j] + s.gr[j]));
  } else if (cell_ == Cell::kGru) {
    gru_gates(d, hidden, h, s);
  } else {
    lstm_gates(d, hidden, c, s);
  }
  std::copy(s.next.begin(), s.next.end(), h.begin());
}

// Gates z, r, h: H = (1 - z) h~ + z H_prev.
inline void RecurrentKernel::gru_gates(const Direction& d, int64_t hidden, const std::vector<double>& h,
                                       Scratch& s) const {
  // z and r first: the default hidden gate reads the reset-scaled state r . h.
  for (int64_t j = 0; j < hidden; ++j) {
    s.z[j] = d.act[0](clip(s.gx[j] + s.gr[j]));
    s.r[j] = d.act[0](clip(s.gx[hidden + j] + s.gr[hidden + j]));
  }
  for (int64_t j = 0; j < hidden; ++j) {
    double rec;
    if (linear_before_reset_) {
      rec = s.r[j] * s.gr[2 * hidden + j];  // r . (H_prev R_h^T + Rb_h)
    } else {
      rec = d.rb ? d.rb[2 * hidden + j] : 0.0;  // (r . H_prev) R_h^T + Rb_h
      for (int64_t k = 0; k < hidden; ++k) rec += s.r[k] * h[k] * d.r[(2 * hidden + j) * hidden + k];
    }
    const double candidate = d.act[1](clip(s.gx[2 * hidden + j] + rec));
    s.next[j] = (1 - s.z[j]) * candidate + s.z[j] * h[j];
  }
}

// Gates i, o, f, c with peepholes: C = f . C_prev + i . c~, H = o . h(C); input_forget couples f = 1 - i.
inline void RecurrentKernel::lstm_gates(const Direction& d, int64_t hidden, std::vector<double>& c,
                                        Scratch& s) const {
  for (int64_t j = 0; j < hidden; ++j) {
    const double pi = d.p ? d.p[j] : 0.0, po = d.p ? d.p[hidden + j] : 0.0,
                 pf = d.p ? d.p[2 * hidden + j] : 0.0;
    const double i = d.act[0](clip(s.gx[j] + s.gr[j] + pi * c[j]));
    const double f =
        input_forget_ ? 1 - i : d.act[0](clip(s.gx[2 * hidden + j] + s.gr[2 * hidden + j] + pf * c[j]));
    const double candidate = d.act[1](clip(s.gx[3 * hidden + j] + s.gr[3 * hidden + j]));
    c[j] = f * c[j] + i * candidate;
    const double o = d.act[0](clip(s.gx[hidden + j] + s.gr[hidden + j] + po * c[j]));
    s.next[j] = o * d.act[2](c[j]);
  }
}

}  // namespace tessera::ops::recurrent
