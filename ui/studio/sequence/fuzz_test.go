package sequence

import (
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics; whatever it accepts is valid, snapped to
// frames, and survives Marshal → Parse unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"version": 1, "clips": []}`,
		`{"version": 1, "clips": [{"source": "take1/out.mp4", "in": 0.25, "out": 1.5, "mute": false, "transition": {"kind": "crossfade", "seconds": 0.5}}]}`,
		`{"version": 1, "name": "x", "clips": [{"source": "/a", "in": 0, "out": 0, "transition": {"kind": "cut", "seconds": 0}}], "audio": {"source": "m.wav", "gain_db": -6}}`,
		`{"version": 1, "clips": [{"source": "a", "in": 1e308, "out": 1e309}]}`,
		`{"version": 1, "clips": [{"source": "a", "in": 0.02, "out": 0.03}]}`,
		`{"version": 1, "clips": [{"source": "a", "in": 1e300, "out": 0}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted an invalid sequence: %v", err)
		}
		for _, c := range s.Clips {
			if Snap(c.In) != c.In || Snap(c.Out) != c.Out {
				t.Fatalf("trims off the frame grid: %+v", c)
			}
		}
		b, err := s.Marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		s2, err := Parse(b)
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, s, s2)
		}
	})
}
