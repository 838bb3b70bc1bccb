package mtl

import "testing"

func TestFamilyName(t *testing.T) {
	for f, want := range map[int]string{1007: "apple7", 1010: "apple10", 5001: "metal3", 5002: "metal4", 3: "family3"} {
		if got := FamilyName(f); got != want {
			t.Errorf("FamilyName(%d) = %q, want %q", f, got, want)
		}
	}
}
