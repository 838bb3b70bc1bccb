// Stub (see ../README.md): the CoreGraphics drawing API the shims use.
#pragma once
#include <CoreFoundation/CoreFoundation.h>

typedef double CGFloat;
typedef struct { CGFloat x, y; } CGPoint;
typedef struct { CGFloat width, height; } CGSize;
typedef struct { CGPoint origin; CGSize size; } CGRect;
static inline CGRect CGRectMake(CGFloat x, CGFloat y, CGFloat width, CGFloat height) {
	CGRect r = {{x, y}, {width, height}};
	return r;
}

typedef struct CF_BRIDGED_TYPE(id) CGImage *CGImageRef;
typedef struct CF_BRIDGED_TYPE(id) CGColorSpace *CGColorSpaceRef;
typedef struct CF_BRIDGED_TYPE(id) CGContext *CGContextRef;
typedef uint32_t CGBitmapInfo;
enum { kCGImageAlphaPremultipliedLast = 1 };
enum { kCGBitmapByteOrder32Big = (4 << 12) };
typedef int32_t CGBlendMode;
enum { kCGBlendModeCopy = 17 };

extern const CFStringRef kCGColorSpaceSRGB;

CGColorSpaceRef CGColorSpaceCreateWithName(CFStringRef name);
void CGColorSpaceRelease(CGColorSpaceRef space);
CGContextRef CGBitmapContextCreate(void *data, size_t width, size_t height, size_t bitsPerComponent,
                                   size_t bytesPerRow, CGColorSpaceRef space, uint32_t bitmapInfo);
void CGContextSetBlendMode(CGContextRef c, CGBlendMode mode);
void CGContextDrawImage(CGContextRef c, CGRect rect, CGImageRef image);
void CGContextRelease(CGContextRef c);
size_t CGImageGetWidth(CGImageRef image);
size_t CGImageGetHeight(CGImageRef image);
void CGImageRelease(CGImageRef image);
