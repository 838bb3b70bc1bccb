// msl_shim.h: lets the compute subset of the Metal Shading Language that H3
// Studio's shaders use compile as C++17 with clang >= 17, standing in for
// <metal_stdlib>. Compile with -fexcess-precision=16 (half arithmetic rounds
// per operation, as GPU half ALUs do) and -ffp-contract=off (no fused
// multiply-add unless the kernel asks for fma: the Metal backend compiles with
// fast math off).
//
// What it covers: scalar and vector types with Metal's constructors, the
// address-space keywords (erased), math and integer functions, barriers,
// simdgroup reductions/shuffles, relaxed atomics and 8x8 simdgroup matrices.
// `threadgroup` storage declarations are rewritten by the translator into
// per-group arena slots (see msl::tg).
#pragma once
#ifdef MSL_ADDRESS_SPACES
// The address-space check (mslcpu.CheckAddressSpaces) compiles the translated
// library as C++ for OpenCL, where device, constant, threadgroup and thread
// are the address spaces __global, __constant, __local and __private.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION __cl_clang_function_pointers : enable
#pragma OPENCL EXTENSION __cl_clang_variadic_functions : enable
#endif
#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "mslrt.h"

#define __METAL_VERSION__ 310
#define __HAVE_BFLOAT__ 1
#define METAL_FUNC inline __attribute__((always_inline))
#define MSL_SITE ::mslrt::site(__builtin_LINE(), __builtin_COLUMN())

// ------------------------------------------------------------------ constants (metal_math)
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define MAXFLOAT 0x1.fffffep+127f
#define HUGE_VALF __builtin_inff()
#define FLT_MAX 0x1.fffffep+127f
#define FLT_MIN 0x1p-126f
#define FLT_EPSILON 0x1p-23f
#define HALF_MAX ((half)65504.0f)
#define HALF_MIN ((half)6.103515625e-05f)
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_PI_4_F 0.78539816339744830962f
#define M_1_PI_F 0.31830988618379067154f
#define M_2_PI_F 0.63661977236758134308f
#define M_2_SQRTPI_F 1.12837916709551257390f
#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.43429448190325182765f
#define M_LN2_F 0.69314718055994530942f
#define M_LN10_F 2.30258509299404568402f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.70710678118654752440f

// ------------------------------------------------------------------ scalar and vector types
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;
#ifndef MSL_ADDRESS_SPACES  // half is OpenCL's own type there
typedef _Float16 half;
#endif
typedef __bf16 bfloat;

constexpr half operator"" h(long double v) { return (half)v; }
constexpr half operator"" H(long double v) { return (half)v; }

#define MSL_VEC(S)                                                       \
  typedef S S##2 __attribute__((ext_vector_type(2)));                   \
  typedef S S##3 __attribute__((ext_vector_type(3)));                   \
  typedef S S##4 __attribute__((ext_vector_type(4)));
MSL_VEC(char) MSL_VEC(uchar) MSL_VEC(short) MSL_VEC(ushort) MSL_VEC(int) MSL_VEC(uint)
MSL_VEC(long) MSL_VEC(ulong) MSL_VEC(half) MSL_VEC(bfloat) MSL_VEC(float)
#undef MSL_VEC

namespace msl {
template <class T> struct vt { static constexpr int n = 1; using elem = T; static constexpr bool vec = false; };
template <class T, int N> struct vt<T __attribute__((ext_vector_type(N)))> {
  static constexpr int n = N;
  using elem = T;
  static constexpr bool vec = true;
};
template <class T> struct vt<const T> : vt<T> {};

template <class E, class A> METAL_FUNC void put(E* e, int& i, const A& a) {
  if constexpr (vt<A>::vec) {
    for (int k = 0; k < vt<A>::n; k++) e[i++] = (E)a[k];
  } else {
    e[i++] = (E)a;
  }
}
template <class A> constexpr int ncomp() { return vt<std::remove_cv_t<std::remove_reference_t<A>>>::n; }

// make builds a vector the way Metal's constructors do: T4(s) splats, T4(v4)
// converts element by element (a value conversion, never a bit cast), T4(a.xy,
// b, c) concatenates.
template <class V, class... A> METAL_FUNC V make(A... a) {
  using E = typename vt<V>::elem;
  constexpr int N = vt<V>::n;
  E e[N];
  if constexpr (sizeof...(A) == 0) {
    for (int k = 0; k < N; k++) e[k] = E(0);
  } else if constexpr (sizeof...(A) == 1 && (!vt<A>::vec && ...)) {
    for (int k = 0; k < N; k++) e[k] = (E)(a, ...);
  } else {
    static_assert((ncomp<A>() + ...) == N, "wrong number of vector components in a constructor");
    int i = 0;
    (put(e, i, a), ...);
  }
  V v;
  for (int k = 0; k < N; k++) v[k] = e[k];
  return v;
}
}  // namespace msl

// `float4 x;` is left alone; `float4(a, b)` becomes msl::make<float4>(a, b).
#define char2(...) ::msl::make<::char2>(__VA_ARGS__)
#define char3(...) ::msl::make<::char3>(__VA_ARGS__)
#define char4(...) ::msl::make<::char4>(__VA_ARGS__)
#define uchar2(...) ::msl::make<::uchar2>(__VA_ARGS__)
#define uchar3(...) ::msl::make<::uchar3>(__VA_ARGS__)
#define uchar4(...) ::msl::make<::uchar4>(__VA_ARGS__)
#define short2(...) ::msl::make<::short2>(__VA_ARGS__)
#define short3(...) ::msl::make<::short3>(__VA_ARGS__)
#define short4(...) ::msl::make<::short4>(__VA_ARGS__)
#define ushort2(...) ::msl::make<::ushort2>(__VA_ARGS__)
#define ushort3(...) ::msl::make<::ushort3>(__VA_ARGS__)
#define ushort4(...) ::msl::make<::ushort4>(__VA_ARGS__)
#define int2(...) ::msl::make<::int2>(__VA_ARGS__)
#define int3(...) ::msl::make<::int3>(__VA_ARGS__)
#define int4(...) ::msl::make<::int4>(__VA_ARGS__)
#define uint2(...) ::msl::make<::uint2>(__VA_ARGS__)
#define uint3(...) ::msl::make<::uint3>(__VA_ARGS__)
#define uint4(...) ::msl::make<::uint4>(__VA_ARGS__)
#define long2(...) ::msl::make<::long2>(__VA_ARGS__)
#define long3(...) ::msl::make<::long3>(__VA_ARGS__)
#define long4(...) ::msl::make<::long4>(__VA_ARGS__)
#define ulong2(...) ::msl::make<::ulong2>(__VA_ARGS__)
#define ulong3(...) ::msl::make<::ulong3>(__VA_ARGS__)
#define ulong4(...) ::msl::make<::ulong4>(__VA_ARGS__)
#define half2(...) ::msl::make<::half2>(__VA_ARGS__)
#define half3(...) ::msl::make<::half3>(__VA_ARGS__)
#define half4(...) ::msl::make<::half4>(__VA_ARGS__)
#define bfloat2(...) ::msl::make<::bfloat2>(__VA_ARGS__)
#define bfloat3(...) ::msl::make<::bfloat3>(__VA_ARGS__)
#define bfloat4(...) ::msl::make<::bfloat4>(__VA_ARGS__)
#define float2(...) ::msl::make<::float2>(__VA_ARGS__)
#define float3(...) ::msl::make<::float3>(__VA_ARGS__)
#define float4(...) ::msl::make<::float4>(__VA_ARGS__)

// ------------------------------------------------------------------ address spaces and keywords
// Address spaces are erased on the CPU: one flat memory. (Metal rejects mixing
// them; the Apple compiler is the judge of that, not this harness.)
#define kernel
#ifdef MSL_ADDRESS_SPACES
#define device __global
#define constant __constant
#define thread __private
#define threadgroup __local
#else
#define device
#define constant const
#define thread
#define threadgroup
#endif

namespace metal {
using ::msl::vt;
template <class T, int N> using vec = T __attribute__((ext_vector_type(N)));
using std::conditional_t;
using std::enable_if_t;
using std::is_floating_point_v;
using std::is_integral_v;
using std::is_same_v;
using std::is_signed_v;
using std::is_unsigned_v;
using std::remove_cv_t;
using std::remove_reference_t;

// ------------------------------------------------------------------ numeric_limits
template <class T> struct numeric_limits;
template <> struct numeric_limits<float> {
  static constexpr bool is_specialized = true;
  static constexpr float max() { return 0x1.fffffep+127f; }
  static constexpr float lowest() { return -0x1.fffffep+127f; }
  static constexpr float min() { return 0x1p-126f; }
  static constexpr float epsilon() { return 0x1p-23f; }
  static constexpr float infinity() { return __builtin_inff(); }
  static constexpr float quiet_NaN() { return __builtin_nanf(""); }
};
template <> struct numeric_limits<half> {
  static constexpr bool is_specialized = true;
  static constexpr half max() { return (half)65504.0f; }
  static constexpr half lowest() { return (half)-65504.0f; }
  static constexpr half min() { return (half)6.103515625e-05f; }
  static constexpr half epsilon() { return (half)0.0009765625f; }
  static constexpr half infinity() { return (half)__builtin_inff(); }
  static constexpr half quiet_NaN() { return (half)__builtin_nanf(""); }
};
#define MSL_INT_LIMITS(T)                                                                                  \
  template <> struct numeric_limits<T> {                                                                   \
    static constexpr bool is_specialized = true;                                                           \
    static constexpr T max() { return std::is_signed_v<T> ? T((1ull << (sizeof(T) * 8 - 1)) - 1) : T(~0ull); } \
    static constexpr T min() { return std::is_signed_v<T> ? T(1ull << (sizeof(T) * 8 - 1)) : T(0); }         \
    static constexpr T lowest() { return min(); }                                                          \
  };
MSL_INT_LIMITS(char) MSL_INT_LIMITS(uchar) MSL_INT_LIMITS(short) MSL_INT_LIMITS(ushort) MSL_INT_LIMITS(int)
MSL_INT_LIMITS(uint) MSL_INT_LIMITS(long) MSL_INT_LIMITS(ulong)
#undef MSL_INT_LIMITS

// ------------------------------------------------------------------ math (float, half; vectors elementwise)
template <class T> constexpr bool is_fp = std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bfloat>;
template <class V> using fvec_t = std::enable_if_t<vt<V>::vec && is_fp<typename vt<V>::elem>, V>;
template <class V> using anyvec_t = std::enable_if_t<vt<V>::vec, V>;

#define MSL_F1(name, expr)                                                   \
  METAL_FUNC float name(float x) { return expr; }                            \
  METAL_FUNC half name(half x) { return (half)name((float)x); }              \
  template <class V> METAL_FUNC fvec_t<V> name(V v) {                        \
    V r;                                                                     \
    for (int i = 0; i < vt<V>::n; i++) r[i] = name(v[i]);                    \
    return r;                                                                \
  }
MSL_F1(exp, __builtin_expf(x))
MSL_F1(exp2, __builtin_exp2f(x))
MSL_F1(exp10, __builtin_powf(10.0f, x))
MSL_F1(log, __builtin_logf(x))
MSL_F1(log2, __builtin_log2f(x))
MSL_F1(log10, __builtin_log10f(x))
MSL_F1(sqrt, __builtin_sqrtf(x))
MSL_F1(rsqrt, 1.0f / __builtin_sqrtf(x))
MSL_F1(sin, __builtin_sinf(x))
MSL_F1(cos, __builtin_cosf(x))
MSL_F1(tan, __builtin_tanf(x))
MSL_F1(asin, __builtin_asinf(x))
MSL_F1(acos, __builtin_acosf(x))
MSL_F1(atan, __builtin_atanf(x))
MSL_F1(sinh, __builtin_sinhf(x))
MSL_F1(cosh, __builtin_coshf(x))
MSL_F1(tanh, __builtin_tanhf(x))
MSL_F1(floor, __builtin_floorf(x))
MSL_F1(ceil, __builtin_ceilf(x))
MSL_F1(round, __builtin_roundf(x))
MSL_F1(rint, __builtin_rintf(x))
MSL_F1(trunc, __builtin_truncf(x))
MSL_F1(fabs, __builtin_fabsf(x))
MSL_F1(fract, __builtin_fminf(x - __builtin_floorf(x), 0x1.fffffep-1f))
MSL_F1(saturate, __builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f))
MSL_F1(sign, x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x))
#undef MSL_F1

#define MSL_F2(name, expr)                                                           \
  METAL_FUNC float name(float x, float y) { return expr; }                           \
  METAL_FUNC half name(half x, half y) { return (half)name((float)x, (float)y); }    \
  template <class V> METAL_FUNC fvec_t<V> name(V a, V b) {                           \
    V r;                                                                             \
    for (int i = 0; i < vt<V>::n; i++) r[i] = name(a[i], b[i]);                      \
    return r;                                                                        \
  }
MSL_F2(pow, __builtin_powf(x, y))
MSL_F2(powr, __builtin_powf(x, y))
MSL_F2(atan2, __builtin_atan2f(x, y))
MSL_F2(fmin, __builtin_fminf(x, y))
MSL_F2(fmax, __builtin_fmaxf(x, y))
MSL_F2(fmod, __builtin_fmodf(x, y))
MSL_F2(copysign, __builtin_copysignf(x, y))
MSL_F2(step, x < y ? 1.0f : (x == y ? 1.0f : 0.0f))
#undef MSL_F2

METAL_FUNC float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
METAL_FUNC half fma(half a, half b, half c) { return (half)__builtin_fmaf((float)a, (float)b, (float)c); }
METAL_FUNC float sincos(float x, thread float& c) {
  c = __builtin_cosf(x);
  return __builtin_sinf(x);
}

// min/max follow Metal: for floating point they are fmin/fmax (a NaN operand
// yields the other operand).
METAL_FUNC float max(float a, float b) { return __builtin_fmaxf(a, b); }
METAL_FUNC float min(float a, float b) { return __builtin_fminf(a, b); }
METAL_FUNC half max(half a, half b) { return (half)__builtin_fmaxf((float)a, (float)b); }
METAL_FUNC half min(half a, half b) { return (half)__builtin_fminf((float)a, (float)b); }
template <class T, class = std::enable_if_t<std::is_integral_v<T>>> METAL_FUNC T max(T a, T b) { return a > b ? a : b; }
template <class T, class = std::enable_if_t<std::is_integral_v<T>>> METAL_FUNC T min(T a, T b) { return a < b ? a : b; }
template <class V> METAL_FUNC anyvec_t<V> max(V a, V b) {
  V r;
  for (int i = 0; i < vt<V>::n; i++) r[i] = max(a[i], b[i]);
  return r;
}
template <class V> METAL_FUNC anyvec_t<V> min(V a, V b) {
  V r;
  for (int i = 0; i < vt<V>::n; i++) r[i] = min(a[i], b[i]);
  return r;
}
template <class T> METAL_FUNC T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
METAL_FUNC float abs(float x) { return __builtin_fabsf(x); }
METAL_FUNC half abs(half x) { return (half)__builtin_fabsf((float)x); }
METAL_FUNC int abs(int x) { return x < 0 ? -x : x; }
template <class V> METAL_FUNC fvec_t<V> abs(V v) {
  V r;
  for (int i = 0; i < vt<V>::n; i++) r[i] = abs(v[i]);
  return r;
}
template <class T> METAL_FUNC T mix(T a, T b, T t) { return a + (b - a) * t; }
template <class V> METAL_FUNC typename vt<V>::elem dot(V a, V b) {
  typename vt<V>::elem s = 0;
  for (int i = 0; i < vt<V>::n; i++) s += a[i] * b[i];
  return s;
}

template <class T> METAL_FUNC bool isnan(T x) { return x != x; }
template <class T> METAL_FUNC bool isinf(T x) { return __builtin_isinf((float)x); }
template <class T> METAL_FUNC bool isfinite(T x) { return __builtin_isfinite((float)x); }
template <class T> METAL_FUNC bool signbit(T x) { return __builtin_signbit((float)x); }

// select(a, b, c) is c ? b : a.
template <class T> METAL_FUNC std::enable_if_t<!vt<T>::vec, T> select(T a, T b, bool c) { return c ? b : a; }
template <class M> METAL_FUNC bool all(M m) {
  if constexpr (vt<M>::vec) {
    for (int i = 0; i < vt<M>::n; i++)
      if (!m[i]) return false;
    return true;
  } else {
    return m;
  }
}
template <class M> METAL_FUNC bool any(M m) {
  if constexpr (vt<M>::vec) {
    for (int i = 0; i < vt<M>::n; i++)
      if (m[i]) return true;
    return false;
  } else {
    return m;
  }
}

template <class T, class U> METAL_FUNC T as_type(const U& u) {
  static_assert(sizeof(T) == sizeof(U), "as_type: sizes differ");
  return __builtin_bit_cast(T, u);
}
METAL_FUNC uint popcount(uint x) { return __builtin_popcount(x); }
METAL_FUNC uint clz(uint x) { return x ? __builtin_clz(x) : 32; }
METAL_FUNC uint ctz(uint x) { return x ? __builtin_ctz(x) : 32; }
METAL_FUNC uint mulhi(uint a, uint b) { return (uint)(((ulong)a * b) >> 32); }
METAL_FUNC float divide(float a, float b) { return a / b; }

namespace precise {
using metal::cos;
using metal::divide;
using metal::exp;
using metal::exp2;
using metal::fma;
using metal::log;
using metal::log2;
using metal::max;
using metal::min;
using metal::pow;
using metal::rsqrt;
using metal::sin;
using metal::sqrt;
using metal::tanh;
}  // namespace precise
namespace fast = precise;  // one accuracy on the CPU: fast:: and precise:: are the same functions

// ------------------------------------------------------------------ synchronisation
enum class mem_flags : uint { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
METAL_FUNC mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags((uint)a | (uint)b); }
METAL_FUNC void threadgroup_barrier(mem_flags, int site = MSL_SITE) { ::mslrt::tg_barrier(site); }
METAL_FUNC void simdgroup_barrier(mem_flags, int site = MSL_SITE) {
  char d = 0, out[32];
  ::mslrt::simd_gather(&d, 1, out, site);
}

// ------------------------------------------------------------------ simdgroup functions (32 lanes)
// Every lane still running must reach the same simd operation; lanes that
// returned do not take part (their mask bit is clear).
template <class T> METAL_FUNC uint32_t simd_all_lanes(const T& x, T* out, int site) {
  return ::mslrt::simd_gather(&x, sizeof(T), out, site);
}
METAL_FUNC uint msl_lane() { return ::mslrt::cur->thread_index_in_simdgroup; }
#define MSL_SIMD_REDUCE(name, init, op)                                 \
  template <class T> METAL_FUNC T name(T x, int site = MSL_SITE) {      \
    T v[32];                                                            \
    uint32_t m = simd_all_lanes(x, v, site);                            \
    T acc = init;                                                       \
    for (int i = 0; i < 32; i++)                                        \
      if (m >> i & 1) {                                                 \
        T b = v[i];                                                     \
        acc = (op);                                                     \
      }                                                                 \
    return acc;                                                         \
  }
// simd_sum adds in lane order; the GPU uses a tree, so sums agree to rounding only.
MSL_SIMD_REDUCE(simd_sum, T(0), acc + b)
MSL_SIMD_REDUCE(simd_product, T(1), acc * b)
MSL_SIMD_REDUCE(simd_max, v[__builtin_ctz(m)], max(acc, b))
MSL_SIMD_REDUCE(simd_min, v[__builtin_ctz(m)], min(acc, b))
MSL_SIMD_REDUCE(simd_and, T(~T(0)), acc & b)
MSL_SIMD_REDUCE(simd_or, T(0), acc | b)
MSL_SIMD_REDUCE(simd_xor, T(0), acc ^ b)
#undef MSL_SIMD_REDUCE
template <class T> METAL_FUNC T simd_prefix_inclusive_sum(T x, int site = MSL_SITE) {
  T v[32];
  uint32_t m = simd_all_lanes(x, v, site);
  T acc = T(0);
  for (uint i = 0; i <= msl_lane(); i++)
    if (m >> i & 1) acc += v[i];
  return acc;
}
template <class T> METAL_FUNC T simd_prefix_exclusive_sum(T x, int site = MSL_SITE) {
  T v[32];
  uint32_t m = simd_all_lanes(x, v, site);
  T acc = T(0);
  for (uint i = 0; i < msl_lane(); i++)
    if (m >> i & 1) acc += v[i];
  return acc;
}
// Reading an inactive lane is undefined on the GPU; here it returns zero bytes.
template <class T> METAL_FUNC T msl_pick(const T* v, uint32_t m, uint lane) {
  if (lane < 32 && (m >> lane & 1)) return v[lane];
  T z;
  __builtin_memset(&z, 0, sizeof z);
  return z;
}
template <class T> METAL_FUNC T simd_shuffle(T x, ushort lane, int site = MSL_SITE) {
  T v[32];
  uint32_t m = simd_all_lanes(x, v, site);
  return msl_pick(v, m, lane);
}
template <class T> METAL_FUNC T simd_broadcast(T x, ushort lane, int site = MSL_SITE) { return simd_shuffle(x, lane, site); }
template <class T> METAL_FUNC T simd_shuffle_xor(T x, ushort mask, int site = MSL_SITE) {
  T v[32];
  uint32_t m = simd_all_lanes(x, v, site);
  return msl_pick(v, m, msl_lane() ^ mask);
}
template <class T> METAL_FUNC T simd_shuffle_down(T x, ushort d, int site = MSL_SITE) {
  T v[32];
  uint32_t m = simd_all_lanes(x, v, site);
  uint l = msl_lane();
  return l + d < 32 ? msl_pick(v, m, l + d) : x;
}
template <class T> METAL_FUNC T simd_shuffle_up(T x, ushort d, int site = MSL_SITE) {
  T v[32];
  uint32_t m = simd_all_lanes(x, v, site);
  uint l = msl_lane();
  return l >= d ? msl_pick(v, m, l - d) : x;
}
template <class T> METAL_FUNC T simd_broadcast_first(T x, int site = MSL_SITE) {
  T v[32];
  uint32_t m = simd_all_lanes(x, v, site);
  return v[__builtin_ctz(m)];
}
METAL_FUNC bool simd_all(bool b, int site = MSL_SITE) {
  bool v[32];
  uint32_t m = simd_all_lanes(b, v, site);
  for (int i = 0; i < 32; i++)
    if ((m >> i & 1) && !v[i]) return false;
  return true;
}
METAL_FUNC bool simd_any(bool b, int site = MSL_SITE) {
  bool v[32];
  uint32_t m = simd_all_lanes(b, v, site);
  for (int i = 0; i < 32; i++)
    if ((m >> i & 1) && v[i]) return true;
  return false;
}

// ------------------------------------------------------------------ atomics (relaxed; device and threadgroup)
enum memory_order { memory_order_relaxed = 0 };
template <class T> struct msl_atomic { T v; };
typedef msl_atomic<int> atomic_int;
typedef msl_atomic<uint> atomic_uint;
typedef msl_atomic<float> atomic_float;
template <class A> METAL_FUNC auto atomic_load_explicit(A* a, memory_order) { return __atomic_load_n(&a->v, __ATOMIC_RELAXED); }
template <class A, class U> METAL_FUNC void atomic_store_explicit(A* a, U x, memory_order) {
  __atomic_store_n(&a->v, (decltype(a->v))x, __ATOMIC_RELAXED);
}
template <class A, class U> METAL_FUNC auto atomic_fetch_add_explicit(A* a, U x, memory_order) {
  using T = std::remove_cv_t<decltype(a->v)>;
  if constexpr (std::is_same_v<T, float>) {
    T old = __atomic_load_n(&a->v, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&a->v, &old, old + (T)x, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
  } else {
    return __atomic_fetch_add(&a->v, (T)x, __ATOMIC_RELAXED);
  }
}
template <class A, class U> METAL_FUNC auto atomic_fetch_max_explicit(A* a, U x, memory_order) {
  return __atomic_fetch_max(&a->v, (decltype(a->v))x, __ATOMIC_RELAXED);
}
template <class A, class U> METAL_FUNC auto atomic_fetch_min_explicit(A* a, U x, memory_order) {
  return __atomic_fetch_min(&a->v, (decltype(a->v))x, __ATOMIC_RELAXED);
}
template <class A, class U> METAL_FUNC auto atomic_fetch_or_explicit(A* a, U x, memory_order) {
  return __atomic_fetch_or(&a->v, (decltype(a->v))x, __ATOMIC_RELAXED);
}

// ------------------------------------------------------------------ simdgroup_matrix<T, 8, 8>
// Each lane holds 2 elements in Apple's fragment layout (as documented by
// metal-flash-attention): row = (l>>4&1)*4 + (l>>1&3), col = (l>>3&1)*4 + (l&1)*2.
// It only matters to kernels that touch thread_elements().
METAL_FUNC int sgm_row(uint l) { return (int)(((l >> 4) & 1) * 4 + ((l >> 1) & 3)); }
METAL_FUNC int sgm_col(uint l) { return (int)(((l >> 3) & 1) * 4 + (l & 1) * 2); }
template <class T, int R, int C> struct simdgroup_matrix {
  static_assert(R == 8 && C == 8, "only 8x8 simdgroup matrices are emulated");
  vec<T, 2> e;
  simdgroup_matrix() = default;
  explicit simdgroup_matrix(T diag) {
    uint l = msl_lane();
    int r = sgm_row(l), c = sgm_col(l);
    e[0] = r == c ? diag : T(0);
    e[1] = r == c + 1 ? diag : T(0);
  }
  thread vec<T, 2>& thread_elements() { return e; }
};
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
template <class T, int R, int C> METAL_FUNC simdgroup_matrix<T, R, C> make_filled_simdgroup_matrix(T v) {
  simdgroup_matrix<T, R, C> m;
  m.e[0] = v;
  m.e[1] = v;
  return m;
}
// origin is (column, row), as in Metal.
template <class T, class P> METAL_FUNC void simdgroup_load(thread simdgroup_matrix<T, 8, 8>& m, P src,
                                                         ulong elements_per_row = 8, ulong2 origin = ulong2(0),
                                                         bool transpose = false) {
  uint l = msl_lane();
  int r = sgm_row(l), c = sgm_col(l);
  for (int k = 0; k < 2; k++) {
    ulong rr = r + origin.y, cc = c + k + origin.x;
    m.e[k] = (T)(transpose ? src[cc * elements_per_row + rr] : src[rr * elements_per_row + cc]);
  }
}
template <class T, class P> METAL_FUNC void simdgroup_store(const thread simdgroup_matrix<T, 8, 8>& m, P dst,
                                                          ulong elements_per_row = 8, ulong2 origin = ulong2(0),
                                                          bool transpose = false) {
  uint l = msl_lane();
  int r = sgm_row(l), c = sgm_col(l);
  using S = std::remove_cv_t<std::remove_reference_t<decltype(dst[0])>>;
  for (int k = 0; k < 2; k++) {
    ulong rr = r + origin.y, cc = c + k + origin.x;
    (transpose ? dst[cc * elements_per_row + rr] : dst[rr * elements_per_row + cc]) = (S)m.e[k];
  }
}
// d = a*b + c, one simdgroup rendezvous; products accumulate with fma in float
// in column order (the GPU's order is its own: results agree to rounding).
template <class TD, class TA, class TB, class TC>
METAL_FUNC void simdgroup_multiply_accumulate(thread simdgroup_matrix<TD, 8, 8>& d, const thread simdgroup_matrix<TA, 8, 8>& a,
                                              const thread simdgroup_matrix<TB, 8, 8>& b,
                                              const thread simdgroup_matrix<TC, 8, 8>& c, int site = MSL_SITE) {
  struct Frag {
    float a[2], b[2], c[2];
  } mine, all[32];
  for (int k = 0; k < 2; k++) {
    mine.a[k] = (float)a.e[k];
    mine.b[k] = (float)b.e[k];
    mine.c[k] = (float)c.e[k];
  }
  uint32_t m = ::mslrt::simd_gather(&mine, sizeof mine, all, site);
  if (m != 0xffffffffu) ::mslrt::kernel_fail("simdgroup_multiply_accumulate with inactive lanes", site);
  float A[8][8], B[8][8], Cm[8][8];
  for (uint l = 0; l < 32; l++)
    for (int k = 0; k < 2; k++) {
      A[sgm_row(l)][sgm_col(l) + k] = all[l].a[k];
      B[sgm_row(l)][sgm_col(l) + k] = all[l].b[k];
      Cm[sgm_row(l)][sgm_col(l) + k] = all[l].c[k];
    }
  uint l = msl_lane();
  int r = sgm_row(l), c0 = sgm_col(l);
  for (int k = 0; k < 2; k++) {
    float s = Cm[r][c0 + k];
    for (int j = 0; j < 8; j++) s = __builtin_fmaf(A[r][j], B[j][c0 + k], s);
    d.e[k] = (TD)s;
  }
}
template <class TD, class TA, class TB>
METAL_FUNC void simdgroup_multiply(thread simdgroup_matrix<TD, 8, 8>& d, const thread simdgroup_matrix<TA, 8, 8>& a,
                                   const thread simdgroup_matrix<TB, 8, 8>& b, int site = MSL_SITE) {
  simdgroup_matrix<TD, 8, 8> z = make_filled_simdgroup_matrix<TD, 8, 8>(TD(0));
  simdgroup_multiply_accumulate(d, a, b, z, site);
}
}  // namespace metal

// ------------------------------------------------------------------ glue support
namespace msl {
// bi converts a builtin (a 3-component position or a scalar index) to the
// parameter's declared type: uint, ushort, uint2, ushort3, ...
template <class T> METAL_FUNC T bi(::mslrt::U3 v) {
  if constexpr (vt<T>::vec) {
    T r;
    using E = typename vt<T>::elem;
    uint32_t c[3] = {v.x, v.y, v.z};
    for (int i = 0; i < vt<T>::n; i++) r[i] = (E)c[i];
    return r;
  } else {
    return (T)v.x;
  }
}
template <class T> METAL_FUNC T bi(uint32_t v) { return (T)v; }
// `threadgroup T name[N];` is rewritten to `auto& name = *msl::tg<T[N]>(ID);`:
// one slot per declaration, shared by the threads of a group.
#ifdef MSL_ADDRESS_SPACES
template <class T> METAL_FUNC __local T* tg(int id) { return (__local T*)::mslrt::tg_alloc(id, sizeof(T), alignof(T) < 16 ? 16 : alignof(T)); }
#else
template <class T> METAL_FUNC T* tg(int id) { return (T*)::mslrt::tg_alloc(id, sizeof(T), alignof(T) < 16 ? 16 : alignof(T)); }
#endif
}  // namespace msl

namespace mslrt {
// Argument proxies used by the generated glue; they convert to the kernel's
// parameter types, so templates and host_name instantiations need no type text.
struct BufArg {
  int i;
  template <class T> operator T*() const { return (T*)buffer(i); }
  template <class T, class = std::enable_if_t<!std::is_pointer_v<T>>> operator T&() const { return *(T*)buffer(i); }
};
struct TgArg {
  int i;
  template <class T> operator T*() const { return (T*)tg_dyn(i); }
};
struct BiArg {
  U3 v;
  template <class T> operator T() const { return ::msl::bi<T>(v); }
};
struct BiIdx {
  uint32_t v;
  template <class T> operator T() const { return (T)v; }
};
}  // namespace mslrt
