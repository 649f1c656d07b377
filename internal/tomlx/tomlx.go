package tomlx

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// Decode decodes data into v, rejecting keys v does not have. hint is appended to the
// unknown-key message (where to find the accepted keys); it may be empty.
func Decode(data []byte, name string, v any, hint string) (toml.MetaData, error) {
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(v)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return md, fmt.Errorf("%s: line %d: %s", name, pe.Position.Line, pe.Message)
		}
		return md, fmt.Errorf("%s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		key := und[0].String()
		msg := fmt.Sprintf("%s: unknown key %q", At(name, LineOf(data, key)), key)
		if hint != "" {
			msg += " (" + hint + ")"
		}
		return md, errors.New(msg)
	}
	if err := checkUnsigned(data, name, v); err != nil {
		return md, err
	}
	return md, nil
}

// Locate prefixes a validation error ("engine.max_num_seqs = -4: ...") with the file and the line
// that sets the field it names.
func Locate(data []byte, name string, err error) error {
	return fmt.Errorf("%s: %w", At(name, LineOf(data, FieldOf(err.Error()))), err)
}

// At is "file:line", or "file" when the line is unknown.
func At(name string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", name, line)
	}
	return name
}

// FieldOf extracts the dotted field a validation message starts with ("engine.max_num_seqs = -4:
// ..." -> "engine.max_num_seqs"; "protocol.concurrency[0] = 0" -> "protocol.concurrency").
func FieldOf(msg string) string {
	end := strings.IndexAny(msg, " :=[")
	if end < 0 {
		return msg
	}
	return msg[:end]
}

// LineOf finds the 1-based line that sets a dotted key ("engine.speculative.method"), or 0.
func LineOf(data []byte, key string) int {
	table := ""
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "[") {
			table = strings.Trim(strings.TrimSpace(strings.SplitN(line, "#", 2)[0]), "[] ")
			continue
		}
		k, _, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		full := strings.TrimSpace(k)
		if table != "" {
			full = table + "." + full
		}
		if full == key {
			return i + 1
		}
	}
	return 0
}
