package envconfig

import (
	"strings"
	"testing"

	"h3studio/engine/compute"
)

var testOracle = compute.RegisterOracle("envconfig-test", "a test oracle")

func TestOracles(t *testing.T) {
	t.Setenv(OracleVar, "")
	if o, err := Oracles(); err != nil || o != 0 {
		t.Fatalf("unset: %v, %v", o, err)
	}
	t.Setenv(OracleVar, " envconfig-test ")
	if o, err := Oracles(); err != nil || !o.Has(testOracle) {
		t.Fatalf("envconfig-test: %v, %v", o, err)
	}
	t.Setenv(OracleVar, "envconfig-test,nonsense")
	if _, err := Oracles(); err == nil || !strings.Contains(err.Error(), "H3_ORACLE") || !strings.Contains(err.Error(), "nonsense") {
		t.Fatalf("an unknown oracle gave %v", err)
	}
}
