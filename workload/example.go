package workload

import _ "embed"

// ExampleTOML is an annotated workload file that parses as it is (an open loop of chat
// requests), with every kind's table and key, the other kinds' commented out: what 'servesim
// workload --example' prints.
//
//go:embed example.toml
var ExampleTOML string
