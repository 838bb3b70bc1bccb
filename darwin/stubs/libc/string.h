// Stub (see ../README.md): the C library functions the shims use.
#pragma once
#include <stddef.h>
char *strdup(const char *s);
void *memcpy(void *dst, const void *src, size_t n);
size_t strlen(const char *s);
