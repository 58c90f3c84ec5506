package lakecat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// PropStartPrefix prefixes the namespace property that records where a
// table's pipeline started reading before its tables committed a batch
// ("lakemirror.start.<table>", the table's name within its namespace;
// JSON StartRecord). It lives in the Iceberg catalog, not in the
// workflow, so it survives a stop (the workflow completes) and a worker
// restart; `starter drop --drop-tables` removes it with the tables.
const PropStartPrefix = "lakemirror.start."

// StartRecord is where a table's pipeline started reading its topic when
// it started from "latest": the Kafka offsets (next offset per partition)
// its first plan took, the topic, and when (UTC). Once a table has
// committed a batch its checkpoints say where to go on, and the record is
// no longer read.
type StartRecord struct {
	Topic     string          `json:"topic"`
	StartFrom string          `json:"start_from"`
	Offsets   payload.Offsets `json:"offsets"`
	At        time.Time       `json:"at"`
}

// startProp is the namespace property holding the start of table t.
func startProp(t TableName) string { return PropStartPrefix + t.Name }

// ReadStart returns the start recorded for table name (nil when none: the
// namespace or the property does not exist). Errors: catalog failures, a
// malformed record.
func ReadStart(ctx context.Context, cat catalog.Catalog, name TableName) (*StartRecord, error) {
	props, err := cat.LoadNamespaceProperties(ctx, name.NamespaceIdent())
	if errors.Is(err, catalog.ErrNoSuchNamespace) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lake: namespace %s properties: %w", name.Namespace, err)
	}
	text, ok := props[startProp(name)]
	if !ok || text == "" {
		return nil, nil
	}
	var rec StartRecord
	if err := json.Unmarshal([]byte(text), &rec); err != nil {
		return nil, fmt.Errorf("lake: bad %s %q on namespace %s: %w", startProp(name), text, name.Namespace, err)
	}
	return &rec, nil
}

// RecordStart records rec as table name's start, creating the namespace
// when needed, unless a start for the same topic is recorded already (a
// retried first plan): it returns the record in effect, rec or the
// earlier one. A record for another topic is replaced. Errors: catalog
// failures.
func RecordStart(ctx context.Context, cat catalog.Catalog, name TableName, rec StartRecord) (StartRecord, error) {
	had, err := ReadStart(ctx, cat, name)
	if err != nil {
		return rec, err
	}
	if had != nil && had.Topic == rec.Topic {
		return *had, nil
	}
	if err := EnsureNamespace(ctx, cat, name.NamespaceIdent()); err != nil {
		return rec, err
	}
	rec.Offsets = maps.Clone(rec.Offsets)
	js, err := json.Marshal(rec)
	if err != nil {
		return rec, err
	}
	if _, err := cat.UpdateNamespaceProperties(ctx, name.NamespaceIdent(), nil, map[string]string{startProp(name): string(js)}); err != nil {
		return rec, fmt.Errorf("lake: record the start of %s on namespace %s: %w", name, name.Namespace, err)
	}
	return rec, nil
}

// ClearStart removes table name's start record, if any. Errors: catalog
// failures.
func ClearStart(ctx context.Context, cat catalog.Catalog, name TableName) error {
	had, err := ReadStart(ctx, cat, name)
	if err != nil || had == nil {
		return err
	}
	if _, err := cat.UpdateNamespaceProperties(ctx, name.NamespaceIdent(), []string{startProp(name)}, nil); err != nil {
		return fmt.Errorf("lake: remove the start record of %s: %w", name, err)
	}
	return nil
}
