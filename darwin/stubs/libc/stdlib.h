// Stub (see ../README.md): the C library functions the shims use.
#pragma once
#include <stddef.h>
void *malloc(size_t size);
void free(void *ptr);
