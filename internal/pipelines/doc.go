// Package pipelines reads a declarative pipelines file (YAML) and plans it
// against the pipelines that run: the pure half of `starter apply`.
//
// A file has an optional defaults block and a list of pipelines; each
// pipeline names one Debezium topic (topic) or a pattern over the broker's
// topics (topic_regex, topic_glob), and every setting `starter start`
// takes as a flag (docs/pipelines.md has the schema).
// Parse checks the whole file and reports every problem with its YAML path
// and line; Resolve expands topic patterns against a topic list into one
// Pipeline per table; Compute compares the desired pipelines with the
// observed ones and returns a Plan (create, update, unchanged, stop, and
// refusals for changes a running pipeline cannot take).
//
// Standard library and gopkg.in/yaml.v3 only: no Temporal, Kafka or
// Iceberg here; the starter observes and applies.
package pipelines
