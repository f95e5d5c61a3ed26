package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// FileName is the name of the results file inside a results directory.
const FileName = "results.json"

// Save writes r to dir/results.json, creating dir if needed. The file is
// replaced atomically: readers see either the old or the new file, never a
// partial one. An empty r.Schema is written as Schema (r is not changed).
func Save(dir string, r *Results) error {
	if r == nil {
		return errors.New("results: Save: nil results")
	}
	out := *r
	if out.Schema == "" {
		out.Schema = Schema
	}
	if out.Runs == nil {
		out.Runs = []Run{}
	}
	if err := checkFinite(reflect.ValueOf(out), ""); err != nil {
		return fmt.Errorf("results: %s: %w", filepath.Join(dir, FileName), err)
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("results: encode %s: %w", filepath.Join(dir, FileName), err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return WriteFileAtomic(filepath.Join(dir, FileName), append(data, '\n'))
}

// Load reads dir/results.json. It fails with an error naming the file when
// the file is missing, is not JSON (with the line and column of the
// problem), or is not of this version of the format (Schema).
func Load(dir string) (*Results, error) {
	path := filepath.Join(dir, FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no results file (is %s a fabricbench results directory?)", path, dir)
		}
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: empty file", path)
	}
	// Check the schema before decoding the rest, so that a file of another
	// format or version is reported as such rather than as a type error.
	var probe struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, jsonError(path, data, err)
	}
	switch {
	case probe.Schema == nil:
		return nil, fmt.Errorf("%s: no \"schema\" field: not a fabricbench results file (want schema %q)", path, Schema)
	case *probe.Schema != Schema:
		return nil, fmt.Errorf("%s: schema %q is not supported: this fabricbench reads %q", path, *probe.Schema, Schema)
	}
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, jsonError(path, data, err)
	}
	return &r, nil
}

// SavePlots writes p to path (usually runs/<id>/plots.json) atomically,
// creating the parent directory if needed.
func SavePlots(path string, p *Plots) error {
	if p == nil {
		return errors.New("results: SavePlots: nil plots")
	}
	if err := checkFinite(reflect.ValueOf(*p), ""); err != nil {
		return fmt.Errorf("results: %s: %w", path, err)
	}
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("results: encode %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

// LoadPlots reads a plots file written by SavePlots.
func LoadPlots(path string) (*Plots, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no plots file", path)
		}
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: empty file", path)
	}
	var p Plots
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, jsonError(path, data, err)
	}
	return &p, nil
}

// ExitCode is the process exit status for a finished suite (see
// ExitStatuses): 0 when every KPI passed, 1 when a KPI failed, 130
// (ExitInterrupted) when the suite was interrupted; for a suite with a run
// in error, 2 (ExitBadInput) when a run could not be run as asked
// (ErrorKind input) and otherwise 3 (ExitInfrastructure: the backend, lab,
// agents, telemetry or InfluxDB failed, or a KPI could not be evaluated).
// A nil or unknown status is 3.
func ExitCode(r *Results) int {
	if r == nil {
		return ExitInfrastructure
	}
	switch r.Status {
	case Pass:
		return ExitOK
	case Fail:
		return ExitFail
	case Interrupted:
		return ExitInterrupted
	case Error:
		for _, run := range r.Runs {
			if run.Status == Error && run.ErrorKind == ErrorInput {
				return ExitBadInput
			}
		}
	}
	return ExitInfrastructure
}

// MarshalJSON stores the arrays the schema promises (jobs, kpis,
// anomalies, imbalances) as [] when a run has none (it was skipped,
// interrupted or failed early), never as null.
func (r Run) MarshalJSON() ([]byte, error) {
	type plain Run // without the method
	p := plain(r)
	if p.Jobs == nil {
		p.Jobs = []Job{}
	}
	if p.KPIs == nil {
		p.KPIs = []KPI{}
	}
	if p.Anomalies == nil {
		p.Anomalies = []Anomaly{}
	}
	if p.Imbalances == nil {
		p.Imbalances = []Imbalance{}
	}
	return json.Marshal(p)
}

// MarshalJSON stores no checks as [], not null.
func (b Bringup) MarshalJSON() ([]byte, error) {
	type plain Bringup
	p := plain(b)
	if p.Checks == nil {
		p.Checks = []Check{}
	}
	return json.Marshal(p)
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory that is synced and then renamed over path, so that path never
// holds a partial file. The file is created with mode 0644.
func WriteFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// jsonError turns a decoding error into one that names the file and, when
// the error carries an offset, the line and column.
func jsonError(path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset, syn.Error() == "unexpected end of JSON input")
		return fmt.Errorf("%s:%d:%d: malformed JSON: %v", path, line, col, syn)
	case errors.As(err, &typ):
		line, col := lineCol(data, typ.Offset, false)
		field := typ.Field
		if field == "" {
			field = "value"
		}
		return fmt.Errorf("%s:%d:%d: %s: JSON %s where %s is expected", path, line, col, field, typ.Value, typ.Type)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// lineCol converts a byte offset as found in encoding/json errors (the
// number of bytes read, so the offending byte is the one before it) into
// a 1-based line and column. With atEnd, the position is just after the
// last byte (for "unexpected end of JSON input").
func lineCol(data []byte, off int64, atEnd bool) (line, col int) {
	i := int(off) - 1
	if atEnd || i >= len(data) {
		i = len(data)
	}
	i = max(i, 0)
	before := data[:i]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = i - bytes.LastIndexByte(before, '\n')
	return line, col
}

// checkFinite reports the first NaN or ±Inf in v (which JSON cannot
// store) by its JSON path, e.g. "runs[0].kpis[3].value".
func checkFinite(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s is %v: JSON cannot store NaN or infinite numbers", strings.TrimPrefix(path, "."), f)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return checkFinite(v.Elem(), path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if err := checkFinite(v.Field(i), path+"."+name); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if !mayHoldFloat(v.Type().Elem().Kind()) {
			return nil
		}
		for i := range v.Len() {
			if err := checkFinite(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if !mayHoldFloat(v.Type().Elem().Kind()) {
			return nil
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(a, b int) bool { return fmt.Sprint(keys[a]) < fmt.Sprint(keys[b]) })
		for _, k := range keys {
			if err := checkFinite(v.MapIndex(k), fmt.Sprintf("%s[%q]", path, fmt.Sprint(k))); err != nil {
				return err
			}
		}
	}
	return nil
}

func mayHoldFloat(k reflect.Kind) bool {
	switch k {
	case reflect.Float32, reflect.Float64, reflect.Slice, reflect.Array, reflect.Struct, reflect.Map, reflect.Pointer, reflect.Interface:
		return true
	}
	return false
}

// volatile are the results.json fields that record the wall clock.
var volatile = map[string]bool{"started": true, "finished": true, "wall_s": true, "epoch_ns": true, "run_tag": true}

// Volatile reports whether a results.json field (a JSON name) records the
// wall clock: start and finish times, wall times, the run tag (which
// holds the start time) and the telemetry epoch. Two runs of one suite
// differ in these fields only.
func Volatile(field string) bool { return volatile[field] }

// StripVolatile deletes the Volatile fields, at every depth, from a
// results.json decoded into an any (json.Unmarshal).
func StripVolatile(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if volatile[k] {
				delete(x, k)
				continue
			}
			StripVolatile(e)
		}
	case []any:
		for _, e := range x {
			StripVolatile(e)
		}
	}
}
