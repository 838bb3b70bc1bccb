package configfile

// Layout is an on-disk layout of a snapshot, which decides the file names
// and key sets of each component's configs.
type Layout uint8

// Layouts.
const (
	Original  Layout = iota + 1 // FL2VA/ and Ref2VA/ partitions
	Diffusers                   // diffusers root layout
	Loose                       // component folders at the root without a model_index.json
)

func (l Layout) String() string {
	switch l {
	case Original:
		return "original release layout"
	case Diffusers:
		return "diffusers layout"
	case Loose:
		return "component folders"
	}
	return "unknown layout"
}
