package fileerr

import (
	"errors"
	"strings"
	"testing"
)

func TestPaths(t *testing.T) {
	p := Field(Index(Field("", "jobs"), 1), "size")
	if p != "jobs[1].size" {
		t.Errorf("path %q", p)
	}
	if q := Field("labels", "fabricbench.asn"); q != `labels["fabricbench.asn"]` {
		t.Errorf("dotted key %q", q)
	}
	for in, want := range map[string]string{"jobs[1].size": "jobs[1]", "jobs[1]": "jobs", "jobs": "", `m["a.b"].c`: `m["a.b"]`, `m["a.b"]`: "m"} {
		if got := Parent(in); got != want {
			t.Errorf("Parent(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"ipv4", "ipv6", "interface", "node"}
	for in, want := range map[string]string{"ip": "ipv4", "Interfce": "interface", "x": "", "mac": "", "nodes": "node"} {
		if got := Suggest(in, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestListFinish(t *testing.T) {
	var l List
	if l.Finish("f") != nil {
		t.Fatal("empty list is an error")
	}
	for i := 30; i > 0; i-- {
		l = append(l, &Error{File: "f", Line: i, Column: 1, Msg: "bad"}, &Error{File: "f", Line: i, Column: 1, Msg: "bad"})
	}
	err := l.Finish("f")
	var list List
	if !errors.As(err, &list) || len(list) != MaxErrors+1 {
		t.Fatalf("finished list: %v", err)
	}
	if list[0].Line != 1 || !strings.Contains(list[MaxErrors].Msg, "10 more not shown") {
		t.Errorf("first %v, last %v", list[0], list[MaxErrors])
	}
	var e *Error
	if !errors.As(err, &e) || e.Error() != "f:1:1: bad" {
		t.Errorf("errors.As *Error: %v", e)
	}
}
