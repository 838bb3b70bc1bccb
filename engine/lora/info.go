package lora

import (
	"fmt"
	"strings"
)

// Info summarises a LoRA file from its header (no weight is read).
type Info struct {
	Format  string // key families, e.g. "diffusers/PEFT"
	Modules int
	Ranks   []int
	Size    int64
	Unknown int // tensors that name no MiniMax-H3 module
}

// Summary is a one-line description: "diffusers/PEFT, 312 modules, rank 128, 1.29 GiB".
func (i Info) Summary() string {
	rs := make([]string, len(i.Ranks))
	for k, r := range i.Ranks {
		rs[k] = fmt.Sprint(r)
	}
	s := fmt.Sprintf("%s, %d modules", i.Format, i.Modules)
	if len(rs) > 0 {
		s += ", rank " + strings.Join(rs, "/")
	}
	s += fmt.Sprintf(", %.2f GiB", float64(i.Size)/(1<<30))
	if i.Unknown > 0 {
		s += fmt.Sprintf(", %d tensors it cannot apply", i.Unknown)
	}
	return s
}

// Inspect reads a LoRA file's header and checks that it is a MiniMax-H3
// LoRA in a known format.
func Inspect(path string) (Info, error) {
	f, err := ReadShapes(path)
	if err != nil {
		return Info{}, err
	}
	var formats []string
	for _, x := range f.Formats() {
		formats = append(formats, string(x))
	}
	return Info{Format: strings.Join(formats, " + "), Modules: len(f.Modules), Ranks: f.Ranks(), Size: f.Size, Unknown: len(f.Unknown)}, nil
}
