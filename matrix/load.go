package matrix

import (
	"bytes"
	"fmt"

	"github.com/servesim/servesim/internal/fsutil"
)

// Format names a matrix file format.
type Format string

const (
	FormatText Format = "text" // the benchmark's published page
	FormatCSV  Format = "csv"
	FormatJSON Format = "json"
)

// Sniff tells the format of a matrix file by its content: JSON starts with "{", CSV with the
// header "phase,"; anything else is taken as the published text page. Leading white space and a
// UTF-8 byte order mark are skipped.
func Sniff(data []byte) Format {
	t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n")
	switch {
	case bytes.HasPrefix(t, []byte("{")):
		return FormatJSON
	case bytes.HasPrefix(t, []byte("phase,")):
		return FormatCSV
	}
	return FormatText
}

// Load reads a matrix file in any of the formats, chosen by Sniff.
func Load(path string) (*Matrix, error) {
	data, err := fsutil.ReadFile(path, fsutil.MaxMatrixBytes)
	if err != nil {
		return nil, fmt.Errorf("load matrix: %w", err)
	}
	return LoadBytes(data, path)
}

// LoadBytes parses a matrix in any of the formats, chosen by Sniff; name labels errors.
func LoadBytes(data []byte, name string) (*Matrix, error) {
	switch Sniff(data) {
	case FormatJSON:
		return ParseJSON(bytes.NewReader(data), name)
	case FormatCSV:
		return ParseCSV(bytes.NewReader(blankLeadingSpace(data)), name)
	}
	return ParseText(bytes.NewReader(data), name)
}

// blankLeadingSpace replaces a BOM and leading white space by as many empty lines, which CSV
// skips, so error line numbers stay those of the file.
func blankLeadingSpace(data []byte) []byte {
	t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n")
	lead := data[:len(data)-len(t)]
	out := bytes.Repeat([]byte{'\n'}, bytes.Count(lead, []byte{'\n'}))
	return append(out, t...)
}
