// mslrt.cpp: the CPU runtime of H3 Studio's MSL-on-CPU harness.
//
// A kernel executable is this runtime linked with one translated .metal file.
// It reads one launch request on stdin, runs the kernel and writes the
// buffers back on stdout. Model of execution:
//   - every GPU thread of a threadgroup is a fiber with its own stack (a
//     hand-written context switch on x86-64, ucontext elsewhere);
//   - one OS thread runs one threadgroup at a time; groups are spread over
//     the OS threads;
//   - threadgroup barriers and simdgroup operations are rendezvous points of
//     the scheduler, which runs every runnable fiber until it blocks.
// Checks: every launch runs under two or more thread schedules (index order,
// reverse order, shuffled) on fresh copies of the inputs and the results are
// compared bit for bit; buffers end flush against a PROT_NONE guard page (and
// start after one); read-only buffers are mapped read-only; threadgroup memory
// is filled with 0xFF bytes (NaN for floats) before each group; barriers
// reached by part of a group, divergent barriers or simd operations, and
// deadlocks are errors that name the .metal line.
#include "mslrt.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if !defined(__x86_64__)
#define MSLRT_UCONTEXT 1
#endif
#ifdef MSLRT_UCONTEXT
#include <ucontext.h>
#endif

// clang lowers __bf16 narrowing to __truncsfbf2, which libgcc 12 lacks.
// Round to nearest even; NaN stays a quiet NaN (as compute.BF16FromF32).
extern "C" __bf16 __truncsfbf2(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint16_t r;
  if ((u & 0x7fffffffu) > 0x7f800000u)
    r = (uint16_t)((u >> 16) | 0x40);
  else
    r = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  __bf16 b;
  memcpy(&b, &r, 2);
  return b;
}

#ifndef MSLRT_UCONTEXT
// msl_switch saves the callee-saved registers and the FP control words on the
// current stack, stores the stack pointer in *save and resumes the context
// whose stack pointer is next.
extern "C" void msl_switch(void** save, void* next);
asm(R"(
.text
.globl msl_switch
.type msl_switch,@function
msl_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
.size msl_switch,.-msl_switch
.section .note.GNU-stack,"",@progbits
)");
#endif

namespace mslrt {

thread_local ThreadCtx* cur;

static const size_t kStack = 128 * 1024;   // per fiber, plus one guard page
static const size_t kTgLimit = 32 * 1024;  // Apple GPUs: 32 KiB threadgroup memory
static const int kMaxBuffers = 31;         // Metal's buffer argument table
static const int kMaxTgDyn = 8;

struct Launch {
  void (*tramp)(ThreadCtx*) = nullptr;
  U3 groups{}, tpg{}, grid{};
  bool nonuniform = false;
  void* buf[kMaxBuffers] = {};
  size_t tg_dyn_len[kMaxTgDyn] = {};
  int policy = 0;  // 0 index order, 1 reverse order, 2 shuffled
  uint64_t seed = 1;
};

enum State { RUN, BARRIER, SIMD, DONE };

struct Fiber {
  void* sp = nullptr;
#ifdef MSLRT_UCONTEXT
  ucontext_t uc;
#endif
  State st = RUN;
  int site = 0;
  uint64_t barriers = 0;  // barriers passed
  const void* sin = nullptr;
  size_t ssz = 0;
  void* sout = nullptr;
  uint32_t smask = 0;
  ThreadCtx ctx{};
  char* stack = nullptr;
};

struct Worker {
  std::vector<Fiber> f;
  char* stacks = nullptr;
  size_t nstacks = 0;
  void* sched_sp = nullptr;
#ifdef MSLRT_UCONTEXT
  ucontext_t sched_uc;
#endif
  Fiber* running = nullptr;
  const Launch* L = nullptr;
  alignas(64) unsigned char arena[kTgLimit];
  size_t arena_used = 0;
  size_t dyn_off[kMaxTgDyn] = {};
  std::vector<std::pair<int, size_t>> slots;
  bool abort = false;
  uint64_t switches = 0;
};
static thread_local Worker* W;

static std::mutex g_err_mu;
static std::string g_err;
static std::atomic<bool> g_abort{false};

static void set_error(const std::string& e) {
  std::lock_guard<std::mutex> g(g_err_mu);
  if (g_err.empty()) g_err = e;
  g_abort = true;
}

static std::map<std::string, void (*)(ThreadCtx*)>& registry() {
  static std::map<std::string, void (*)(ThreadCtx*)> m;
  return m;
}
Reg::Reg(const char* name, void (*tramp)(ThreadCtx*)) { registry()[name] = tramp; }

static std::string where(int site) {
  char b[48];
  snprintf(b, sizeof b, "line %d:%d", site / 4096, site % 4096);
  return b;
}

void* buffer(int i) {
  if (i < 0 || i >= kMaxBuffers || !W->L->buf[i]) {
    char b[96];
    snprintf(b, sizeof b, "kernel reads [[buffer(%d)]], which the launch does not bind", i);
    kernel_fail(b, 0);
  }
  return W->L->buf[i];
}

void* tg_dyn(int i) {
  if (i < 0 || i >= kMaxTgDyn || !W->L->tg_dyn_len[i]) {
    char b[96];
    snprintf(b, sizeof b, "kernel uses [[threadgroup(%d)]], which the launch does not size", i);
    kernel_fail(b, 0);
  }
  return W->arena + W->dyn_off[i];
}

static inline void to_scheduler(Fiber* f) {
  W->switches++;
#ifdef MSLRT_UCONTEXT
  swapcontext(&f->uc, &W->sched_uc);
#else
  msl_switch(&f->sp, W->sched_sp);
#endif
}

static inline void to_fiber(Fiber* f) {
  W->running = f;
  cur = &f->ctx;
#ifdef MSLRT_UCONTEXT
  swapcontext(&W->sched_uc, &f->uc);
#else
  msl_switch(&W->sched_sp, f->sp);
#endif
}

static void fiber_main() {
  Worker* w = W;
  Fiber* f = w->running;
  w->L->tramp(&f->ctx);
  f->st = DONE;
  to_scheduler(f);
  __builtin_trap();  // a finished fiber is never resumed
}

static void init_fiber(Fiber* f) {
  char* top = f->stack + kStack;
#ifdef MSLRT_UCONTEXT
  getcontext(&f->uc);
  f->uc.uc_stack.ss_sp = f->stack;
  f->uc.uc_stack.ss_size = kStack;
  f->uc.uc_link = nullptr;
  makecontext(&f->uc, (void (*)())fiber_main, 0);
  (void)top;
#else
  uint64_t* sp = (uint64_t*)top;
  *--sp = 0;                               // alignment slot (fiber_main's return address)
  *--sp = (uint64_t)(void*)&fiber_main;    // where `ret` goes
  for (int i = 0; i < 6; i++) *--sp = 0;   // rbp rbx r12-r15
  *--sp = 0x1F80ull | (0x037Full << 32);   // MXCSR (round to nearest, masked), x87 control word
  f->sp = sp;
#endif
}

void tg_barrier(int site) {
  Fiber* f = W->running;
  f->st = BARRIER;
  f->site = site;
  to_scheduler(f);
}

uint32_t simd_gather(const void* in, size_t sz, void* out, int site) {
  Fiber* f = W->running;
  f->st = SIMD;
  f->site = site;
  f->sin = in;
  f->ssz = sz;
  f->sout = out;
  to_scheduler(f);
  return f->smask;
}

void* tg_alloc(int id, size_t size, size_t align) {
  for (auto& p : W->slots)
    if (p.first == id) return W->arena + p.second;
  size_t off = (W->arena_used + align - 1) & ~(align - 1);
  if (off + size > kTgLimit) {
    char b[128];
    snprintf(b, sizeof b, "threadgroup memory exceeds %zu bytes (needs %zu)", kTgLimit, off + size);
    kernel_fail(b, 0);
  }
  W->arena_used = off + size;
  W->slots.push_back({id, off});
  return W->arena + off;
}

void kernel_fail(const char* msg, int site) {
  char b[600];
  U3 g = cur->threadgroup_position_in_grid;
  snprintf(b, sizeof b, "%s (%s, threadgroup (%u,%u,%u), thread %u)", msg, site ? where(site).c_str() : "glue", g.x, g.y,
           g.z, cur->thread_index_in_threadgroup);
  set_error(b);
  W->abort = true;
  to_scheduler(W->running);
  __builtin_trap();
}

static const char* state_name(State s) {
  switch (s) {
    case RUN: return "running";
    case BARRIER: return "threadgroup_barrier";
    case SIMD: return "simd op";
    default: return "returned";
  }
}

static void ensure_stacks(Worker* w, uint32_t n) {
  if (w->nstacks >= n) return;
  if (w->stacks) munmap(w->stacks, w->nstacks * (kStack + 4096));
  size_t per = kStack + 4096;
  w->stacks = (char*)mmap(nullptr, n * per, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (w->stacks == MAP_FAILED) {
    fprintf(stderr, "MSLRT: cannot map fiber stacks\n");
    _exit(2);
  }
  for (uint32_t i = 0; i < n; i++) mprotect(w->stacks + i * per, 4096, PROT_NONE);  // overflow guard
  w->nstacks = n;
  w->f.assign(n, Fiber());
  for (uint32_t i = 0; i < n; i++) w->f[i].stack = w->stacks + i * per + 4096;
}

// run_group runs one threadgroup to completion; false on error.
static bool run_group(Worker* w, U3 gpos) {
  const Launch* L = w->L;
  U3 dim = L->tpg;
  if (L->nonuniform) {  // dispatchThreads: the groups at the far edges are partial
    dim.x = std::min(L->tpg.x, L->grid.x - gpos.x * L->tpg.x);
    dim.y = std::min(L->tpg.y, L->grid.y - gpos.y * L->tpg.y);
    dim.z = std::min(L->tpg.z, L->grid.z - gpos.z * L->tpg.z);
  }
  uint32_t n = dim.x * dim.y * dim.z;
  uint32_t nsg = (n + 31) / 32;
  ensure_stacks(w, n);
  w->slots.clear();
  w->arena_used = 0;
  for (int i = 0; i < kMaxTgDyn; i++) {
    if (!L->tg_dyn_len[i]) continue;
    w->dyn_off[i] = (w->arena_used + 15) & ~size_t(15);
    w->arena_used = w->dyn_off[i] + L->tg_dyn_len[i];
  }
  memset(w->arena, 0xFF, sizeof w->arena);  // reads before writes show up as NaN / -1
  for (uint32_t i = 0; i < n; i++) {
    Fiber* f = &w->f[i];
    f->st = RUN;
    f->barriers = 0;
    f->site = 0;
    ThreadCtx& c = f->ctx;
    uint32_t tx = i % dim.x, ty = (i / dim.x) % dim.y, tz = i / (dim.x * dim.y);
    c.thread_position_in_threadgroup = {tx, ty, tz};
    c.threadgroup_position_in_grid = gpos;
    c.thread_position_in_grid = {gpos.x * L->tpg.x + tx, gpos.y * L->tpg.y + ty, gpos.z * L->tpg.z + tz};
    c.threads_per_threadgroup = dim;
    c.dispatch_threads_per_threadgroup = L->tpg;
    c.threadgroups_per_grid = L->groups;
    c.threads_per_grid = L->grid;
    c.thread_index_in_threadgroup = i;
    c.simdgroup_index_in_threadgroup = i / 32;
    c.thread_index_in_simdgroup = i % 32;
    c.simdgroups_per_threadgroup = nsg;
    c.threads_per_simdgroup = 32;
    init_fiber(f);
  }
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; i++) order[i] = L->policy == 1 ? n - 1 - i : i;
  std::mt19937_64 rng(L->seed ^ (gpos.x * 73856093ull) ^ (gpos.y * 19349663ull) ^ (gpos.z * 83492791ull));
  auto fail = [&](const std::string& m) {
    char b[96];
    snprintf(b, sizeof b, " [threadgroup (%u,%u,%u)]", gpos.x, gpos.y, gpos.z);
    set_error(m + b);
    return false;
  };
  for (;;) {
    if (L->policy == 2) std::shuffle(order.begin(), order.end(), rng);
    bool ran = false;
    for (uint32_t k = 0; k < n; k++) {
      Fiber* f = &w->f[order[k]];
      if (f->st != RUN) continue;
      to_fiber(f);
      ran = true;
      if (w->abort) return false;
    }
    bool released = false;
    // A simdgroup is released when every lane still running waits at the same simd operation.
    for (uint32_t s = 0; s < nsg; s++) {
      uint32_t lo = s * 32, hi = std::min(n, lo + 32);
      uint32_t live = 0, waiting = 0, mask = 0;
      int site = -1;
      size_t sz = 0;
      bool same = true;
      for (uint32_t i = lo; i < hi; i++) {
        Fiber* f = &w->f[i];
        if (f->st == DONE) continue;
        live++;
        if (f->st != SIMD) continue;
        waiting++;
        mask |= 1u << (i - lo);
        if (site < 0) {
          site = f->site;
          sz = f->ssz;
        } else if (f->site != site || f->ssz != sz) {
          same = false;
        }
      }
      if (!live || waiting != live) continue;
      if (!same) return fail("lanes of simdgroup " + std::to_string(s) + " wait at different simd operations (divergent simd op)");
      for (uint32_t i = lo; i < hi; i++) {
        Fiber* f = &w->f[i];
        if (f->st != SIMD) continue;
        for (uint32_t j = lo; j < hi; j++)
          if (mask >> (j - lo) & 1) memcpy((char*)f->sout + (j - lo) * sz, w->f[j].sin, sz);
        f->smask = mask;
        f->st = RUN;
      }
      released = true;
    }
    // A barrier is released when every thread of the group waits at the same barrier.
    uint32_t done = 0, at = 0;
    int bsite = -1;
    uint64_t bcount = 0;
    bool bsame = true;
    for (uint32_t i = 0; i < n; i++) {
      Fiber* f = &w->f[i];
      if (f->st == DONE) {
        done++;
      } else if (f->st == BARRIER) {
        at++;
        if (bsite < 0) {
          bsite = f->site;
          bcount = f->barriers;
        } else if (f->site != bsite || f->barriers != bcount) {
          bsame = false;
        }
      }
    }
    if (done == n) return true;
    if (at && at + done == n) {
      if (done) {
        char b[200];
        snprintf(b, sizeof b, "threadgroup_barrier at %s reached by %u threads while %u threads of the group had returned",
                 where(bsite).c_str(), at, done);
        return fail(b);
      }
      if (!bsame) return fail("threads of one group wait at different threadgroup_barrier calls (divergent barrier)");
      for (uint32_t i = 0; i < n; i++) {
        w->f[i].st = RUN;
        w->f[i].barriers++;
      }
      released = true;
    }
    if (!ran && !released) {
      std::string m = "deadlock:";
      for (uint32_t i = 0; i < n && i < 64; i++) {
        Fiber* f = &w->f[i];
        m += " t" + std::to_string(i) + "=" + state_name(f->st);
        if (f->st == BARRIER || f->st == SIMD) m += "@" + where(f->site);
      }
      return fail(m);
    }
  }
}

struct Stats {
  double ms;
  uint64_t switches;
};

static Stats run_launch(const Launch& L, int nthreads) {
  uint64_t ngroups = (uint64_t)L.groups.x * L.groups.y * L.groups.z;
  std::atomic<uint64_t> next{0}, sw{0};
  auto t0 = std::chrono::steady_clock::now();
  auto work = [&]() {
    Worker* w = new Worker();
    W = w;
    w->L = &L;
    stack_t ss;
    ss.ss_sp = malloc(1 << 16);
    ss.ss_size = 1 << 16;
    ss.ss_flags = 0;
    sigaltstack(&ss, nullptr);
    for (;;) {
      if (g_abort) break;
      uint64_t k = next++;
      if (k >= ngroups) break;
      uint64_t g = L.policy == 1 ? ngroups - 1 - k : k;  // the reverse schedule also reverses group order
      U3 gp = {(uint32_t)(g % L.groups.x), (uint32_t)((g / L.groups.x) % L.groups.y),
               (uint32_t)(g / ((uint64_t)L.groups.x * L.groups.y))};
      if (!run_group(w, gp)) break;
    }
    sw += w->switches;
    if (w->stacks) munmap(w->stacks, w->nstacks * (kStack + 4096));
    delete w;
    W = nullptr;
  };
  std::vector<std::thread> ts;
  int nt = (int)std::min<uint64_t>(std::max(nthreads, 1), ngroups);
  for (int i = 1; i < nt; i++) ts.emplace_back(work);
  work();
  for (auto& t : ts) t.join();
  return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), sw.load()};
}

}  // namespace mslrt

// ------------------------------------------------------------------ guarded buffers and the driver
using namespace mslrt;

enum { kWritable = 1 };

struct GBuf {
  char* base;
  size_t maplen;
  char* body;
  size_t bodylen;
  char* data;
  size_t len;
  int index;
  uint32_t flags;
};
static std::vector<GBuf> g_bufs;
static long g_page;

// galloc maps len bytes so that they end flush against a PROT_NONE page (the
// start aligned down to align, which the caller makes divide len), with
// another PROT_NONE page before them.
static GBuf galloc(size_t len, size_t align, int index, uint32_t flags) {
  size_t body = (len + g_page - 1) / g_page * g_page;
  if (body == 0) body = g_page;
  size_t maplen = body + 2 * g_page;
  char* base = (char*)mmap(nullptr, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    fprintf(stderr, "MSLRT: cannot map a %zu-byte buffer\n", len);
    _exit(2);
  }
  mprotect(base, g_page, PROT_NONE);
  mprotect(base + g_page + body, g_page, PROT_NONE);
  if (align == 0) align = 1;
  char* data = (char*)(((uintptr_t)(base + g_page + body - len)) & ~(uintptr_t)(align - 1));
  return {base, maplen, base + g_page, body, data, len, index, flags};
}

static void on_fault(int sig, siginfo_t* si, void*) {
  char b[400];
  const char* a = (const char*)si->si_addr;
  int n = snprintf(b, sizeof b, "MSLRT: invalid memory access (%s) at %p", sig == SIGBUS ? "SIGBUS" : "SIGSEGV", si->si_addr);
  bool known = false;
  for (auto& g : g_bufs) {
    if (a < g.base || a >= g.base + g.maplen) continue;
    known = true;
    if (a >= g.data && a < g.data + g.len)
      n += snprintf(b + n, sizeof b - n, ": write to read-only buffer(%d) at offset %ld of %zu bytes", g.index,
                    (long)(a - g.data), g.len);
    else
      n += snprintf(b + n, sizeof b - n, ": outside buffer(%d), offset %ld of %zu bytes", g.index, (long)(a - g.data), g.len);
  }
  if (!known) n += snprintf(b + n, sizeof b - n, " (not in a kernel buffer: fiber stack overflow or a wild pointer)");
  if (cur)
    n += snprintf(b + n, sizeof b - n, " in thread_position_in_grid (%u,%u,%u)", cur->thread_position_in_grid.x,
                  cur->thread_position_in_grid.y, cur->thread_position_in_grid.z);
  b[n++] = '\n';
  ssize_t r = write(2, b, n);
  (void)r;
  _exit(3);
}

static void rd(void* p, size_t n) {
  if (n && fread(p, 1, n, stdin) != n) {
    fprintf(stderr, "MSLRT: short request\n");
    exit(2);
  }
}
static uint32_t rd32() { uint32_t v; rd(&v, 4); return v; }
static uint64_t rd64() { uint64_t v; rd(&v, 8); return v; }
static void wr(const void* p, size_t n) { if (n) fwrite(p, 1, n, stdout); }
static void wr32(uint32_t v) { wr(&v, 4); }
static void wr64(uint64_t v) { wr(&v, 8); }

static void bad_request(const char* m) {
  fprintf(stderr, "MSLRT: bad request: %s\n", m);
  exit(2);
}

// Request (little-endian): "MSLQ" name(u32 len, bytes) mode(u32: 0 threadgroups, 1 threads)
//   size[3] group[3] (u32) nsched(u32) sched[nsched](u32) seed(u64) threads(u32)
//   ntg(u32) {index len}(u32) nbuf(u32) {index flags align(u32) len(u64) bytes}
// Response: "MSLR" status(u32: 0 ok, 1 kernel error) msg(u32 len, bytes) switches(u64) ms(f64)
//   nbuf(u32) {index(u32) len(u64) bytes} for the writable buffers after the first schedule.
int main() {
  g_page = sysconf(_SC_PAGESIZE);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigaction(SIGSEGV, &sa, nullptr);
  sigaction(SIGBUS, &sa, nullptr);
  char magic[4];
  rd(magic, 4);
  if (memcmp(magic, "MSLQ", 4)) bad_request("magic");
  std::string name(rd32(), '\0');
  rd(&name[0], name.size());
  uint32_t mode = rd32();
  U3 a = {rd32(), rd32(), rd32()}, t = {rd32(), rd32(), rd32()};
  std::vector<int> pol(rd32());
  for (auto& p : pol) p = (int)rd32();
  uint64_t seed = rd64();
  int nthreads = (int)rd32();
  Launch L;
  auto it = registry().find(name);
  if (it == registry().end()) {
    fprintf(stderr, "MSLRT: no kernel named %s in this module\n", name.c_str());
    return 2;
  }
  L.tramp = it->second;
  if (!a.x || !a.y || !a.z || !t.x || !t.y || !t.z) bad_request("zero dispatch size");
  if ((uint64_t)t.x * t.y * t.z > 1024) bad_request("more than 1024 threads per threadgroup");
  L.tpg = t;
  if (mode == 0) {
    L.groups = a;
    L.grid = {a.x * t.x, a.y * t.y, a.z * t.z};
  } else {
    L.grid = a;
    L.groups = {(a.x + t.x - 1) / t.x, (a.y + t.y - 1) / t.y, (a.z + t.z - 1) / t.z};
    L.nonuniform = true;
  }
  L.seed = seed;
  uint32_t ntg = rd32();
  size_t tgsum = 0;
  for (uint32_t i = 0; i < ntg; i++) {
    uint32_t idx = rd32(), len = rd32();
    if (idx >= (uint32_t)kMaxTgDyn) bad_request("threadgroup index");
    L.tg_dyn_len[idx] = len;
    tgsum += (len + 15) & ~15u;
  }
  if (tgsum > kTgLimit) {
    fprintf(stderr, "MSLRT: dynamic threadgroup memory %zu bytes exceeds 32 KiB\n", tgsum);
    return 2;
  }
  struct In {
    int index;
    uint32_t flags;
    size_t align;
    std::vector<char> bytes;
  };
  std::vector<In> inputs(rd32());
  for (auto& in : inputs) {
    in.index = (int)rd32();
    in.flags = rd32();
    in.align = rd32();
    in.bytes.resize(rd64());
    rd(in.bytes.data(), in.bytes.size());
    if (in.index < 0 || in.index >= kMaxBuffers) bad_request("buffer index");
  }
  std::vector<std::vector<std::vector<char>>> outs;
  std::string status;
  double ms = 0;
  uint64_t switches = 0;
  for (size_t r = 0; r < pol.size() && status.empty(); r++) {
    for (auto& g : g_bufs) munmap(g.base, g.maplen);
    g_bufs.clear();
    for (int i = 0; i < kMaxBuffers; i++) L.buf[i] = nullptr;
    for (auto& in : inputs) {
      GBuf g = galloc(in.bytes.size(), in.align, in.index, in.flags);
      memcpy(g.data, in.bytes.data(), in.bytes.size());
      if (!(in.flags & kWritable)) mprotect(g.body, g.bodylen, PROT_READ);
      g_bufs.push_back(g);
      L.buf[in.index] = g.data;
    }
    L.policy = pol[r];
    Stats st = run_launch(L, nthreads);
    ms += st.ms;
    switches += st.switches;
    if (!g_err.empty()) {
      status = g_err;
      break;
    }
    std::vector<std::vector<char>> o;
    for (auto& g : g_bufs) o.emplace_back(g.data, g.data + g.len);
    if (!outs.empty()) {
      for (size_t b = 0; b < o.size() && status.empty(); b++) {
        if (o[b] == outs[0][b]) continue;
        size_t off = 0;
        while (o[b][off] == outs[0][b][off]) off++;
        char m[300];
        snprintf(m, sizeof m,
                 "result depends on the thread schedule (a data race or a missing barrier): buffer(%d) differs at "
                 "byte %zu between schedule %d and schedule %d",
                 g_bufs[b].index, off, pol[0], pol[r]);
        status = m;
      }
    }
    outs.push_back(std::move(o));
  }
  wr("MSLR", 4);
  wr32(status.empty() ? 0 : 1);
  wr32((uint32_t)status.size());
  wr(status.data(), status.size());
  wr64(switches);
  wr(&ms, 8);
  uint32_t nw = 0;
  if (!outs.empty())
    for (auto& g : g_bufs)
      if (g.flags & kWritable) nw++;
  wr32(nw);
  if (!outs.empty()) {
    for (size_t b = 0; b < g_bufs.size(); b++) {
      if (!(g_bufs[b].flags & kWritable)) continue;
      wr32((uint32_t)g_bufs[b].index);
      wr64(outs[0][b].size());
      wr(outs[0][b].data(), outs[0][b].size());
    }
  }
  fflush(stdout);
  return 0;
}
