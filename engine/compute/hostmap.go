package compute

// HostMapper is implemented by backends that register a page-aligned host
// mapping once — a checkpoint shard mapped as a whole — and then view the
// tensors inside it by offset, so that Wrap never copies weights (Metal:
// newBufferWithBytesNoCopy over the shard). Backends without it copy in Wrap
// or view host memory directly (the CPU backend). The caller keeps region
// mapped while tensors viewing it are in use, as for Wrap.
type HostMapper interface {
	// MapHost registers region; registering it again is a no-op. An error
	// leaves Wrap copying.
	MapHost(region []byte) error
	// UnmapHost forgets region (before it is unmapped).
	UnmapHost(region []byte)
}
