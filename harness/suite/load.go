package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/goccy/go-yaml"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/internal/yamlx"
	"github.com/fabricbench/fabricbench/inventory"
)

// Load reads, decodes and validates a suite file; see Parse.
func Load(path string) (*Suite, error) {
	return LoadWith(path, Options{})
}

// Options change how a suite is loaded.
type Options struct {
	// Inventory replaces the suite's fabric (in every matrix point) with
	// that of a hardware inventory file (fabricbench run --inventory).
	Inventory string
}

// LoadWith is Load with options.
func LoadWith(path string, o Options) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(path, data, o)
}

// Parse decodes and validates a suite document. name is the file name used
// in errors, stored as Suite.File and (without its extension) the default
// suite name; relative paths in the suite are resolved against its
// directory.
//
// Unknown keys and values of the wrong type are errors, as is everything
// the field comments in types.go rule out. Problems are returned as an
// ErrorList, each naming the file, line, column and field path:
//
//	smoke.yaml:14:11: jobs[1].size: "2Mib" is not a size (want e.g. 2MiB, 512KB)
//
// Defaults are filled in (see types.go). With a matrix every point is
// validated too, and problems in a matrix value are reported at the value,
// e.g. matrix["transport.lb"][1]; the returned Suite is then the document
// as written (with defaults), and Points gives the runs.
func Parse(name string, data []byte) (*Suite, error) {
	return parse(name, data, Options{})
}

func parse(name string, data []byte, o Options) (*Suite, error) {
	ld := newLoader(name, data)
	if o.Inventory != "" {
		abs, err := filepath.Abs(o.Inventory)
		if err != nil {
			return nil, err
		}
		ld.inventory = abs
	}
	y, errs := ld.parse()
	if errs != nil {
		return nil, errs.Finish(name)
	}
	s, d := ld.build(y, nil)
	if s == nil {
		return nil, d.errs.Finish(name)
	}
	s.src = data
	s.inventory = ld.inventory
	s.cache = ld.cache
	if (len(s.Matrix) == 0 && len(s.Tests) == 0) || len(d.bad) > 0 || (len(s.Tests) > 0 && len(d.errs) > 0) {
		if err := d.errs.Finish(name); err != nil {
			return nil, err
		}
		return s, nil
	}
	if len(s.Tests) > 0 {
		if _, errs := ld.testPoints(s, nil, nil); errs != nil {
			return nil, errs.Finish(name)
		}
		return s, nil
	}
	if _, errs := ld.expand(y, d); errs != nil {
		return nil, errs.Finish(name)
	}
	return s, nil
}

// LoadedFabric is the suite's fabric as the checker loaded it (built once
// per distinct fabric across the points of a suite, shared read-only),
// else LoadFabric's.
func (s *Suite) LoadedFabric() (*inventory.Fabric, error) {
	if s.fab != nil {
		return s.fab, nil
	}
	return s.LoadFabric()
}

// LoadFabric builds the suite's fabric from Fabric.Spec or Fabric.File (as
// resolved by Load).
func (s *Suite) LoadFabric() (*inventory.Fabric, error) {
	switch {
	case s.Fabric.Inventory != "":
		return LoadInventoryFabric(s.Fabric.Inventory)
	case s.Fabric.Spec != "" && s.Fabric.File != "":
		return nil, fmt.Errorf("suite %s: set only one of fabric.spec and fabric.file", s.Name)
	case s.Fabric.Spec != "":
		return inventory.ParseSpec(s.Fabric.Spec)
	case s.Fabric.File != "":
		file := s.Fabric.File
		if !filepath.IsAbs(file) && s.File != "" {
			file = filepath.Join(filepath.Dir(s.File), file)
		}
		return inventory.Load(file)
	}
	return nil, fmt.Errorf("suite %s: no fabric (set fabric.spec or fabric.file)", s.Name)
}

// loader decodes one document, and each matrix point of it.
type loader struct {
	file  string
	dir   string
	data  []byte
	cache map[string]fabricResult
	// inventory replaces every point's fabric (Options.Inventory).
	inventory string
	// check, when set, is run on every validated suite (see PointsChecked).
	check CheckFunc
	// test, when >= 0, makes parse compose that test's document
	// (composeTest); comp are its substitutions and mprefix the matrix
	// path of the test's matrix keys.
	test    int
	cur     *Test
	comp    []subst
	mprefix map[string]string
	// na, when set, is run on every validated point of a test: what it
	// reports makes the point not applicable (Point.NotApplicable)
	// instead of an error.
	na CheckFunc
}

func newLoader(name string, data []byte) *loader {
	return &loader{file: name, dir: filepath.Dir(name), data: data, cache: make(map[string]fabricResult), test: -1}
}

// parse parses the document into an AST, within yamlx's limits (its Body
// is nil for an empty document).
func (ld *loader) parse() (*yamlx.Doc, ErrorList) {
	y, errs := yamlx.Parse(ld.file, ld.data, "a suite file")
	if errs != nil || ld.test < 0 {
		return y, errs
	}
	subs, keys, err := composeTest(y, ld.test)
	if err != nil {
		return nil, ErrorList{{File: ld.file, Path: fileerr.Index(testsField, ld.test), Msg: err.Error()}}
	}
	ld.comp = subs
	ld.mprefix = keys
	return y, nil
}

var suiteType = reflect.TypeOf(Suite{})

// build checks, decodes, defaults and validates a document body. It
// returns a nil Suite when the document does not decode; the doc holds the
// problems either way.
func (ld *loader) build(y *yamlx.Doc, subst []subst) (*Suite, *doc) {
	body := y.Body
	d := newDoc(y, append(subst, ld.comp...))
	d.mprefix = ld.mprefix
	s := new(Suite)
	if body != nil {
		if err := d.walk("", body, suiteType, 0); err != nil || d.bad[""] {
			return nil, d
		}
		for _, drop := range d.drops {
			drop()
		}
		if err := yaml.NodeToValue(body, s, yaml.DisallowUnknownField(), yaml.AllowDuplicateMapKey()); err != nil {
			// After problems found by walk, a decoding error is most likely
			// their consequence (e.g. an alias to an anchor in a dropped key).
			if len(d.errs) == 0 {
				d.decodeError(err)
			}
			return nil, d
		}
	}
	s.File = ld.file
	s.Test = ld.cur
	d.validating = true
	c := &checker{d: d, s: s, dir: ld.dir, cache: ld.cache, inventory: ld.inventory}
	c.run()
	s.fab = c.fab
	if ld.check != nil {
		ld.check(s, d.errf)
	}
	return s, d
}

// LoadInventoryFabric is the fabric of a hardware inventory file.
func LoadInventoryFabric(path string) (*inventory.Fabric, error) {
	hw, err := inventory.LoadHardware(path)
	if err != nil {
		return nil, err
	}
	return hw.Fabric()
}
