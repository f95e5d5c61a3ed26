package suite

import (
	"errors"
	"fmt"

	"github.com/fabricbench/fabricbench/units"
)

// badQuantity is the message for a size or duration that did not parse:
// above the units package's maximum it names the limit, otherwise it says
// what the value is not (what: "a size", "a duration", "neither bdp nor a
// size") and gives examples (want).
func badQuantity(v, what, want string, err error) string {
	var pe *units.ParseError
	if units.KindOf(err) == units.TooLarge && errors.As(err, &pe) {
		return fmt.Sprintf("%q is too large (at most %s)", v, pe.Max)
	}
	return fmt.Sprintf("%q is %s (%s)", v, what, want)
}
