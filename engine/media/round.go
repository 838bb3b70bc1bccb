package media

import "math"

// roundHalfEven is Python 3's round(x) for a float: nearest integer, ties
// to even.
func roundHalfEven(x float64) int {
	return int(math.RoundToEven(x))
}
