// The pooling kernels against the CPU's reference kernels: ResNet's 3x3 stride-2 max pool, averages with
// and without count_include_pad, ceil_mode, dilations, asymmetric pads, LpPool, 1-D and 3-D windows, and
// the global pools, in float32 and float16 (the ONNX types these operators take).
//
// Error bound: max is exact; sums of K window values carry 2 * K * 2^-23 * sum |x| (float32 on either
// side) and the rounding to the element type: 4 ulps, for float32 divides and powf against the reference's.
#include "conv_test_util.h"

using namespace cuda_test;

namespace {

// ONNX types these operators for float16, float and double only.
constexpr DataType kTypes[] = {DataType::kFloat, DataType::kFloat16};

}  // namespace

TEST_F(CudaBlas, MaxAndAveragePoolWindows) {
  for (DataType t : kTypes) {
    // ResNet-50's max pool after the stem.
    check_pool("MaxPool", {2, 64, 56, 56},
               {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}, t, 9);
    check_pool("AveragePool", {1, 32, 17, 17},
               {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}),
                ir::Attribute::of_int("count_include_pad", 1)},
               t, 9);
    check_pool("AveragePool", {1, 8, 15, 14},
               {ints("kernel_shape", {3, 2}), ints("strides", {2, 2}), ints("pads", {1, 0, 0, 1}),
                ir::Attribute::of_int("ceil_mode", 1)},
               t, 6);
  }
  check_pool("MaxPool", {1, 3, 20, 21},
             {ints("kernel_shape", {3, 3}), ints("dilations", {2, 1}), ir::Attribute::of_int("ceil_mode", 1),
              ints("strides", {3, 2})},
             DataType::kFloat, 9);
  check_pool("MaxPool", {2, 4, 9, 8},
             {ints("kernel_shape", {2, 2}), ir::Attribute::of_string("auto_pad", "SAME_UPPER")},
             DataType::kFloat, 4);
  check_pool("AveragePool", {2, 4, 9, 8},
             {ints("kernel_shape", {4, 4}), ir::Attribute::of_string("auto_pad", "SAME_LOWER"),
              ir::Attribute::of_int("count_include_pad", 1)},
             DataType::kFloat, 16);
  check_pool("MaxPool", {2, 3, 50}, {ints("kernel_shape", {4}), ints("strides", {3})}, DataType::kFloat, 4);
  check_pool("AveragePool", {1, 2, 7, 8, 9},
             {ints("kernel_shape", {2, 3, 2}), ints("pads", {1, 0, 1, 0, 1, 1})}, DataType::kFloat, 12);
  check_pool("LpPool", {1, 5, 12, 13}, {ints("kernel_shape", {3, 3}), ir::Attribute::of_int("p", 3)},
             DataType::kFloat, 9);
}

TEST_F(CudaBlas, GlobalPools) {
  for (DataType t : kTypes) {
    check_pool("GlobalAveragePool", {2, 256, 7, 7}, {}, t, 49);
    check_pool("GlobalMaxPool", {2, 64, 30, 31}, {}, t, 930);
  }
  check_pool("GlobalAveragePool", {1, 3, 224, 224}, {}, DataType::kFloat, 224 * 224);
  check_pool("GlobalLpPool", {1, 6, 5, 7}, {}, DataType::kFloat, 35);
}

// MaxPool's Indices output (both storage orders) and 8-bit integer inputs: exact, so compared exactly.
TEST_F(CudaBlas, MaxPoolIndicesAndIntegerInputs) {
  struct Case {
    DataType t;
    int64_t storage_order;
    bool indices;
  };
  for (Case c : {Case{DataType::kFloat, 0, true}, Case{DataType::kFloat16, 1, true},
                 Case{DataType::kInt8, 0, false}, Case{DataType::kUint8, 0, true}}) {
    rt::Shape xs{2, 3, 11, 9};
    ir::Model m;
    m.ir_version = 8;
    m.opset_imports = {{"", 17}};
    ir::GraphBuilder b(m.graph);
    ir::Shape s;
    for (int64_t d : xs) s.push_back(ir::Dim::of(d));
    std::string x = b.input("x0", ir::Type::tensor(c.t, s));
    auto outs = b.nodes("MaxPool", {x},
                        {ints("kernel_shape", {3, 2}), ints("strides", {2, 2}), ints("pads", {1, 0, 1, 1}),
                         ir::Attribute::of_int("storage_order", c.storage_order)},
                        "op", c.indices ? 2 : 1);
    b.output(outs[0], ir::Type::tensor(c.t));
    if (c.indices) b.output(outs[1], ir::Type::tensor(DataType::kInt64));
    rt::Tensor in = rt::Tensor::zeros(c.t, xs);
    if (c.t == DataType::kInt8 || c.t == DataType::kUint8) {
      for (int64_t i = 0; i < in.numel(); ++i) {
        auto v = static_cast<uint8_t>((i * 37 + 11) % 251);
        if (c.t == DataType::kInt8) in.data<int8_t>()[i] = static_cast<int8_t>(v);
        if (c.t == DataType::kUint8) in.data<uint8_t>()[i] = v;
      }
    } else {
      in = random_tensor(c.t, xs, 41);
    }
    rt::Session gpu(m, {.optimization = rt::OptLevel::kNone,
                        .backend = "cuda",
                        .profile = true,
                        .precision = tessera::passes::Precision::kFp32});
    rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .reference_kernels = true});
    auto g = gpu.run({{"x0", rt::Value(in)}});
    auto r = ref.run({{"x0", rt::Value(in)}});
    bool on_gpu = false;
    for (const auto& ev : gpu.last_stats().events) on_gpu |= ev.node_name == "op" && ev.backend == "cuda";
    EXPECT_TRUE(on_gpu) << type_name(c.t);
    ASSERT_EQ(g.size(), r.size());
    for (size_t o = 0; o < g.size(); ++o) {
      const rt::Tensor &gt = g[o].tensor(), &rt_ = r[o].tensor();
      ASSERT_EQ(gt.shape(), rt_.shape());
      int bad = 0;
      for (int64_t i = 0; i < gt.numel() && bad < 5; ++i) {
        if (gt.to_double(i) == rt_.to_double(i)) continue;
        ++bad;
        ADD_FAILURE() << "MaxPool " << type_name(c.t) << " output " << o << " element " << i << ": cuda "
                      << gt.to_double(i) << ", reference " << rt_.to_double(i);
      }
    }
  }
}
