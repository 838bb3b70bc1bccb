// Package objcpool is the one autorelease-pool helper of H3 Studio's macOS
// code (darwin/mtl, darwin/avf): With runs a function inside an Objective-C
// autorelease pool and recovers a Go panic inside it, so the pool is popped
// before the panic continues. darwinkit's objc.WithAutoreleasePool runs its
// function as a cgo callback; a panic that unwinds through that C frame skips
// the pool pop and the callback handle's release, and an unrecovered one
// ends the process. The lifetime lint (darwin/lifetime_test.go) requires
// every darwinkit and objc call of darwin/ to run inside With.
//
// macOS-only (//go:build darwin) except this file.
package objcpool
