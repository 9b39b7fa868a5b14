// Reference kernel of TfIdfVectorizer. The pool lists the n-grams to count: pool[ngram_counts[i] ..
// ngram_counts[i+1]) holds the (i+1)-grams back to back, and the j-th n-gram of the pool (counting all
// sizes in order) is counted into output column ngram_indexes[j]. An n-gram of size n >= 2 is n tokens
// of one row spaced `skip + 1` apart, for each skip in [0, max_skip_count]; each (start, skip) pair
// counts once, and unigrams count once per position. Only sizes in [min_gram_length, max_gram_length]
// count. Mode TF gives the counts, IDF the weight of every n-gram seen, TFIDF count times weight.
#include <fmt/format.h>

#include <map>

#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::KernelError;
using tessera::rt::Tensor;

class TfIdfVectorizer : public tessera::rt::OpKernel {
 public:
  explicit TfIdfVectorizer(const tessera::rt::KernelInfo& info) {
    std::string mode = info.get_string("mode");
    if (mode == "TF") {
      mode_ = Mode::kTf;
    } else if (mode == "IDF") {
      mode_ = Mode::kIdf;
    } else if (mode == "TFIDF") {
      mode_ = Mode::kTfIdf;
    } else {
      throw KernelError(fmt::format("attribute 'mode' is '{}'; expected TF, IDF or TFIDF", mode));
    }
    min_n_ = info.get_int("min_gram_length");
    max_n_ = info.get_int("max_gram_length");
    max_skip_ = info.get_int("max_skip_count");
    if (min_n_ < 1 || max_n_ < min_n_)
      throw KernelError(fmt::format("gram lengths [{}, {}] must satisfy 1 <= min <= max", min_n_, max_n_));
    if (max_skip_ < 0)
      throw KernelError(fmt::format("attribute 'max_skip_count' is {}; must be >= 0", max_skip_));
    strings_ = info.has_attr("pool_strings");
    if (strings_ == info.has_attr("pool_int64s"))
      throw KernelError("exactly one of the attributes 'pool_strings' and 'pool_int64s' must be given");
    indexes_ = info.get_ints("ngram_indexes");
    weights_ = info.get_floats("weights", std::vector<float>(indexes_.size(), 1.0f));
    if (weights_.size() != indexes_.size())
      throw KernelError(fmt::format("attribute 'weights' has {} values but 'ngram_indexes' has {}",
                                    weights_.size(), indexes_.size()));
    for (int64_t ix : indexes_) {
      if (ix < 0) throw KernelError(fmt::format("attribute 'ngram_indexes' holds {}; must be >= 0", ix));
      width_ = std::max(width_, ix + 1);
    }
    if (strings_)
      build_pool(info.get_strings("pool_strings"), info.get_ints("ngram_counts"), str_pool_);
    else
      build_pool(info.get_ints("pool_int64s"), info.get_ints("ngram_counts"), int_pool_);
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    bool ok = strings_ ? x.dtype() == DataType::kString
                       : (x.dtype() == DataType::kInt32 || x.dtype() == DataType::kInt64);
    if (!ok)
      ctx.fail(fmt::format("input 'X' is {} but the pool holds {}", tessera::ir::dtype_name(x.dtype()),
                           strings_ ? "strings" : "integers"));
    if (x.rank() != 1 && x.rank() != 2)
      ctx.fail(fmt::format("input 'X' must be [C] or [N, C], got {}", tessera::rt::shape_str(x.shape())));
    int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
    int64_t cols = x.rank() == 2 ? x.dim(1) : x.dim(0);
    Tensor& y = ctx.output(0, DataType::kFloat,
                           x.rank() == 2 ? tessera::rt::Shape{rows, width_} : tessera::rt::Shape{width_});
    float* out = y.data<float>();
    std::fill(out, out + y.numel(), 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int64_t> counts(indexes_.size(), 0);
      if (strings_) {
        count_row(x.data<std::string>() + r * cols, cols, str_pool_, counts);
      } else if (x.dtype() == DataType::kInt32) {
        std::vector<int64_t> row(x.data<int32_t>() + r * cols, x.data<int32_t>() + (r + 1) * cols);
        count_row(row.data(), cols, int_pool_, counts);
      } else {
        count_row(x.data<int64_t>() + r * cols, cols, int_pool_, counts);
      }
      for (size_t j = 0; j < counts.size(); ++j) {
        if (counts[j] == 0) continue;
        float v = mode_ == Mode::kTf    ? static_cast<float>(counts[j])
                  : mode_ == Mode::kIdf ? weights_[j]
                                        : static_cast<float>(counts[j]) * weights_[j];
        out[r * width_ + indexes_[j]] += v;
      }
    }
  }

 private:
  enum class Mode { kTf, kIdf, kTfIdf };
  template <class T>
  using Pool = std::map<std::vector<T>, size_t>;  // n-gram -> its index j in pool order

  template <class T>
  void build_pool(const std::vector<T>& pool, const std::vector<int64_t>& starts, Pool<T>& out) {
    size_t j = 0;
    auto total = static_cast<int64_t>(pool.size());
    for (size_t i = 0; i < starts.size(); ++i) {
      int64_t b = starts[i], e = i + 1 < starts.size() ? starts[i + 1] : total;
      auto n = static_cast<int64_t>(i + 1);
      if (b < 0 || e < b || e > total)
        throw KernelError(fmt::format(
            "attribute 'ngram_counts' value {} is out of order or past the pool of {}", b, total));
      if ((e - b) % n != 0)
        throw KernelError(
            fmt::format("the pool's {}-gram segment has {} entries, not a multiple of {}", n, e - b, n));
      for (int64_t k = b; k < e; k += n) {
        if (j >= indexes_.size())
          throw KernelError(
              fmt::format("the pool holds more n-grams than the {} in 'ngram_indexes'", indexes_.size()));
        out.emplace(std::vector<T>(pool.begin() + k, pool.begin() + k + n), j++);
        max_pool_n_ = std::max(max_pool_n_, n);
      }
    }
    if (j != indexes_.size())
      throw KernelError(
          fmt::format("the pool holds {} n-grams but 'ngram_indexes' has {}", j, indexes_.size()));
  }

  template <class T>
  void count_row(const T* row, int64_t cols, const Pool<T>& pool, std::vector<int64_t>& counts) const {
    int64_t hi = std::min(max_n_, max_pool_n_);
    std::vector<T> gram;
    for (int64_t n = min_n_; n <= hi; ++n) {
      int64_t skips = n == 1 ? 0 : max_skip_;
      for (int64_t skip = 0; skip <= skips; ++skip) {
        int64_t step = skip + 1;
        for (int64_t start = 0; start + (n - 1) * step < cols; ++start) {
          gram.clear();
          for (int64_t k = 0; k < n; ++k) gram.push_back(row[start + k * step]);
          auto it = pool.find(gram);
          if (it != pool.end()) ++counts[it->second];
        }
      }
    }
  }

  Mode mode_ = Mode::kTf;
  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0, max_pool_n_ = 0, width_ = 0;
  bool strings_ = false;
  std::vector<int64_t> indexes_;
  std::vector<float> weights_;
  Pool<int64_t> int_pool_;
  Pool<std::string> str_pool_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(string_tfidf_vectorizer) {
  reg.add(tessera::rt::KernelDef::of<TfIdfVectorizer>("TfIdfVectorizer"));
}
