// Package fsutil writes output files safely: to a temporary file in the same directory, then
// renamed over the destination, so a failed or interrupted run never leaves a partial file.
//
// WriteFile is the atomic write; CheckWritable and EnsureDir fail early, before long work, when
// an output cannot be written; a Files value tracks the temporary files of writes in progress and
// its RemovePending method deletes them (the CLI holds one and calls it on SIGINT and SIGTERM); a
// Batch writes several files under temporary names and renames them all at Commit, so a set of
// files (plot's figures) is replaced whole or not at all.
// A Files value is safe for concurrent use; the package has no package-level state. ReadFile, Open, LimitReader and LineLimitReader bound what servesim reads (MaxConfigBytes and
// the other limits, MaxLineBytes per line), with errors naming the file, the line and the limit.
// The files: fsutil.go (writes), limit.go (reads).
package fsutil
