package sonic

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// parseDict parses what `sonic-db-cli ... HGETALL` prints: the Python repr
// of a dict of str to str, e.g. {'ecmp_hash@': 'SRC_IP,DST_IP', 'x': "it's"}
// or {} for a missing key. Both quote styles and Python's string escapes
// are understood; a trailing comma is accepted. Anything else is an error
// saying where the text stopped making sense.
func parseDict(s string) (map[string]string, error) {
	p := dictParser{s: s}
	m, err := p.dict()
	if err != nil {
		return nil, err
	}
	return m, nil
}

type dictParser struct {
	s   string
	pos int
}

func (p *dictParser) errorf(format string, a ...any) error {
	near := p.s[p.pos:]
	if len(near) > 20 {
		near = near[:20] + "..."
	}
	if near == "" {
		return fmt.Errorf("offset %d: %s at end of reply", p.pos, fmt.Sprintf(format, a...))
	}
	return fmt.Errorf("offset %d: %s near %q", p.pos, fmt.Sprintf(format, a...), near)
}

func (p *dictParser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *dictParser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *dictParser) dict() (map[string]string, error) {
	p.skipSpace()
	if p.peek() != '{' {
		return nil, p.errorf("expected '{'")
	}
	p.pos++
	m := map[string]string{}
	for {
		p.skipSpace()
		if p.peek() == '}' {
			p.pos++
			break
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.peek() != ':' {
			return nil, p.errorf("expected ':' after key")
		}
		p.pos++
		p.skipSpace()
		v, err := p.str()
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.skipSpace()
			if p.pos != len(p.s) {
				return nil, p.errorf("unexpected text after '}'")
			}
			return m, nil
		default:
			return nil, p.errorf("expected ',' or '}'")
		}
	}
	p.skipSpace()
	if p.pos != len(p.s) {
		return nil, p.errorf("unexpected text after '}'")
	}
	return m, nil
}

// str parses one quoted Python string literal.
func (p *dictParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.errorf("expected a quoted string")
	}
	start := p.pos
	p.pos++
	var b strings.Builder
	for {
		if p.pos >= len(p.s) {
			p.pos = start
			return "", p.errorf("unterminated string")
		}
		c := p.s[p.pos]
		switch {
		case c == q:
			p.pos++
			return b.String(), nil
		case c == '\n':
			return "", p.errorf("newline inside a string")
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// escape decodes the escape sequence at p.pos (a backslash) into b.
func (p *dictParser) escape(b *strings.Builder) error {
	if p.pos+1 >= len(p.s) {
		return p.errorf("backslash at end of reply")
	}
	c := p.s[p.pos+1]
	if s, ok := simpleEscapes[c]; ok {
		b.WriteString(s)
		p.pos += 2
		return nil
	}
	switch c {
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		if p.pos+2+n > len(p.s) {
			return p.errorf("truncated \\%c escape", c)
		}
		var r rune
		for _, h := range []byte(p.s[p.pos+2 : p.pos+2+n]) {
			v, ok := hexVal(h)
			if !ok {
				return p.errorf("bad \\%c escape", c)
			}
			r = r<<4 | rune(v)
		}
		if r > utf8.MaxRune {
			return p.errorf("\\%c escape out of range", c)
		}
		b.WriteRune(r)
		p.pos += 2 + n
		return nil
	case '0', '1', '2', '3', '4', '5', '6', '7':
		r := rune(0)
		i := p.pos + 1
		for k := 0; k < 3 && i < len(p.s) && p.s[i] >= '0' && p.s[i] <= '7'; k++ {
			r = r<<3 | rune(p.s[i]-'0')
			i++
		}
		b.WriteRune(r)
		p.pos = i
		return nil
	}
	// Python keeps unknown escapes as they are.
	b.WriteByte('\\')
	p.pos++
	return nil
}

// simpleEscapes are Python's one-character escapes; backslash-newline is a
// line continuation.
var simpleEscapes = map[byte]string{
	'\\': `\`, '\'': `'`, '"': `"`, 'n': "\n", 'r': "\r", 't': "\t",
	'a': "\a", 'b': "\b", 'f': "\f", 'v': "\v", '\n': "",
}

func hexVal(h byte) (byte, bool) {
	switch {
	case h >= '0' && h <= '9':
		return h - '0', true
	case h >= 'a' && h <= 'f':
		return h - 'a' + 10, true
	case h >= 'A' && h <= 'F':
		return h - 'A' + 10, true
	}
	return 0, false
}
