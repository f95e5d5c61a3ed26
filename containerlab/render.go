package containerlab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/internal/yamlx"
	"github.com/goccy/go-yaml"
)

// A topology file is rendered the way containerlab renders it before it
// is decoded: first as a Go text/template whose data is the file's
// variables file, then by expanding environment variables.
//
//   - The variables file is the one given (containerlab --vars), else the
//     first of PATH_vars.yaml, PATH_vars.yml and PATH_vars.json that
//     exists, where PATH is the topology path without its last extension
//     (lab.clab.yml → lab.clab_vars.yaml). Without one the data is nil.
//   - The template functions are containerlab's: ToJSON, ToJSONPretty,
//     add, subtract, mul, div, rem, seq, strings.Split,
//     strings.ReplaceAll, conv.Join and conv.ToInt.
//   - Environment variables: $VAR and ${VAR} are replaced by their value;
//     ${VAR:=default}, ${VAR:-default}, ${VAR=default} and ${VAR-default}
//     give a default (the colon forms also for an empty value);
//     ${VAR:+alt} and ${VAR+alt} the alternative when set. A variable that
//     is not set (or empty) and has no default is left as $VAR (so "$1" in
//     a shell command, or a password with a '$', survives; ${VAR} loses
//     its braces, as containerlab's expansion does), and "$$" is one '$'.
//
// containerlab expands with a fork of a8m/envsubst that adds the
// "leave unset variables as written" mode; neither that fork nor a
// library with that mode is available to this project, so Expand
// implements the same rules.

// Rendered is a topology document after rendering.
type Rendered struct {
	// Text is the document to decode.
	Text []byte
	// VarsFile is the variables file used ("" when none).
	VarsFile string
	// Changed reports whether rendering changed the text; Shifted whether
	// it changed the number of lines (positions in errors then refer to
	// the rendered text, not the file as written).
	Changed, Shifted bool
}

// RenderOptions tune Render.
type RenderOptions struct {
	// VarsFile overrides the variables file next to the topology.
	VarsFile string
	// LookupEnv looks environment variables up (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
}

// Render renders a topology document (read from path) as containerlab
// does. Template and variables-file errors name the file and, where the
// template engine says it, the line.
func Render(path string, src []byte, opt RenderOptions) (*Rendered, error) {
	out := &Rendered{Text: src}
	lookup := opt.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	text := src
	if bytes.Contains(src, []byte("{{")) {
		data, varsFile, err := templateVars(path, opt.VarsFile)
		if err != nil {
			return nil, err
		}
		out.VarsFile = varsFile
		t, err := template.New(filepath.Base(path)).Funcs(templateFuncs()).Parse(string(src))
		if err != nil {
			return nil, templateError(path, err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return nil, templateError(path, err)
		}
		text = b.Bytes()
	}
	if bytes.IndexByte(text, '$') >= 0 {
		text = []byte(Expand(string(text), lookup))
	}
	out.Text = text
	out.Changed = !bytes.Equal(text, src)
	// Positions in the rendered text are those of the file as written
	// only when every line stayed where it was: no control action (range,
	// if, ...) and the same number of lines.
	out.Shifted = out.Changed && (controlRe.Match(src) || bytes.Count(text, []byte("\n")) != bytes.Count(src, []byte("\n")))
	return out, nil
}

// controlRe finds template actions that can move lines.
var controlRe = regexp.MustCompile(`\{\{-?\s*(range|if|else|with|define|template|block|end)\b`)

// templateLineRe finds the line in text/template's messages:
// "template: NAME:LINE:COL: ..." or "template: NAME:LINE: ...".
var templateLineRe = regexp.MustCompile(`^template: [^:]*:(\d+)(?::(\d+))?: (.*)$`)

// templateError turns a text/template error into a fileerr.Error at the
// line it names.
func templateError(path string, err error) error {
	msg := err.Error()
	e := &fileerr.Error{File: path}
	if m := templateLineRe.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		if m[2] != "" {
			// text/template counts columns from 0.
			c, _ := strconv.Atoi(m[2])
			e.Column = c + 1
		}
		msg = m[3]
	}
	e.Msg = "template: " + msg
	return fileerr.List{e}
}

// templateVars reads the variables file of a topology.
func templateVars(path, varsFile string) (any, string, error) {
	if varsFile == "" {
		base := strings.TrimSuffix(path, filepath.Ext(path))
		for _, ext := range []string{".yaml", ".yml", ".json"} {
			p := base + "_vars" + ext
			if _, err := os.Stat(p); err == nil {
				varsFile = p
				break
			}
		}
		if varsFile == "" {
			return nil, "", nil
		}
	}
	b, err := os.ReadFile(varsFile)
	if err != nil {
		return nil, varsFile, fileerr.List{{File: varsFile, Msg: err.Error()}}
	}
	if _, errs := yamlx.Parse(varsFile, b, "a variables file"); errs != nil {
		return nil, varsFile, errs.Finish(varsFile)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, varsFile, fileerr.List{yamlx.SyntaxError(varsFile, err)}
	}
	return v, varsFile, nil
}

// Expand expands environment variables in s as described in Render.
func Expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		n := s[i+1]
		switch {
		case n == '$':
			b.WriteByte('$')
			i += 2
		case n == '{':
			end := closingBrace(s, i+2)
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			if v, ok := expandBraced(s[i+2:end], lookup); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : end+1])
			}
			i = end + 1
		case isNameStart(n):
			j := i + 1
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			if v, ok := lookup(s[i+1 : j]); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i:j])
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// closingBrace returns the index of the '}' closing a "${" whose body
// starts at from (nested "${...}" in defaults are skipped), or -1.
func closingBrace(s string, from int) int {
	depth := 0
	for i := from; i < len(s); i++ {
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			depth++
			i++
		case s[i] == '}':
			if depth == 0 {
				return i
			}
			depth--
		case s[i] == '\n':
			return -1
		}
	}
	return -1
}

// expandBraced expands the body of ${...}; ok is false when it is left
// as written (an unset variable without a default, or not a variable).
func expandBraced(body string, lookup func(string) (string, bool)) (string, bool) {
	j := 0
	for j < len(body) && isNameChar(body[j]) {
		j++
	}
	name := body[:j]
	if name == "" || !isNameStart(name[0]) {
		return "", false
	}
	v, set := lookup(name)
	rest := body[j:]
	if rest == "" {
		if !set || v == "" {
			// containerlab (its envsubst) writes an unset or empty ${VAR}
			// back as $VAR.
			return "$" + name, true
		}
		return v, true
	}
	colon := strings.HasPrefix(rest, ":")
	op := strings.TrimPrefix(rest, ":")
	if op == "" {
		return "", false
	}
	arg := Expand(op[1:], lookup)
	empty := !set || (colon && v == "")
	switch op[0] {
	case '-', '=':
		if empty {
			return arg, true
		}
		return v, true
	case '+':
		if !empty {
			return arg, true
		}
		return "", true
	}
	return "", false
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

// templateFuncs is containerlab's template function set (its own
// implementations are not a library this project can import).
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"ToJSON": func(v any) string {
			b, _ := json.Marshal(jsonable(v))
			return string(b)
		},
		"ToJSONPretty": func(v any, prefix, indent string) string {
			b, _ := json.MarshalIndent(jsonable(v), prefix, indent)
			return string(b)
		},
		"add":      func(a, b any) (any, error) { return arith(a, b, '+') },
		"subtract": func(a, b any) (any, error) { return arith(a, b, '-') },
		"mul":      func(a, b any) (any, error) { return arith(a, b, '*') },
		"div": func(a, b any) (any, error) {
			x, y, err := operands(a, b, toFloat)
			if err != nil {
				return nil, err
			}
			if y == 0 {
				return nil, fmt.Errorf("division by 0")
			}
			return x / y, nil
		},
		"rem": func(a, b any) (any, error) {
			x, y, err := operands(a, b, toInt)
			if err != nil {
				return nil, err
			}
			if y == 0 {
				return nil, fmt.Errorf("rem: divisor is zero")
			}
			return x % y, nil
		},
		"seq":     seq,
		"strings": func() any { return stringFuncs{} },
		"conv":    func() any { return convFuncs{} },
	}
}

// jsonable converts YAML maps with non-string keys for encoding/json.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	}
	return v
}

// operands converts both operands of a template's arithmetic function
// with conv.
func operands[T any](a, b any, conv func(any) (T, error)) (x, y T, err error) {
	if x, err = conv(a); err != nil {
		return x, y, err
	}
	y, err = conv(b)
	return x, y, err
}

func arith(a, b any, op byte) (any, error) {
	if isFloatValue(a) || isFloatValue(b) {
		x, y, err := operands(a, b, toFloat)
		if err != nil {
			return nil, err
		}
		switch op {
		case '+':
			return x + y, nil
		case '-':
			return x - y, nil
		}
		return x * y, nil
	}
	x, y, err := operands(a, b, toInt)
	if err != nil {
		return nil, err
	}
	switch op {
	case '+':
		if (y > 0 && x > math.MaxInt64-y) || (y < 0 && x < math.MinInt64-y) {
			return nil, fmt.Errorf("%d + %d overflows", x, y)
		}
		return x + y, nil
	case '-':
		if (y < 0 && x > math.MaxInt64+y) || (y > 0 && x < math.MinInt64+y) {
			return nil, fmt.Errorf("%d - %d overflows", x, y)
		}
		return x - y, nil
	}
	if x != 0 && (x*y)/x != y {
		return nil, fmt.Errorf("%d * %d overflows", x, y)
	}
	return x * y, nil
}

func isFloatValue(v any) bool {
	switch x := v.(type) {
	case float32, float64:
		return true
	case string:
		if _, err := strconv.ParseInt(x, 0, 64); err == nil {
			return false
		}
		_, err := strconv.ParseFloat(x, 64)
		return err == nil
	}
	return false
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d does not fit int64", x)
		}
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, fmt.Errorf("%d does not fit int64", x)
		}
		return int64(x), nil
	case float64:
		if x != x || x > math.MaxInt64 || x < math.MinInt64 {
			return 0, fmt.Errorf("%v does not fit int64", x)
		}
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		s := strings.ReplaceAll(x, ",", "")
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("expected a number, got %q", x)
		}
		return toInt(f)
	}
	return 0, fmt.Errorf("expected a number, got %v", v)
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case string:
		s := strings.ReplaceAll(x, ",", "")
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return float64(i), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("expected a number, got %q", x)
		}
		return f, nil
	}
	i, err := toInt(v)
	return float64(i), err
}

// maxSeq bounds the length of a seq, so that a template cannot exhaust
// memory.
const maxSeq = 100_000

// seq is containerlab's (and gomplate's) seq: seq END counts from 1,
// seq START END, seq START END STEP; the step's sign follows the
// direction.
func seq(n ...any) ([]int64, error) {
	start, end, step := int64(1), int64(0), int64(1)
	var err error
	switch len(n) {
	case 1:
		end, err = toInt(n[0])
	case 2:
		if start, err = toInt(n[0]); err == nil {
			end, err = toInt(n[1])
		}
	case 3:
		if start, err = toInt(n[0]); err == nil {
			if end, err = toInt(n[1]); err == nil {
				step, err = toInt(n[2])
			}
		}
	default:
		return nil, fmt.Errorf("seq: expected 1, 2 or 3 arguments, got %d", len(n))
	}
	if err != nil {
		return nil, fmt.Errorf("seq: %w", err)
	}
	if step == 0 {
		return []int64{}, nil
	}
	if (end < start && step > 0) || (end > start && step < 0) {
		step = -step
	}
	count := (end-start)/step + 1
	if count > maxSeq || count < 0 {
		return nil, fmt.Errorf("seq: more than %d numbers", maxSeq)
	}
	out := make([]int64, 0, count)
	for i := int64(0); i < count; i++ {
		out = append(out, start+i*step)
	}
	return out, nil
}

// stringFuncs are the strings.* template functions.
type stringFuncs struct{}

// Split splits s around sep.
func (stringFuncs) Split(sep string, s any) []string { return strings.Split(fmt.Sprint(s), sep) }

// ReplaceAll replaces every old in s with repl.
func (stringFuncs) ReplaceAll(old, repl string, s any) string {
	if s == nil {
		return ""
	}
	return strings.ReplaceAll(fmt.Sprint(s), old, repl)
}

// convFuncs are the conv.* template functions.
type convFuncs struct{}

// Join joins a list's elements, each as text.
func (convFuncs) Join(in any, sep string) (string, error) {
	switch x := in.(type) {
	case []string:
		return strings.Join(x, sep), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, sep), nil
	case []int64:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = strconv.FormatInt(e, 10)
		}
		return strings.Join(parts, sep), nil
	}
	return "", fmt.Errorf("conv.Join: %T is not a list", in)
}

// ToInt converts a number or numeric string to an int.
func (convFuncs) ToInt(in any) (int, error) {
	i, err := toInt(in)
	if err != nil {
		return 0, err
	}
	if i > math.MaxInt || i < math.MinInt {
		return 0, fmt.Errorf("conv.ToInt: %d does not fit int", i)
	}
	return int(i), nil
}
