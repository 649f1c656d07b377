// Package fsutil writes output files safely: to a temporary file in the same directory, then
// renamed over the destination, so a failed or interrupted run never leaves a partial file.
//
// WriteFile is the atomic write; CheckWritable and EnsureDir fail early, before long work, when
// an output cannot be written; RemovePending deletes the temporary files of writes still in
// progress, which the CLI calls on SIGINT and SIGTERM. The set of pending files is the only
// shared state and is safe for concurrent use. The package has one file, fsutil.go.
package fsutil
