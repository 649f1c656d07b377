// Package describe prints, for people, what servesim knows about a model, a GPU or a
// deployment: the text of `servesim model show`, `servesim hardware list|show` and the server
// line of `servesim simulate`. It computes nothing the simulation uses; the figures it shows come
// from package model (and model/hf for the KV cache per token), except the two summaries marked
// TODO below, which belong in model and move there with the model split.
package describe
