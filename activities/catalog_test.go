package activities

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/sdk/temporal"
)

// Every activity of a worker whose catalog is not the table's refuses the
// table with a retryable CatalogMismatch error before touching anything
// (the Activities here have no catalog or Kafka client: a call that went
// further would panic); the table's catalog not recorded yet, or the
// same one, passes the check.
func TestActivitiesRefuseAnotherCatalog(t *testing.T) {
	a := New(nil, nil)
	a.CatalogID = "sql file:/var/lib/lakemirror/catalog.db file:///var/lib/lakemirror/warehouse"
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", Catalog: "rest http://iceberg-rest:8181 s3://warehouse/"}
	ctx := context.Background()
	calls := map[string]func() error{
		"Recover":         func() error { _, err := a.Recover(ctx, spec); return err },
		"PlanBatch":       func() error { _, err := a.PlanBatch(ctx, PlanRequest{Spec: spec}); return err },
		"ApplyBatch":      func() error { _, err := a.ApplyBatch(ctx, ApplyRequest{Spec: spec}); return err },
		"RebuildKeys":     func() error { _, err := a.RebuildKeys(ctx, RebuildRequest{Spec: spec}); return err },
		"ResolveBackfill": func() error { _, err := a.ResolveBackfill(ctx, BackfillRequest{Spec: spec}); return err },
		"LoadTable":       func() error { _, err := a.LoadTable(ctx, LoadRequest{Spec: spec}); return err },
		"Maintain":        func() error { _, err := a.Maintain(ctx, MaintenanceRequest{Spec: spec, Job: JobCompact}); return err },
	}
	want := `table shop.orders lives in catalog "rest http://iceberg-rest:8181 s3://warehouse/", but this worker uses catalog "sql file:/var/lib/lakemirror/catalog.db file:///var/lib/lakemirror/warehouse": it refuses the table's activities (another worker of the task queue, on the table's catalog, takes the retry); fix the worker's CATALOG_* settings or stop it`
	for name, call := range calls {
		err := call()
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.Type() != ErrTypeCatalogMismatch || ae.NonRetryable() || ae.Message() != want {
			t.Errorf("%s: %v, want a retryable %s error %q", name, err, ErrTypeCatalogMismatch, want)
		}
	}
	for _, recorded := range []string{"", a.CatalogID} {
		s := spec
		s.Catalog = recorded
		if err := a.checkCatalog(s); err != nil {
			t.Errorf("table catalog %q: %v", recorded, err)
		}
	}
	if !sameSpec(spec, TableSpec{Table: "shop.orders", Topic: "shop.public.orders"}) {
		t.Errorf("recording the catalog changes the table's spec for the worker's state")
	}
}
