package hf

// mtpLayers is the number of multi-token-prediction layers: num_nextn_predict_layers (DeepSeek-V3,
// GLM), mtp_num_hidden_layers (Qwen3-Next, Qwen3.5), or num_mtp_modules when use_mtp
// (MiniMax-M2).
func mtpLayers(r *reader, c *rawConfig) int {
	switch {
	case c.NumNextnPredictLayers != nil:
		return r.check("num_nextn_predict_layers", *c.NumNextnPredictLayers, 0, maxLayers)
	case c.MTPNumHiddenLayers != nil:
		return r.check("mtp_num_hidden_layers", *c.MTPNumHiddenLayers, 0, maxLayers)
	case c.NumMTPModules != nil && flag(c.UseMTP):
		return r.check("num_mtp_modules", *c.NumMTPModules, 0, maxLayers)
	}
	return 0
}
