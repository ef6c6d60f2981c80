package report

import (
	"fmt"
	"io"
)

// Line writes one line for people: format and a newline, with every string argument passed through
// Escape (paths may hold control characters). Non-string arguments are formatted as they are.
func Line(w io.Writer, format string, args ...any) error {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = Escape(s)
		}
	}
	_, err := fmt.Fprintf(w, format+"\n", args...)
	return err
}
