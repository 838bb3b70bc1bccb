#include "common.h"

kernel void bad_style(device float* y [[buffer(0)]],
                      device const int4* v [[buffer(1)]],
                      uint gid [[thread_position_in_grid]],
                      uint other) {
    float4 f = (float4)v[gid];
    y[gid] = f.x * 0.5;
}
