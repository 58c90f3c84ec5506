package pipelines

// FieldGroup is one block of the pipelines file and the YAML keys it takes,
// in the order the file's types declare them.
type FieldGroup struct {
	Block  string   // where the keys go, e.g. "defaults and each pipeline"
	Fields []string // the YAML keys, e.g. "batch_size"
}

// Fields lists every key the pipelines file accepts, block by block: the
// source of the configuration reference (docs/configuration.md), which a
// test regenerates from it so that the reference names every key there is.
func Fields() []FieldGroup {
	return []FieldGroup{
		{"top level", knownFieldList["rawFile"]},
		{"defaults and each pipeline", settingsKeys()},
		{"each pipeline only", entryKeys()},
		{"maintenance (in defaults or a pipeline)", fieldsOf(rawMaintenance{})},
		{"layout (in defaults or a pipeline)", fieldsOf(rawLayout{})},
		{"layout.mirror, layout.history, layout.bronze", fieldsOf(rawTableLayout{})},
		{"groups.NAME (a source group a pipeline names with group)", fieldsOf(rawGroup{})},
	}
}
