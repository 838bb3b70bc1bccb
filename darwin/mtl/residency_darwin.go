//go:build darwin

package mtl

import (
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"

	"h3studio/darwin/objcpool"
)

// ResidencySet keeps a set of buffers resident for a queue's command
// buffers (MTLResidencySet, macOS 15): the mapped checkpoint shards stay
// wired without each command buffer listing them. darwinkit v0.5.0 predates
// it, so every call is a raw message send.
type ResidencySet struct {
	obj objc.Object
}

// NewResidencySet makes an empty set, or returns ErrUnsupported before macOS 15.
func (d *Device) NewResidencySet(capacity int) (*ResidencySet, error) {
	if !d.obj.RespondsToSelector(objc.Sel("newResidencySetWithDescriptor:error:")) {
		return nil, ErrUnsupported
	}
	var r *ResidencySet
	var err error
	objcpool.With(func() {
		cls := objc.GetClass("MTLResidencySetDescriptor")
		desc := objc.Call[objc.Object](cls, objc.Sel("new"))
		defer desc.Release()
		objc.Call[objc.Void](desc, objc.Sel("setInitialCapacity:"), uint(capacity))
		var e foundation.Error
		set := objc.Call[objc.Object](d.obj, objc.Sel("newResidencySetWithDescriptor:error:"), desc, unsafe.Pointer(&e))
		if set.IsNil() {
			err = nsError(e)
			if err == nil {
				err = ErrUnsupported
			}
			return
		}
		r = &ResidencySet{obj: set}
	})
	return r, err
}

// Add puts b in the set (effective after Commit).
func (r *ResidencySet) Add(b *Buffer) {
	objcpool.With(func() { objc.Call[objc.Void](r.obj, objc.Sel("addAllocation:"), b.obj) })
}

// Remove takes b out of the set (effective after Commit).
func (r *ResidencySet) Remove(b *Buffer) {
	objcpool.With(func() { objc.Call[objc.Void](r.obj, objc.Sel("removeAllocation:"), b.obj) })
}

// Commit applies the additions and removals and asks for residency.
func (r *ResidencySet) Commit() {
	objcpool.With(func() {
		objc.Call[objc.Void](r.obj, objc.Sel("commit"))
		objc.Call[objc.Void](r.obj, objc.Sel("requestResidency"))
	})
}

// Release frees the set.
func (r *ResidencySet) Release() { objcpool.With(func() { r.obj.Release() }) }

// AddResidencySet attaches the set to every command buffer of the queue.
func (q *Queue) AddResidencySet(r *ResidencySet) {
	objcpool.With(func() { objc.Call[objc.Void](q.obj, objc.Sel("addResidencySet:"), r.obj) })
}
