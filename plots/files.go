package plots

import (
	"fmt"
	"path/filepath"

	"github.com/servesim/servesim/internal/fsutil"
)

// File is a figure file written and its size in bytes.
type File struct {
	Path string
	Size int
}

// WriteFiles writes each figure in each format into dir (created if needed) through batch:
// every figure goes to a temporary name first and all are renamed at the end, so an interrupted
// or failed run leaves the directory's old figures, not a mix.
func WriteFiles(batch *fsutil.Batch, dir string, figs []*Figure, formats []Format) ([]File, error) {
	if err := fsutil.EnsureDir(dir); err != nil {
		return nil, err
	}
	var files []File
	defer batch.Abort()
	for _, f := range figs {
		for _, fm := range formats {
			data, err := f.Bytes(fm)
			if err != nil {
				return nil, fmt.Errorf("figure %s: %w", f.Name, err)
			}
			path := filepath.Join(dir, f.Name+"."+string(fm))
			if err := batch.Add(path, data); err != nil {
				return nil, err
			}
			files = append(files, File{path, len(data)})
		}
	}
	return files, batch.Commit()
}
