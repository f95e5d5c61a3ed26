package harness

import "testing"

func TestRegisterRefusesDuplicates(t *testing.T) {
	factory := func() Backend { return nil }
	Register("register-test-dup", factory)
	t.Cleanup(func() {
		regMu.Lock()
		delete(registry, "register-test-dup")
		regMu.Unlock()
	})
	for _, c := range []struct {
		name    string
		factory func() Backend
		want    string
	}{
		{"register-test-dup", factory, `harness: backend "register-test-dup" registered twice`},
		{"", factory, "harness: Register needs a backend name and a factory"},
		{"register-test-nil", nil, "harness: Register needs a backend name and a factory"},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.want {
					t.Errorf("Register(%q): panic %v, want %q", c.name, r, c.want)
				}
			}()
			Register(c.name, c.factory)
		}()
	}
}
