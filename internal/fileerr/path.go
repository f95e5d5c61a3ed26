package fileerr

import (
	"strconv"
	"strings"
)

// Field appends a field or map key to a field path: a plain key as
// parent.key, any other key in brackets: labels["fabricbench.asn"].
func Field(parent, key string) string {
	if !IsIdent(key) {
		return Key(parent, key)
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// Key appends a map key in bracket form: matrix["transport.lb"].
func Key(parent, key string) string { return parent + "[" + strconv.Quote(key) + "]" }

// Index appends a list index: jobs[1].
func Index(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// Parent strips the last element of a field path: jobs[1].size -> jobs[1]
// -> jobs -> "".
func Parent(p string) string {
	cut, inQuote := 0, false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && (c == '.' || c == '['):
			cut = i
		}
	}
	return p[:cut]
}

// IsIdent reports whether a key can be written without brackets in a path.
func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Suggest returns the candidate closest to s (case-insensitively) for a
// "did you mean" hint: within 2 edits and no more edits than s has
// characters; "" when none is.
func Suggest(s string, candidates []string) string {
	best, bestD := "", 3
	low := strings.ToLower(s)
	for _, c := range candidates {
		if d := editDistance(low, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD > len(s) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance; long strings (never close to a
// key name) are not compared, to bound the cost on hostile input.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
