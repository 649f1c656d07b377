package tomlx

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// checkUnsigned refuses a negative integer given for an unsigned field (BurntSushi/toml converts
// seed = -1 into 18446744073709551615 without a word). It decodes data again into generic values
// and walks them alongside v's type by toml tag.
func checkUnsigned(data []byte, name string, v any) error {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || !hasUnsigned(t, 0) {
		return nil
	}
	var raw map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&raw); err != nil {
		return nil // the typed decode already succeeded; nothing more to say
	}
	if key, val := negativeUnsigned(raw, t, ""); key != "" {
		return fmt.Errorf("%s: %s = %d: want a non-negative integer", At(name, LineOf(data, key)), key, val)
	}
	return nil
}

// hasUnsigned reports whether t holds an unsigned integer field anywhere (depth-limited).
func hasUnsigned(t reflect.Type, depth int) bool {
	if depth > 8 {
		return false
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return hasUnsigned(t.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && hasUnsigned(f.Type, depth+1) {
				return true
			}
		}
	}
	return false
}

// negativeUnsigned finds the first key whose value is a negative integer where t has an unsigned
// field, returning the dotted key and the value.
func negativeUnsigned(raw any, t reflect.Type, prefix string) (string, int64) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n, ok := raw.(int64); ok && n < 0 {
			return prefix, n
		}
	case reflect.Slice, reflect.Array:
		switch r := raw.(type) {
		case []any:
			for _, e := range r {
				if k, n := negativeUnsigned(e, t.Elem(), prefix); k != "" {
					return k, n
				}
			}
		case []map[string]any:
			for _, e := range r {
				if k, n := negativeUnsigned(e, t.Elem(), prefix); k != "" {
					return k, n
				}
			}
		}
	case reflect.Map:
		if m, ok := raw.(map[string]any); ok {
			for _, k := range sortedKeys(m) {
				if key, n := negativeUnsigned(m[k], t.Elem(), join(prefix, k)); key != "" {
					return key, n
				}
			}
		}
	case reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			return "", 0
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if tag == "-" {
				continue
			}
			key := tag
			if key == "" {
				key = f.Name
			}
			// BurntSushi matches a key to a field's tag, or name, case-insensitively ("sEed").
			for _, k := range sortedKeys(m) {
				if k != key && !strings.EqualFold(k, key) {
					continue
				}
				if kk, n := negativeUnsigned(m[k], f.Type, join(prefix, k)); kk != "" {
					return kk, n
				}
			}
		}
	}
	return "", 0
}

// sortedKeys orders a table's keys, so the first error named does not depend on map order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}
