#include "backends/cpu/dnnl_conv_util.h"

#include <atomic>

namespace tessera::cpu {

WindowAttrs WindowAttrs::read(const rt::KernelInfo& info) {
  WindowAttrs a;
  a.auto_pad = info.get_string("auto_pad", "NOTSET");
  a.kernel = info.get_ints("kernel_shape", {});
  a.dilations = info.get_ints("dilations", {});
  a.strides = info.get_ints("strides", {});
  a.pads = info.get_ints("pads", {});
  a.ceil_mode = info.get_int("ceil_mode", 0) != 0;
  return a;
}

std::optional<WindowGeometry> window_geometry(const WindowAttrs& a, const std::vector<int64_t>& in,
                                              const std::vector<int64_t>& kernel) {
  size_t sp = in.size();
  if (kernel.size() != sp) return std::nullopt;
  WindowGeometry g;
  for (size_t i = 0; i < sp; ++i) {
    int64_t k = kernel[i];
    int64_t s = a.strides.size() == sp ? a.strides[i] : 1;
    int64_t d = a.dilations.size() == sp ? a.dilations[i] : 1;
    if (s < 1 || d < 1 || k < 1 || k > in[i] + 1024) return std::nullopt;
    int64_t ek = d * (k - 1) + 1;
    int64_t pb = 0, pe = 0, out;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      out = (in[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in[i]);
      pb = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      if (a.auto_pad == "NOTSET" && a.pads.size() == 2 * sp) {
        pb = a.pads[i];
        pe = a.pads[i + sp];
      }
      if (pb < 0 || pe < 0 || pb > 1024 || pe > 1024) return std::nullopt;
      int64_t span = in[i] + pb + pe - ek;
      if (span < 0) return std::nullopt;
      out = span / s + 1;
      if (a.ceil_mode && span % s != 0) {
        // ONNX drops a last window that would start in the end padding; oneDNN sees it as more padding.
        if ((out)*s < in[i] + pb) ++out;
        pe = (out - 1) * s + ek - in[i] - pb;
      }
    }
    if (out < 1 || pb < 0 || pe < 0) return std::nullopt;
    g.strides.push_back(s);
    g.dilates.push_back(d - 1);
    g.pad_l.push_back(pb);
    g.pad_r.push_back(pe);
    g.out.push_back(out);
  }
  return g;
}

namespace {
std::atomic<int64_t> g_conv_primitives{0};
}  // namespace

dnnl::convolution_forward make_conv_primitive(const dnnl::convolution_forward::primitive_desc& pd) {
  g_conv_primitives.fetch_add(1, std::memory_order_relaxed);
  return dnnl::convolution_forward(pd);
}

int64_t conv_primitives_created() {
  return g_conv_primitives.load(std::memory_order_relaxed);
}

}  // namespace tessera::cpu
