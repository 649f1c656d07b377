// Package describe prints, for people, what servesim knows about a model, a GPU or a
// deployment: the text of `servesim model show`, `servesim hardware list|show` and the server
// line of `servesim simulate`. It computes nothing: the figures it shows (parameters, weight bytes by
// format, KV bytes per token, recurrent state, memory) come from the model packages (model/arch,
// model/hardware, model/deploy), the same functions the simulation uses.
package describe
