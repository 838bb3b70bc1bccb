package cpu

import "unsafe"

func overlaps(a *byte, na int, b *byte, nb int) bool {
	pa, pb := uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b))
	return pa < pb+uintptr(nb) && pb < pa+uintptr(na)
}
