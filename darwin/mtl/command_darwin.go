//go:build darwin

package mtl

import (
	"sync"
	"time"
	"unsafe"

	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

// Queue is a command queue: command buffers run in commit order.
type Queue struct {
	obj metal.CommandQueueObject
}

// NewQueue makes a command queue.
func (d *Device) NewQueue() (*Queue, error) {
	var q *Queue
	objc.WithAutoreleasePool(func() {
		obj := d.obj.NewCommandQueue()
		if !obj.IsNil() {
			q = &Queue{obj: obj}
		}
	})
	if q == nil {
		return nil, ErrNoDevice
	}
	return q, nil
}

// Release frees the queue.
func (q *Queue) Release() { objc.WithAutoreleasePool(func() { q.obj.Release() }) }

// CommandBuffer is a batch of GPU work. Its completion (status, error, GPU
// time) is delivered to the callback given to Commit.
type CommandBuffer struct {
	obj  metal.CommandBufferObject
	enc  *Encoder
	once sync.Once
}

// CommandBuffer starts a command buffer (it retains the resources it uses).
func (q *Queue) CommandBuffer() *CommandBuffer {
	var c *CommandBuffer
	objc.WithAutoreleasePool(func() {
		obj := q.obj.CommandBuffer()
		obj.Retain() // autoreleased: keep it past this pool
		c = &CommandBuffer{obj: obj}
	})
	return c
}

// Encoder returns the open compute encoder, starting one (serial dispatch:
// each dispatch sees the writes of the ones before it).
func (c *CommandBuffer) Encoder() *Encoder {
	if c.enc == nil {
		objc.WithAutoreleasePool(func() {
			obj := c.obj.ComputeCommandEncoderWithDispatchType(metal.DispatchTypeSerial)
			obj.Retain()
			c.enc = &Encoder{obj: obj}
		})
	}
	return c.enc
}

// EndEncoding closes the open compute encoder, if any (before committing or
// before another encoder, such as MPSGraph's, writes into the buffer).
func (c *CommandBuffer) EndEncoding() {
	if c.enc == nil {
		return
	}
	objc.WithAutoreleasePool(func() {
		// Protocol types do not inherit in darwinkit: endEncoding lives on
		// the MTLCommandEncoder view.
		metal.CommandEncoderObject{Object: c.enc.obj.Object}.EndEncoding()
		c.enc.obj.Release()
	})
	c.enc = nil
}

// Completion is what a finished command buffer reports.
type Completion struct {
	Err     error         // nil, or a *CommandError
	GPUTime time.Duration // GPUEndTime − GPUStartTime
}

// Commit ends encoding and submits the buffer; done (if not nil) runs on a
// Metal thread when the GPU has finished it.
func (c *CommandBuffer) Commit(done func(Completion)) {
	c.EndEncoding()
	objc.WithAutoreleasePool(func() {
		if done != nil {
			c.obj.AddCompletedHandler(func(cb metal.CommandBufferObject) {
				comp := Completion{GPUTime: time.Duration(float64(cb.GPUEndTime()-cb.GPUStartTime()) * float64(time.Second))}
				if st := cb.Status(); st == metal.CommandBufferStatusError {
					msg := "unknown error"
					if e := cb.Error(); !e.IsNil() {
						msg = e.LocalizedDescription()
					}
					comp.Err = &CommandError{Status: int(st), Msg: msg}
				}
				done(comp)
			})
		}
		c.obj.Commit()
	})
}

// Wait blocks until the GPU has finished the committed buffer.
func (c *CommandBuffer) Wait() {
	objc.WithAutoreleasePool(func() { c.obj.WaitUntilCompleted() })
}

// Release drops the Go side's reference (after Commit; Metal keeps the
// buffer alive until it completes).
func (c *CommandBuffer) Release() {
	c.once.Do(func() { objc.WithAutoreleasePool(func() { c.obj.Release() }) })
}

// Encoder records compute dispatches.
type Encoder struct {
	obj metal.ComputeCommandEncoderObject
}

// SetPipeline selects the kernel of the next dispatches.
func (e *Encoder) SetPipeline(p *Pipeline) {
	objc.WithAutoreleasePool(func() { e.obj.SetComputePipelineState(p.obj) })
}

// SetBuffer binds bytes [offset, end) of b at [[buffer(index)]].
func (e *Encoder) SetBuffer(b *Buffer, offset int64, index int) {
	objc.WithAutoreleasePool(func() { e.obj.SetBufferOffsetAtIndex_(b.obj, uint(offset), uint(index)) })
}

// SetBytes copies small argument bytes (at most 4 KiB) at [[buffer(index)]].
func (e *Encoder) SetBytes(b []byte, index int) {
	objc.WithAutoreleasePool(func() { e.obj.SetBytesLengthAtIndex(unsafe.Pointer(&b[0]), uint(len(b)), uint(index)) })
}

// SetThreadgroupMemory sizes [[threadgroup(index)]].
func (e *Encoder) SetThreadgroupMemory(n, index int) {
	objc.WithAutoreleasePool(func() { e.obj.SetThreadgroupMemoryLengthAtIndex(uint((n+15)/16*16), uint(index)) })
}

// Dispatch launches groups threadgroups of threads threads each.
func (e *Encoder) Dispatch(groups, threads [3]int) {
	objc.WithAutoreleasePool(func() {
		e.obj.DispatchThreadgroupsThreadsPerThreadgroup(
			metal.Size{Width: uint64(groups[0]), Height: uint64(groups[1]), Depth: uint64(groups[2])},
			metal.Size{Width: uint64(threads[0]), Height: uint64(threads[1]), Depth: uint64(threads[2])})
	})
}
