//go:build darwin

package mtl

/*
#cgo CFLAGS: -x objective-c -fobjc-arc
#cgo LDFLAGS: -framework Metal -framework CoreGraphics -framework Foundation -framework MetalPerformanceShaders -framework MetalPerformanceShadersGraph
#import <Metal/Metal.h>

// The C functions darwinkit v0.5.0 does not bind. Each returns a +1 (owned)
// reference, or NULL.

// h3_default_device is the system default GPU; without one (some daemon or
// ssh contexts) it falls back to the first device listed.
static void *h3_default_device(void) {
	id<MTLDevice> d = MTLCreateSystemDefaultDevice();
	if (d == nil) {
		NSArray<id<MTLDevice>> *all = MTLCopyAllDevices();
		if (all.count > 0) d = all[0];
	}
	return (__bridge_retained void *)d;
}

static int h3_device_count(void) {
	return (int)MTLCopyAllDevices().count;
}

static void *h3_device_at(int i) {
	NSArray<id<MTLDevice>> *all = MTLCopyAllDevices();
	if (i < 0 || (NSUInteger)i >= all.count) return NULL;
	return (__bridge_retained void *)all[i];
}

// h3_os_at_least reports whether the running macOS is at least major.minor.
static int h3_os_at_least(int major, int minor) {
	NSOperatingSystemVersion v = {major, minor, 0};
	return [[NSProcessInfo processInfo] isOperatingSystemAtLeastVersion:v] ? 1 : 0;
}
*/
import "C"

import "unsafe"

func defaultDevicePtr() unsafe.Pointer { return C.h3_default_device() }

func deviceCount() int { return int(C.h3_device_count()) }

func devicePtr(i int) unsafe.Pointer { return C.h3_device_at(C.int(i)) }

// OSAtLeast reports whether the running macOS is at least major.minor.
func OSAtLeast(major, minor int) bool { return C.h3_os_at_least(C.int(major), C.int(minor)) != 0 }
