// Stub (see ../README.md): the Metal device functions the cgo preamble of
// darwin/mtl uses.
#pragma once
#include <Foundation/Foundation.h>

@protocol MTLDevice <NSObject>
@end

id<MTLDevice> MTLCreateSystemDefaultDevice(void) NS_RETURNS_RETAINED;
NSArray<id<MTLDevice>> *MTLCopyAllDevices(void) NS_RETURNS_RETAINED;
