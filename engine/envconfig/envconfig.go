// Package envconfig is the one place H3 Studio reads its environment
// (house rule 10): variables that select diagnostic paths are parsed here,
// validated, and handed to the code that uses them as typed values.
package envconfig

import (
	"fmt"
	"os"

	"h3studio/engine/compute"
)

// OracleVar names the comma-separated list of oracle paths to select
// (compute.ParseOracles), e.g. H3_ORACLE=dit-unfused,metal-hand-gemm.
const OracleVar = "H3_ORACLE"

// Oracles returns the oracles H3_ORACLE selects (none when it is unset). An
// unknown name is an error listing the known ones: callers fail at startup.
// Only oracles registered by packages linked into the program are known.
func Oracles() (compute.Oracles, error) {
	o, err := compute.ParseOracles(os.Getenv(OracleVar))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", OracleVar, err)
	}
	return o, nil
}
