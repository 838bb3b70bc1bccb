package videovae

import "h3studio/engine/safetensors"

// Encoder is the causal 3-D CNN encoder with quant_conv.
type Encoder struct{}

func loadEncoder(w *safetensors.Binder, cfg *Config) *Encoder { return nil }
