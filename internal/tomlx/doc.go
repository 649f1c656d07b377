// Package tomlx decodes servesim's TOML inputs strictly and points errors at the file and line:
// parse errors with BurntSushi's position, unknown keys and failed validations at the line that
// sets the key.
//
// Decode rejects keys the target struct does not have (toml.MetaData.Undecoded), naming them with
// "file:line" and a hint of where the accepted keys are listed. Locate turns a validation error
// that starts with a dotted field ("engine.max_num_seqs = -4: ...") into one prefixed with the
// line that sets it; FieldOf and LineOf are its parts. Scenarios, parameter files, workloads, the
// GPU catalog and model descriptions are read through it. Everything is pure; the package has one
// file, tomlx.go.
package tomlx
