//go:build !unix

package safetensors

import "os"

// mapFile reads the file into memory where mmap is unavailable.
func mapFile(path string) ([]byte, func() error, error) {
	b, err := os.ReadFile(path)
	return b, func() error { return nil }, err
}
