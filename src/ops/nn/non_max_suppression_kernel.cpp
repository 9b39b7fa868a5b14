// Reference kernel of NonMaxSuppression, with ONNX Runtime's conventions: per batch and class, boxes
// scoring above score_threshold (strictly) are taken in decreasing score order (ties: lower box index
// first) and kept unless their IoU with an already kept box exceeds iou_threshold (strictly); at most
// max_output_boxes_per_class are kept (none when it is absent or 0). Corners may come in either order.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

#include "runtime/dispatch.h"

namespace {

namespace rt = tessera::rt;
using rt::KernelContext;
using rt::Tensor;

// A box as [x_min, y_min, x_max, y_max].
using Box = std::array<float, 4>;

Box corners(const float* b, bool center) {
  if (center) {
    const float hw = b[2] / 2, hh = b[3] / 2;
    return {b[0] - hw, b[1] - hh, b[0] + hw, b[1] + hh};
  }
  // [y1, x1, y2, x2], any diagonal.
  return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]), std::max(b[0], b[2])};
}

bool suppresses(const Box& a, const Box& b, float iou_threshold) {
  const float ix = std::max(0.f, std::min(a[2], b[2]) - std::max(a[0], b[0]));
  const float iy = std::max(0.f, std::min(a[3], b[3]) - std::max(a[1], b[1]));
  const float inter = ix * iy;
  if (inter <= 0) return false;
  const float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

class NonMaxSuppression : public rt::OpKernel {
 public:
  explicit NonMaxSuppression(const rt::KernelInfo& info) : center_(info.get_int("center_point_box", 0)) {
    if (center_ != 0 && center_ != 1)
      throw rt::KernelError(fmt::format("center_point_box is {}; it must be 0 or 1", center_));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& boxes = ctx.input(0);
    const Tensor& scores = ctx.input(1);
    if (boxes.dtype() != rt::DataType::kFloat || scores.dtype() != rt::DataType::kFloat)
      ctx.fail("inputs boxes and scores must be float");
    if (boxes.rank() != 3 || boxes.dim(2) != 4)
      ctx.fail("input boxes has shape " + rt::shape_str(boxes.shape()) + "; it must be [batch, boxes, 4]");
    if (scores.rank() != 3 || scores.dim(0) != boxes.dim(0) || scores.dim(2) != boxes.dim(1)) {
      ctx.fail(fmt::format("input scores has shape {}; with boxes {} it must be [{}, classes, {}]",
                           rt::shape_str(scores.shape()), rt::shape_str(boxes.shape()), boxes.dim(0),
                           boxes.dim(1)));
    }
    int64_t max_out = scalar_or(ctx, 2, "max_output_boxes_per_class", 0.0) > 0 ? ctx.input(2).to_int64(0) : 0;
    const float iou = static_cast<float>(scalar_or(ctx, 3, "iou_threshold", 0.0));
    const bool has_score = ctx.has_input(4);
    const float score_threshold = static_cast<float>(scalar_or(ctx, 4, "score_threshold", 0.0));
    if (iou < 0 || iou > 1) ctx.fail(fmt::format("iou_threshold is {}; it must be in [0, 1]", iou));
    const int64_t nb = boxes.dim(0), nc = scores.dim(1), ns = boxes.dim(1);
    max_out = std::min(max_out, ns);
    std::vector<int64_t> selected;
    std::vector<Box> kept;
    std::vector<int64_t> order;
    for (int64_t b = 0; b < nb; ++b) {
      const float* bp = boxes.data<float>() + b * ns * 4;
      for (int64_t c = 0; c < nc && max_out > 0; ++c) {
        const float* sp = scores.data<float>() + (b * nc + c) * ns;
        order.clear();
        for (int64_t i = 0; i < ns; ++i) {
          if (!has_score || sp[i] > score_threshold) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) { return sp[l] > sp[r]; });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          Box box = corners(bp + i * 4, center_ == 1);
          bool drop =
              std::any_of(kept.begin(), kept.end(), [&](const Box& k) { return suppresses(k, box, iou); });
          if (drop) continue;
          kept.push_back(box);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
    Tensor& y = ctx.output(0, rt::DataType::kInt64, {static_cast<int64_t>(selected.size() / 3), 3});
    std::copy(selected.begin(), selected.end(), y.data<int64_t>());
  }

 private:
  static double scalar_or(KernelContext& ctx, size_t i, const char* name, double fallback) {
    const Tensor* t = ctx.optional_input(i);
    if (!t) return fallback;
    if (t->numel() != 1)
      ctx.fail(fmt::format("input {} ('{}') must hold one value, got shape {}", i, name,
                           rt::shape_str(t->shape())));
    return t->to_double(0);
  }

  int64_t center_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_non_max_suppression) {
  reg.add(tessera::rt::KernelDef::of<NonMaxSuppression>("NonMaxSuppression"));
}
