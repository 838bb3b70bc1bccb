package safetensors

import (
	"fmt"
	"maps"
	"slices"

	"h3studio/engine/compute"
)

// Spec describes one tensor of a component's inventory: what its Load binds,
// in the released (original) layout. Components export their inventory as a
// function of their config so that planning (a data-less Source), the
// full-size sparse benchmarks and the demo checkpoint writer all use the same
// list as Load.
type Spec struct {
	Name  string
	DType compute.DType
	Shape compute.Shape
	Init  Init // how a random test checkpoint fills it
}

// InitKind names a random-initialisation rule for test checkpoints.
type InitKind uint8

// Initialisation rules.
const (
	InitNormal  InitKind = iota // N(0, Scale²); Scale 0 means 1/sqrt(fan-in) (the last axis … all but the first)
	InitOnes                    // 1 + N(0, Scale²) (norm weights)
	InitConst                   // every element = Scale
	InitValues                  // Values, exactly (computed buffers such as filters)
	InitUniform                 // U[Lo, Hi)
)

// Init is a random-initialisation rule.
type Init struct {
	Kind   InitKind
	Scale  float32
	Lo, Hi float32
	Values []float32
}

// Inventory is a component's list of tensors.
type Inventory []Spec

// Bytes is the storage of every tensor.
func (inv Inventory) Bytes() int64 {
	var n int64
	for _, s := range inv {
		n += int64(s.Shape.NumElements()) * int64(s.DType.Size())
	}
	return n
}

// Params is the number of elements of every tensor.
func (inv Inventory) Params() int64 {
	var n int64
	for _, s := range inv {
		n += int64(s.Shape.NumElements())
	}
	return n
}

// Source returns a data-less Source over the inventory: Info answers from
// the specs and Data returns nil, nil, so a Binder on a shape-only backend
// binds storage without reading anything (planning).
func (inv Inventory) Source() Source {
	m := make(map[string]TensorInfo, len(inv))
	for _, s := range inv {
		m[s.Name] = TensorInfo{Name: s.Name, DType: s.DType, Shape: s.Shape.Clone()}
	}
	return &inventorySource{m: m}
}

// Check returns an error when two specs share a name or a shape is invalid.
func (inv Inventory) Check() error {
	seen := map[string]bool{}
	for _, s := range inv {
		if seen[s.Name] {
			return fmt.Errorf("safetensors: inventory lists %q twice", s.Name)
		}
		seen[s.Name] = true
		for _, d := range s.Shape {
			if d < 0 {
				return fmt.Errorf("safetensors: inventory %q has shape %v", s.Name, s.Shape)
			}
		}
		if s.Init.Kind == InitValues && len(s.Init.Values) != s.Shape.NumElements() {
			return fmt.Errorf("safetensors: inventory %q: %d init values for shape %v", s.Name, len(s.Init.Values), s.Shape)
		}
	}
	return nil
}

type inventorySource struct{ m map[string]TensorInfo }

func (s *inventorySource) Info(name string) (TensorInfo, bool) { t, ok := s.m[name]; return t, ok }
func (s *inventorySource) Data(name string) ([]byte, error) {
	if _, ok := s.m[name]; !ok {
		return nil, fmt.Errorf("safetensors: inventory has no tensor %q", name)
	}
	return nil, nil
}
func (s *inventorySource) Names() []string {
	return slices.Sorted(maps.Keys(s.m))
}
