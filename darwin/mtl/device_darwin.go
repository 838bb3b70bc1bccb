//go:build darwin

package mtl

import (
	"fmt"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"

	"h3studio/darwin/objcpool"
)

// Device is one Metal GPU. It is safe for concurrent use.
type Device struct {
	obj metal.DeviceObject
}

// DefaultDevice returns the system's default GPU, or ErrNoDevice.
func DefaultDevice() (*Device, error) {
	var d *Device
	objcpool.With(func() {
		if p := defaultDevicePtr(); p != nil {
			d = &Device{obj: metal.DeviceObject{Object: objc.ObjectFrom(p)}}
		}
	})
	if d == nil {
		return nil, ErrNoDevice
	}
	return d, nil
}

// Devices lists every Metal GPU.
func Devices() []*Device {
	var ds []*Device
	objcpool.With(func() {
		n := deviceCount()
		for i := 0; i < n; i++ {
			if p := devicePtr(i); p != nil {
				ds = append(ds, &Device{obj: metal.DeviceObject{Object: objc.ObjectFrom(p)}})
			}
		}
	})
	return ds
}

// Release gives the device back.
func (d *Device) Release() { d.obj.Release() }

// Name is the GPU's name, e.g. "Apple M3 Max".
func (d *Device) Name() string {
	var s string
	objcpool.With(func() { s = d.obj.Name() })
	return s
}

// FamilyNumber is the highest Apple GPU family the device supports
// (MTLGPUFamilyApple7 = 1007 for M1 … Apple10 = 1010 for M5), or 0.
func (d *Device) FamilyNumber() int {
	f := 0
	objcpool.With(func() {
		for v := 1012; v >= 1001; v-- { // raw values: older SDK enums stop before Apple10
			if d.obj.SupportsFamily(metal.GPUFamily(v)) {
				f = v
				return
			}
		}
	})
	return f
}

// Family spells FamilyNumber ("apple9").
func (d *Device) Family() string {
	if f := d.FamilyNumber(); f != 0 {
		return FamilyName(f)
	}
	return "unknown"
}

// UnifiedMemory reports whether the GPU shares the host's memory.
func (d *Device) UnifiedMemory() bool {
	var u bool
	objcpool.With(func() { u = d.obj.HasUnifiedMemory() })
	return u
}

// RecommendedMaxWorkingSetSize is Metal's estimate of the memory the GPU can
// use without hurting performance (it follows iogpu.wired_limit_mb).
func (d *Device) RecommendedMaxWorkingSetSize() int64 {
	var n uint64
	objcpool.With(func() { n = d.obj.RecommendedMaxWorkingSetSize() })
	return int64(n)
}

// MaxBufferLength is the largest buffer the device can make.
func (d *Device) MaxBufferLength() int64 {
	var n uint
	objcpool.With(func() { n = d.obj.MaxBufferLength() })
	return int64(n)
}

// MaxThreadgroupMemoryLength is the threadgroup memory of one group.
func (d *Device) MaxThreadgroupMemoryLength() int {
	var n uint
	objcpool.With(func() { n = d.obj.MaxThreadgroupMemoryLength() })
	return int(n)
}

// Buffer is device storage in shared mode (host-visible on unified memory).
type Buffer struct {
	obj  metal.BufferObject
	host []byte
}

// NewBuffer allocates n bytes of shared storage.
func (d *Device) NewBuffer(n int64) (*Buffer, error) {
	var b *Buffer
	objcpool.With(func() {
		obj := d.obj.NewBufferWithLengthOptions(uint(n), metal.ResourceStorageModeShared)
		if obj.IsNil() {
			return
		}
		b = &Buffer{obj: obj, host: unsafe.Slice((*byte)(obj.Contents()), n)}
	})
	if b == nil {
		return nil, fmt.Errorf("mtl: cannot allocate a %d-byte buffer", n)
	}
	return b, nil
}

// NewBufferNoCopy makes a buffer viewing mem without copying it: mem must
// start on a page and span whole pages (a mapped file viewed to the end of
// its last page). The caller keeps mem mapped while the buffer lives.
func (d *Device) NewBufferNoCopy(mem []byte) (*Buffer, error) {
	if len(mem) == 0 {
		return nil, fmt.Errorf("mtl: NewBufferNoCopy of no bytes")
	}
	var b *Buffer
	objcpool.With(func() {
		// The generated wrapper wants a Go deallocator func (a block that
		// would be invoked); an untyped nil sends no block.
		obj := objc.Call[metal.BufferObject](d.obj, objc.Sel("newBufferWithBytesNoCopy:length:options:deallocator:"),
			unsafe.Pointer(&mem[0]), uint(len(mem)), metal.ResourceStorageModeShared, nil)
		if obj.IsNil() {
			return
		}
		b = &Buffer{obj: obj, host: mem}
	})
	if b == nil {
		return nil, fmt.Errorf("mtl: cannot wrap %d bytes at %p without copying (not page-aligned, or over the device's largest buffer)", len(mem), &mem[0])
	}
	return b, nil
}

// Bytes is the host view of the buffer.
func (b *Buffer) Bytes() []byte { return b.host }

// Len is the buffer's length in bytes.
func (b *Buffer) Len() int64 { return int64(len(b.host)) }

// Release frees the buffer once the GPU work that uses it has finished
// (command buffers retain what they use).
func (b *Buffer) Release() {
	objcpool.With(func() { b.obj.Release() })
}

// nsError converts an NSError out-parameter.
func nsError(e foundation.Error) error {
	if e.IsNil() {
		return nil
	}
	return fmt.Errorf("%s", e.LocalizedDescription())
}
