// Package loratest writes small LoRA files for tests.
package loratest

import (
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// WritePEFT writes a one-module diffusers/PEFT LoRA of rank 2 (the first
// transformer block's attn.to_q, BF16 zeros) at path, with meta as its
// __metadata__ (nil for none), and returns path.
func WritePEFT(t testing.TB, path string, meta map[string]string) string {
	t.Helper()
	es := []safetensors.Entry{
		safetensors.F32("transformer_blocks.0.attn.to_q.lora_A.weight", compute.BF16, compute.Shape{2, 4}, make([]float32, 8)),
		safetensors.F32("transformer_blocks.0.attn.to_q.lora_B.weight", compute.BF16, compute.Shape{4, 2}, make([]float32, 8)),
	}
	if err := safetensors.Write(path, es, meta); err != nil {
		t.Fatal(err)
	}
	return path
}
