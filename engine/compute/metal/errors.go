package metal

import (
	"fmt"
	"strings"

	"h3studio/shaders"
)

// ShaderError is a shader library that did not compile: the Metal
// compiler's diagnostics, each with its file, line and the kernel around it.
type ShaderError struct {
	Diagnostics []shaders.Diagnostic
	Log         string // the compiler's full message
}

// NewShaderError parses a compiler log.
func NewShaderError(log string) *ShaderError {
	return &ShaderError{Diagnostics: shaders.ParseDiagnostics(log), Log: log}
}

func (e *ShaderError) Error() string {
	var errs []string
	for _, d := range e.Diagnostics {
		if d.Severity == "error" {
			errs = append(errs, d.String())
		}
	}
	if len(errs) == 0 {
		return "metal: the shader library does not compile: " + strings.TrimSpace(e.Log)
	}
	if len(errs) > 8 {
		errs = append(errs[:8], fmt.Sprintf("… and %d more", len(errs)-8))
	}
	return "metal: the shader library does not compile:\n  " + strings.Join(errs, "\n  ")
}

// MemoryError reports a GPU whose recommended working set is below what
// H3 Studio needs.
type MemoryError struct {
	Device     string
	Have, Need int64
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("metal: %s can use %.1f GB of memory, H3 Studio needs at least %.1f GB", e.Device, float64(e.Have)/1e9, float64(e.Need)/1e9)
}
