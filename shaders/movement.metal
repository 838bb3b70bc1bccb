// movement.metal: Transpose, Pad, GatherRows and ScatterRows (compute.Kernels).
// They move elements without looking at them, as words of 1, 2, 4 or 8 bytes.
#include "common.h"

// One thread per destination element: its coordinates in dst, through the
// permuted strides, give the source element. The host merges axes that stay
// adjacent, so the rank is at most MAX_RANK.
template <typename W>
kernel void kernel_transpose(constant kargs_transpose& args [[buffer(0)]],
                             device const W* src [[buffer(1)]],
                             device W* dst [[buffer(2)]],
                             uint2 gid [[thread_position_in_grid]],
                             uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    ulong rem = i;
    ulong off = 0;
    for (int a = int(args.rank) - 1; a >= 0; a--) {
        ulong d = ulong(args.dst_shape[a]);
        off += (rem % d) * args.src_stride[a];
        rem /= d;
    }
    dst[i] = src[off];
}

template [[host_name("kernel_transpose_u8")]] [[kernel]] decltype(kernel_transpose<uchar>) kernel_transpose<uchar>;
template [[host_name("kernel_transpose_u16")]] [[kernel]] decltype(kernel_transpose<ushort>) kernel_transpose<ushort>;
template [[host_name("kernel_transpose_u32")]] [[kernel]] decltype(kernel_transpose<uint>) kernel_transpose<uint>;
template [[host_name("kernel_transpose_u64")]] [[kernel]] decltype(kernel_transpose<ulong>) kernel_transpose<ulong>;

// One thread per destination element: each coordinate minus the leading
// padding is mapped into the source by the axis's border rule; a position in
// a zero border writes 0. Values are copied as words, never rounded.
template <typename W>
kernel void kernel_pad(constant kargs_pad& args [[buffer(0)]],
                       device const W* src [[buffer(1)]],
                       device W* dst [[buffer(2)]],
                       uint2 gid [[thread_position_in_grid]],
                       uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    ulong rem = i;
    ulong off = 0;
    ulong scale = 1;
    bool ok = true;
    for (int a = int(args.rank) - 1; a >= 0; a--) {
        int c = int(rem % ulong(args.dst_shape[a]));
        rem /= ulong(args.dst_shape[a]);
        int s = pad_coord(c - args.before[a], int(args.src_shape[a]), args.mode[a], ok);
        off += ulong(s) * scale;
        scale *= ulong(args.src_shape[a]);
    }
    dst[i] = ok ? src[off] : W(0);
}

template [[host_name("kernel_pad_u8")]] [[kernel]] decltype(kernel_pad<uchar>) kernel_pad<uchar>;
template [[host_name("kernel_pad_u16")]] [[kernel]] decltype(kernel_pad<ushort>) kernel_pad<ushort>;
template [[host_name("kernel_pad_u32")]] [[kernel]] decltype(kernel_pad<uint>) kernel_pad<uint>;
template [[host_name("kernel_pad_u64")]] [[kernel]] decltype(kernel_pad<ulong>) kernel_pad<ulong>;

// dst[r] = src[idx[r]]: thread (w, r) moves word w of row r. An index outside
// [0, n_rows) leaves the row unwritten (the CPU reference panics; the host
// checks indices it can see).
template <typename W>
kernel void kernel_gather_rows(constant kargs_rows& args [[buffer(0)]],
                               device const W* src [[buffer(1)]],
                               device const uchar* idx [[buffer(2)]],
                               device W* dst [[buffer(3)]],
                               uint2 gid [[thread_position_in_grid]]) {
    if (gid.x >= args.row_words || gid.y >= args.n_idx) {
        return;
    }
    long j = load_index(idx, args.idx_dt, gid.y);
    if (j < 0 || j >= long(args.n_rows)) {
        return;
    }
    dst[ulong(gid.y) * args.row_words + gid.x] = src[ulong(j) * args.row_words + gid.x];
}

template [[host_name("kernel_gather_rows_u8")]] [[kernel]] decltype(kernel_gather_rows<uchar>) kernel_gather_rows<uchar>;
template [[host_name("kernel_gather_rows_u16")]] [[kernel]] decltype(kernel_gather_rows<ushort>) kernel_gather_rows<ushort>;
template [[host_name("kernel_gather_rows_u32")]] [[kernel]] decltype(kernel_gather_rows<uint>) kernel_gather_rows<uint>;
template [[host_name("kernel_gather_rows_u64")]] [[kernel]] decltype(kernel_gather_rows<ulong>) kernel_gather_rows<ulong>;

// dst[idx[r]] = src[r]; indices are distinct (compute.Kernels), so no two
// threads write one word.
template <typename W>
kernel void kernel_scatter_rows(constant kargs_rows& args [[buffer(0)]],
                                device const W* src [[buffer(1)]],
                                device const uchar* idx [[buffer(2)]],
                                device W* dst [[buffer(3)]],
                                uint2 gid [[thread_position_in_grid]]) {
    if (gid.x >= args.row_words || gid.y >= args.n_idx) {
        return;
    }
    long j = load_index(idx, args.idx_dt, gid.y);
    if (j < 0 || j >= long(args.n_rows)) {
        return;
    }
    dst[ulong(j) * args.row_words + gid.x] = src[ulong(gid.y) * args.row_words + gid.x];
}

template [[host_name("kernel_scatter_rows_u8")]] [[kernel]] decltype(kernel_scatter_rows<uchar>) kernel_scatter_rows<uchar>;
template [[host_name("kernel_scatter_rows_u16")]] [[kernel]] decltype(kernel_scatter_rows<ushort>) kernel_scatter_rows<ushort>;
template [[host_name("kernel_scatter_rows_u32")]] [[kernel]] decltype(kernel_scatter_rows<uint>) kernel_scatter_rows<uint>;
template [[host_name("kernel_scatter_rows_u64")]] [[kernel]] decltype(kernel_scatter_rows<ulong>) kernel_scatter_rows<ulong>;
