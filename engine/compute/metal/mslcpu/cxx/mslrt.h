// mslrt.h: the interface between kernel translation units (through msl_shim.h)
// and the CPU runtime (mslrt.cpp) of H3 Studio's MSL-on-CPU harness.
//
// Plain C++ with no standard headers beyond <stddef.h>/<stdint.h>: a kernel
// translation unit must not see libm or std names in the global namespace,
// or `using namespace metal;` becomes ambiguous.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace mslrt {

struct U3 {
  uint32_t x, y, z;
};

// ThreadCtx is one emulated GPU thread (one fiber). `cur` points at the
// running thread's context on each OS thread.
struct ThreadCtx {
  U3 thread_position_in_grid;
  U3 thread_position_in_threadgroup;
  U3 threadgroup_position_in_grid;
  U3 threads_per_threadgroup;           // actual size of this group
  U3 dispatch_threads_per_threadgroup;  // size requested by the dispatch
  U3 threadgroups_per_grid;
  U3 threads_per_grid;
  uint32_t thread_index_in_threadgroup;
  uint32_t simdgroup_index_in_threadgroup;
  uint32_t thread_index_in_simdgroup;
  uint32_t simdgroups_per_threadgroup;
  uint32_t threads_per_simdgroup;
};

#ifdef MSL_ADDRESS_SPACES  // the address-space check compiles as C++ for OpenCL (no thread_local)
extern ThreadCtx* cur;
#else
extern thread_local ThreadCtx* cur;
#endif

// A call site: line and column of the kernel source, packed by site().
inline int site(int line, int column) { return line * 4096 + (column & 4095); }

// tg_barrier blocks until every live thread of the threadgroup waits at the
// same barrier site.
void tg_barrier(int site);
// simd_gather is the rendezvous of a simdgroup: each lane contributes sz
// bytes at in; on return out holds 32*sz bytes (lane i at out+i*sz) and the
// result is the mask of lanes that took part (the lanes still running).
uint32_t simd_gather(const void* in, size_t sz, void* out, int site);
// tg_alloc returns the threadgroup-memory slot id (the same pointer for every
// thread of a group), allocating it on first use in the group.
void* tg_alloc(int id, size_t size, size_t align);
// kernel_fail stops the launch with an error attributed to a source site.
#ifdef MSL_ADDRESS_SPACES  // string literals are __constant in OpenCL
[[noreturn]] void kernel_fail(const __constant char* msg, int site);
#else
[[noreturn]] void kernel_fail(const char* msg, int site);
#endif

// Used by generated glue.
void* buffer(int index);  // [[buffer(index)]]
void* tg_dyn(int index);  // [[threadgroup(index)]]
struct Reg {
  Reg(const char* name, void (*tramp)(ThreadCtx*));
};

}  // namespace mslrt
