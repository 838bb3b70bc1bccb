package compute

// Residency is how a model holds its weights: bound once and kept
// (Resident), or read from the checkpoint for each use and released after
// it (Streaming), which trades disk reads for a peak of a few layers'
// weights. The DiT, the text encoder, the video VAE's decoder and the
// memory planner share it; the weights' precision is a separate choice
// (QuantFormat). The zero value is Resident.
type Residency uint8

// Residencies.
const (
	// Resident binds the weights once and keeps them bound.
	Resident Residency = iota
	// Streaming binds each layer's or block's weights when it runs and
	// releases them after it, reading the next one ahead.
	Streaming
)

// String is the residency's name, as the memory modes spell it:
// "resident" or "streaming".
func (r Residency) String() string {
	if r == Streaming {
		return "streaming"
	}
	return "resident"
}
