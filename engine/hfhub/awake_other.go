//go:build !darwin

package hfhub

// KeepAwake is a no-op outside macOS.
func KeepAwake() (release func()) { return func() {} }
