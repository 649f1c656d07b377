package vllmcmd

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Split breaks a shell command line into words the way a POSIX shell would before expansion:
//
//   - blanks (space, tab, newline, carriage return) separate words;
//   - 'single quotes' keep everything literally (JSON goes here);
//   - "double quotes" keep everything except that a backslash escapes $ ` " \ and newline;
//   - outside quotes a backslash escapes the next character, and backslash-newline is a line
//     continuation (a trailing backslash at the very end is ignored too);
//   - a # at the start of a word starts a comment that runs to the end of the line;
//   - $HOME, ${VAR} and friends are kept as literal text, never expanded.
//
// Operators (|, &&, ;, >, 2>&1) are not special here: they become words and Parse deals with
// them. An unterminated quote or ${ is an error naming the line (when there is more than one) and
// the column, counted in characters from 1, where it was opened.
func Split(cmdline string) ([]string, error) {
	in := cmdline // bytes: every special character is ASCII, so UTF-8 and stray bytes pass through
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
		case c == '#' && !inWord:
			for i < len(in) && in[i] != '\n' {
				i++
			}
		case c == '\\':
			if i+1 == len(in) {
				continue // trailing continuation with nothing after it
			}
			i++
			switch in[i] {
			case '\n':
				continue
			case '\r':
				if i+1 < len(in) && in[i+1] == '\n' {
					i++
					continue
				}
			}
			cur.WriteByte(in[i])
			inWord = true
		case c == '\'':
			inWord = true
			j := i + 1
			for j < len(in) && in[j] != '\'' {
				j++
			}
			if j == len(in) {
				return nil, fmt.Errorf("unterminated single quote opened at %s", position(in, i))
			}
			cur.WriteString(in[i+1 : j])
			i = j
		case c == '"':
			inWord = true
			start := i
			for i++; ; i++ {
				if i >= len(in) {
					return nil, fmt.Errorf("unterminated double quote opened at %s", position(in, start))
				}
				d := in[i]
				if d == '"' {
					break
				}
				if d == '\\' && i+1 < len(in) {
					switch in[i+1] {
					case '$', '`', '"', '\\':
						cur.WriteByte(in[i+1])
						i++
						continue
					case '\n':
						i++
						continue
					}
				}
				cur.WriteByte(d)
			}
		case c == '$' && i+1 < len(in) && in[i+1] == '{':
			inWord = true
			j := i + 2
			for j < len(in) && in[j] != '}' {
				j++
			}
			if j == len(in) {
				return nil, fmt.Errorf("unterminated ${ opened at %s", position(in, i))
			}
			cur.WriteString(in[i : j+1])
			i = j
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, nil
}

// position describes byte offset i of s as "column C" or, on a multi-line input, "line L, column
// C"; both count from 1, columns in characters.
func position(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	col := utf8.RuneCountInString(s[start:i]) + 1
	if !strings.Contains(s, "\n") {
		return fmt.Sprintf("column %d", col)
	}
	return fmt.Sprintf("line %d, column %d", strings.Count(s[:i], "\n")+1, col)
}
