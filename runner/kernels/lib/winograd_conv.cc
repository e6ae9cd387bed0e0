#include "kernels/lib/winograd_conv.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "kernels/lib/cpu_isa.h"

namespace graphrun {

using dnnl::memory;
constexpr memory::data_type kF32 = memory::data_type::f32;

namespace {

constexpr int64_t kTaps = 16;  // a 4x4 patch in, 16 products per channel pair, a 2x2 block out

// What a transform needs to place its tiles: tile t of the run (image n, tile
// row ty, tile column tx) reads the patch at rows 2 * ty - top, columns
// 2 * tx - left, and writes output rows 2 * ty, 2 * ty + 1 (those below oh).
struct Tiles {
  int64_t h = 0, w = 0, c = 0, k = 0;      // input height, width, channels; output channels
  int64_t oh = 0, ow = 0, top = 0, left = 0;
  int64_t rows = 0, cols = 0;              // tiles per image, down and across
  const float* zeros = nullptr;            // c zeros: the patch's taps in the padding
};

typedef float F32x4 __attribute__((vector_size(16)));
typedef float F32x8 __attribute__((vector_size(32)));
typedef float F32x16 __attribute__((vector_size(64)));

// The helpers are always inlined into three entry points, each compiled for
// its own instruction set with a vector type one register wide (as
// window_max.cc's); the channels left over take the same code on one float.
// There are no multiplies, so every form rounds alike.
#define GRAPHRUN_INLINE inline __attribute__((always_inline))

// Vectors go in and out by reference: passed or returned by value, GCC and
// clang warn that the ABI depends on the instruction set (-Wpsabi).
template <class V>
GRAPHRUN_INLINE void load(V& v, const float* p) {
  std::memcpy(&v, p, sizeof(V));
}

template <class V>
GRAPHRUN_INLINE void store(float* p, const V& v) {
  std::memcpy(p, &v, sizeof(V));
}

// One lane group of one tile's patch: v[tap * stride] = (B^T d B)[tap], with
// B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]].
// `check` gathers v - v, NaN wherever a value is not finite.
template <class V>
GRAPHRUN_INLINE void patch_in(const float* const* taps, int64_t ch, float* v, int64_t stride, V& check) {
  V d[16], t[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) load(d[i], taps[i] + ch);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    t[j] = d[j] - d[8 + j];
    t[4 + j] = d[4 + j] + d[8 + j];
    t[8 + j] = d[8 + j] - d[4 + j];
    t[12 + j] = d[4 + j] - d[12 + j];
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const V r[4] = {t[4 * i] - t[4 * i + 2], t[4 * i + 1] + t[4 * i + 2], t[4 * i + 2] - t[4 * i + 1],
                    t[4 * i + 1] - t[4 * i + 3]};
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      store<V>(v + (4 * i + j) * stride + ch, r[j]);
      check += r[j] - r[j];
    }
  }
}

// One lane group of one tile's products back to its 2x2 block: A^T m A with
// A^T = [[1, 1, 1, 0], [0, 1, -1, -1]], plus the bias, then the activation;
// only the pixels inside the output are written.
template <class V>
GRAPHRUN_INLINE void patch_out(const float* m, int64_t stride, int64_t ch, const float* bias, Activation activation,
                               float* const* out, V& check) {
  V p[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) load(p[i], m + i * stride + ch);
  V s[8];
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    s[j] = p[j] + p[4 + j] + p[8 + j];
    s[4 + j] = p[4 + j] - p[8 + j] - p[12 + j];
  }
  const V zero = {};
  const V six = zero + 6.0f;
  V b = zero;
  if (bias) load(b, bias + ch);
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i) {
    V y[2] = {s[4 * i] + s[4 * i + 1] + s[4 * i + 2], s[4 * i + 1] - s[4 * i + 2] - s[4 * i + 3]};
#pragma GCC unroll 2
    for (int j = 0; j < 2; ++j) {
      if (bias) y[j] = y[j] + b;
      check += y[j] - y[j];
      if (activation != Activation::kNone) y[j] = y[j] > zero ? y[j] : zero;
      if (activation == Activation::kRelu6) y[j] = y[j] < six ? y[j] : six;
      if (out[2 * i + j]) store<V>(out[2 * i + j] + ch, y[j]);
    }
  }
}

template <class V>
GRAPHRUN_INLINE bool all_finite(const V& check) {
  constexpr int kLanes = sizeof(V) / sizeof(float);
  float lanes[kLanes];
  std::memcpy(lanes, &check, sizeof(V));
  for (float f : lanes) {
    if (f != f) return false;
  }
  return true;
}

// Tiles [first, last) of the chunk that starts at tile `base` into
// v [16][chunk][c]. False when some value is not finite.
template <class V>
GRAPHRUN_INLINE bool tiles_in(const Tiles& g, const float* x, int64_t base, int64_t chunk, int64_t first, int64_t last,
                              float* v) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(float);
  V check = {};
  float scalar_check = 0.0f;
  const int64_t per_image = g.rows * g.cols, stride = chunk * g.c;
  for (int64_t t = first; t < last; ++t) {
    const int64_t tile = base + t, n = tile / per_image, r = tile % per_image;
    const int64_t y0 = 2 * (r / g.cols) - g.top, x0 = 2 * (r % g.cols) - g.left;
    const float* taps[16];
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t yy = y0 + i, xx = x0 + j;
        const bool inside = yy >= 0 && yy < g.h && xx >= 0 && xx < g.w;
        taps[4 * i + j] = inside ? x + ((n * g.h + yy) * g.w + xx) * g.c : g.zeros;
      }
    }
    float* tile_v = v + t * g.c;
    int64_t ch = 0;
    for (; ch + kLanes <= g.c; ch += kLanes) patch_in<V>(taps, ch, tile_v, stride, check);
    for (; ch < g.c; ++ch) patch_in<float>(taps, ch, tile_v, stride, scalar_check);
  }
  return all_finite(check) && scalar_check == 0.0f;
}

// Tiles [first, last) of the chunk from m [16][chunk][k] into y. False when
// some value before the activation is not finite.
template <class V>
GRAPHRUN_INLINE bool tiles_out(const Tiles& g, const float* m, int64_t base, int64_t chunk, int64_t first, int64_t last,
                               const float* bias, Activation activation, float* y) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(float);
  V check = {};
  float scalar_check = 0.0f;
  const int64_t per_image = g.rows * g.cols, stride = chunk * g.k;
  for (int64_t t = first; t < last; ++t) {
    const int64_t tile = base + t, n = tile / per_image, r = tile % per_image;
    const int64_t y0 = 2 * (r / g.cols), x0 = 2 * (r % g.cols);
    float* out[4];
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t yy = y0 + i, xx = x0 + j;
        out[2 * i + j] = yy < g.oh && xx < g.ow ? y + ((n * g.oh + yy) * g.ow + xx) * g.k : nullptr;
      }
    }
    const float* tile_m = m + t * g.k;
    int64_t ch = 0;
    for (; ch + kLanes <= g.k; ch += kLanes) patch_out<V>(tile_m, stride, ch, bias, activation, out, check);
    for (; ch < g.k; ++ch) patch_out<float>(tile_m, stride, ch, bias, activation, out, scalar_check);
  }
  return all_finite(check) && scalar_check == 0.0f;
}

// The entry points, one per instruction set, picked once by own_kernel_isa()
// (so GRAPHRUN_CC_NO_AVX2 tests the SSE form).
struct Transforms {
  bool (*in)(const Tiles&, const float*, int64_t, int64_t, int64_t, int64_t, float*);
  bool (*out)(const Tiles&, const float*, int64_t, int64_t, int64_t, int64_t, const float*, Activation, float*);
};

__attribute__((target("avx512f"))) bool in_avx512(const Tiles& g, const float* x, int64_t base, int64_t chunk,
                                                  int64_t first, int64_t last, float* v) {
  return tiles_in<F32x16>(g, x, base, chunk, first, last, v);
}
__attribute__((target("avx512f"))) bool out_avx512(const Tiles& g, const float* m, int64_t base, int64_t chunk,
                                                   int64_t first, int64_t last, const float* bias,
                                                   Activation activation, float* y) {
  return tiles_out<F32x16>(g, m, base, chunk, first, last, bias, activation, y);
}
__attribute__((target("avx2"))) bool in_avx2(const Tiles& g, const float* x, int64_t base, int64_t chunk, int64_t first,
                                             int64_t last, float* v) {
  return tiles_in<F32x8>(g, x, base, chunk, first, last, v);
}
__attribute__((target("avx2"))) bool out_avx2(const Tiles& g, const float* m, int64_t base, int64_t chunk,
                                              int64_t first, int64_t last, const float* bias, Activation activation,
                                              float* y) {
  return tiles_out<F32x8>(g, m, base, chunk, first, last, bias, activation, y);
}
bool in_sse(const Tiles& g, const float* x, int64_t base, int64_t chunk, int64_t first, int64_t last, float* v) {
  return tiles_in<F32x4>(g, x, base, chunk, first, last, v);
}
bool out_sse(const Tiles& g, const float* m, int64_t base, int64_t chunk, int64_t first, int64_t last,
             const float* bias, Activation activation, float* y) {
  return tiles_out<F32x4>(g, m, base, chunk, first, last, bias, activation, y);
}

const Transforms& transforms() {
  static const Transforms chosen = [] {
    switch (own_kernel_isa()) {
      case CpuIsa::kAvx512: return Transforms{in_avx512, out_avx512};
      case CpuIsa::kAvx2: return Transforms{in_avx2, out_avx2};
      default: return Transforms{in_sse, out_sse};
    }
  }();
  return chosen;
}

bool winograd_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("GRAPHRUN_CC_WINOGRAD");
    return !(value && std::string(value) == "0");
  }();
  return enabled;
}

// The transformed products of a chunk stay within about this many floats
// each way (4 MiB): they are written and read back at once, in cache,
// rather than streamed through memory whole.
constexpr int64_t kChunkFloats = int64_t{1} << 20;

// U [16][c][k] = G g G^T for each channel pair, in float64 and rounded once,
// with G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]];
// g is TF's filter [3][3][c][k].
std::vector<float> transform_filter(const float* filter, int64_t c, int64_t k) {
  static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  std::vector<float> u(static_cast<std::size_t>(kTaps * c * k));
  parallel_for(c, 150.0 * static_cast<double>(c * k), [&](int64_t first, int64_t last) {
    std::vector<double> gg(static_cast<std::size_t>(4 * 3 * k));  // (G g)[a][j][:] for one input channel
    for (int64_t ci = first; ci < last; ++ci) {
      std::fill(gg.begin(), gg.end(), 0.0);
      for (int a = 0; a < 4; ++a) {
        for (int i = 0; i < 3; ++i) {
          if (G[a][i] == 0) continue;
          for (int j = 0; j < 3; ++j) {
            const float* row = filter + ((i * 3 + j) * c + ci) * k;
            double* into = gg.data() + (a * 3 + j) * k;
            for (int64_t o = 0; o < k; ++o) into[o] += G[a][i] * row[o];
          }
        }
      }
      for (int a = 0; a < 4; ++a) {
        for (int b = 0; b < 4; ++b) {
          float* into = u.data() + ((a * 4 + b) * c + ci) * k;
          for (int64_t o = 0; o < k; ++o) {
            double sum = 0;
            for (int j = 0; j < 3; ++j) sum += G[b][j] * gg[(a * 3 + j) * k + o];
            into[o] = static_cast<float>(sum);
          }
        }
      }
    }
  });
  return u;
}

// One growing buffer per calling thread, as scratchpad_buffer's: a run's
// chunks are sequential, and one per node would keep every node's alive.
float* thread_buffer(int slot, int64_t floats) {
  thread_local std::vector<float> buffers[2];
  std::vector<float>& buffer = buffers[slot];
  if (static_cast<int64_t>(buffer.size()) < floats) buffer.resize(static_cast<std::size_t>(floats));
  return buffer.data();
}

}  // namespace

// A matmul for chunks of `tiles` tiles, and the transformed filter in its layout.
struct ChunkProduct {
  int64_t tiles = 0;
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul primitive;
  memory filter;
  PrimitiveArgs args;
};

struct WinogradConvolution::Prepared {
  std::vector<int64_t> key;
  bool usable = false;
  Tiles tiles;
  int64_t count = 0, chunk = 0;  // tiles in the run, tiles per chunk (the last may have fewer)
  std::vector<float> zeros;
  ChunkProduct full, last;  // `last` is used when count is not a multiple of chunk
};

namespace {

// The matmul for chunks of `tiles`, with the transformed filter `u` [16][c][k]
// put into its layout, or taken from `same` when that is in the same one.
bool make_product(ChunkProduct& product, int64_t tiles, int64_t c, int64_t k, const std::vector<float>& u,
                  const ChunkProduct* same = nullptr) {
  product.tiles = tiles;
  const memory::desc a({kTaps, tiles, c}, kF32, memory::format_tag::abc);
  const memory::desc b({kTaps, c, k}, kF32, memory::format_tag::any);
  const memory::desc out({kTaps, tiles, k}, kF32, memory::format_tag::abc);
  try {
    product.pd = dnnl::matmul::primitive_desc(dnnl_engine(), a, b, out, strict_attr(Epilogue{}));
    product.primitive = dnnl::matmul(product.pd);
    product.args.add(DNNL_ARG_SRC, product.pd.src_desc());
    product.args.add(DNNL_ARG_DST, product.pd.dst_desc());
    product.args.add_scratchpad(product.pd.scratchpad_desc());
    if (same != nullptr && same->pd.weights_desc() == product.pd.weights_desc()) {
      product.filter = same->filter;
      product.args.set_memory(DNNL_ARG_WEIGHTS, product.filter);
      return true;
    }
    const memory::desc plain({kTaps, c, k}, kF32, memory::format_tag::abc);
    memory user(plain, dnnl_engine(), const_cast<float*>(u.data()));
    product.filter = memory(product.pd.weights_desc(), dnnl_engine());
    dnnl::stream& stream = dnnl_stream();
    dnnl::reorder(user, product.filter).execute(stream, user, product.filter);
    stream.wait();
    product.args.set_memory(DNNL_ARG_WEIGHTS, product.filter);
    return true;
  } catch (const dnnl::error&) {
    return false;  // no matmul for these shapes: the direct convolution serves them
  }
}

}  // namespace

WinogradConvolution::WinogradConvolution(const Epilogue& epilogue) : epilogue_(epilogue) {}
WinogradConvolution::~WinogradConvolution() = default;

bool WinogradConvolution::suits(const ConvShape& s, int64_t groups, int64_t out_channels) const {
  const WindowGeometry& g = s.window;
  const bool activation = epilogue_.activation == Activation::kNone || epilogue_.activation == Activation::kRelu ||
                          epilogue_.activation == Activation::kRelu6;
  if (!winograd_enabled() || !dnnl_enabled() || groups != 1 || epilogue_.residual || !activation) return false;
  if (g.kh != 3 || g.kw != 3 || g.stride_h != 1 || g.stride_w != 1 || g.dilation_h != 1 || g.dilation_w != 1) {
    return false;
  }
  // Padding of 0-2 each side keeps every patch within one tile of the input.
  for (int64_t pad : {g.rows.before, g.rows.after, g.cols.before, g.cols.after}) {
    if (pad < 0 || pad > 2) return false;
  }
  if (s.c < 64 || out_channels < 64 || g.rows.out <= 0 || g.cols.out <= 0 || s.n <= 0) return false;
  const int64_t tiles = s.n * ((g.rows.out + 1) / 2) * ((g.cols.out + 1) / 2);
  return tiles >= 32;
}

WinogradConvolution::Prepared* WinogradConvolution::prepare(const ConvShape& s, int64_t out_channels,
                                                            const float* filter) {
  const WindowGeometry& g = s.window;
  std::vector<int64_t> key = {s.n,           s.h,          s.w,           s.c,         out_channels,
                              g.rows.before, g.rows.after, g.cols.before, g.cols.after};
  if (prepared_ && prepared_->key == key) return prepared_.get();
  auto p = std::make_unique<Prepared>();
  p->key = std::move(key);
  Tiles& t = p->tiles;
  t.h = s.h, t.w = s.w, t.c = s.c, t.k = out_channels;
  t.oh = g.rows.out, t.ow = g.cols.out, t.top = g.rows.before, t.left = g.cols.before;
  t.rows = (t.oh + 1) / 2, t.cols = (t.ow + 1) / 2;
  p->zeros.assign(static_cast<std::size_t>(s.c), 0.0f);
  t.zeros = p->zeros.data();
  p->count = s.n * t.rows * t.cols;
  // Equal chunks under the budget, so the last is not a sliver.
  const int64_t budget = std::max<int64_t>(16, kChunkFloats / (kTaps * std::max(s.c, out_channels)));
  const int64_t chunks = (p->count + budget - 1) / budget;
  p->chunk = (p->count + chunks - 1) / chunks;
  if (!filter_checked_) {
    const int64_t taps = 9 * s.c * out_channels;
    filter_finite_ = std::all_of(filter, filter + taps, [](float w) { return std::isfinite(w); });
    filter_checked_ = true;
  }
  if (filter_finite_) {
    // Transformed again for another input shape (a new batch size) rather than
    // kept plain beside oneDNN's copy, which would hold every filter twice.
    const std::vector<float> u = transform_filter(filter, s.c, out_channels);
    const int64_t rest = p->count - (chunks - 1) * p->chunk;
    p->usable = make_product(p->full, p->chunk, s.c, out_channels, u) &&
                (rest == p->chunk || make_product(p->last, rest, s.c, out_channels, u, &p->full));
  }
  prepared_ = std::move(p);
  return prepared_.get();
}

bool WinogradConvolution::run(const ConvShape& s, int64_t out_channels, const float* x, const float* filter,
                              const float* bias, float* y) {
  if (!suits(s, 1, out_channels)) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  Prepared* p = prepare(s, out_channels, filter);
  if (!p->usable) return false;
  const Tiles& g = p->tiles;
  const Transforms& transform = transforms();
  const float* bias_values = epilogue_.bias ? bias : nullptr;
  float* v = thread_buffer(0, kTaps * p->chunk * g.c);
  float* m = thread_buffer(1, kTaps * p->chunk * g.k);
  for (int64_t base = 0; base < p->count; base += p->chunk) {
    const int64_t tiles = std::min(p->chunk, p->count - base);
    ChunkProduct& product = tiles == p->full.tiles ? p->full : p->last;
    std::atomic<bool> finite{true};
    const double in_work = static_cast<double>(tiles * kTaps * g.c) * 4.0;
    parallel_for(tiles, in_work, [&](int64_t first, int64_t last) {
      if (!transform.in(g, x, base, tiles, first, last, v)) finite = false;
    });
    if (!finite) return false;
    dnnl_call("run a Winograd convolution's products", [&] {
      product.args.point(DNNL_ARG_SRC, v);
      product.args.point(DNNL_ARG_DST, m);
      product.args.run(product.primitive, dnnl_stream());
    });
    const double out_work = static_cast<double>(tiles * kTaps * g.k) * 4.0;
    parallel_for(tiles, out_work, [&](int64_t first, int64_t last) {
      if (!transform.out(g, m, base, tiles, first, last, bias_values, epilogue_.activation, y)) finite = false;
    });
    if (!finite) return false;
  }
  return true;
}

}  // namespace graphrun
