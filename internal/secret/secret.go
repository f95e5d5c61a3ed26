// Package secret resolves secret references: "env:NAME" reads an
// environment variable, "file:PATH" a file (trailing newline trimmed).
// Values are returned to the caller only; nothing here logs them.
package secret

import (
	"fmt"
	"os"
	"strings"
)

// Resolve returns the secret a reference points to.
func Resolve(ref string) (string, error) {
	kind, arg, ok := strings.Cut(ref, ":")
	if !ok || arg == "" {
		return "", fmt.Errorf("secret reference %q: want env:NAME or file:PATH", ref)
	}
	switch kind {
	case "env":
		v, ok := os.LookupEnv(arg)
		if !ok {
			return "", fmt.Errorf("secret reference %q: environment variable %s is not set", ref, arg)
		}
		return v, nil
	case "file":
		b, err := os.ReadFile(arg)
		if err != nil {
			return "", fmt.Errorf("secret reference %q: %w", ref, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return "", fmt.Errorf("secret reference %q: unknown kind %q (want env or file)", ref, kind)
}

// Check validates the syntax of a reference without resolving it.
func Check(ref string) error {
	kind, arg, ok := strings.Cut(ref, ":")
	if !ok || arg == "" || (kind != "env" && kind != "file") {
		return fmt.Errorf("secret reference %q: want env:NAME or file:PATH", ref)
	}
	return nil
}
