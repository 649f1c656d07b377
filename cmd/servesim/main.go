// Command servesim simulates LLM serving on vLLM-style engines and plans capacity.
// See `servesim help` and README.md.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
