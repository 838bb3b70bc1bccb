// common.h of the harness tests.
#pragma once
#include <metal_stdlib>
using namespace metal;

struct args_n {
    uint n;
    float eps;
};
