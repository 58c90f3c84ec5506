//go:build e2e

package source

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDescribeKeys(t *testing.T) {
	db := newDB(t)
	ctx := ctxT(t)
	db.exec(t, `
		CREATE TABLE pk_order (a int, b text, c int, PRIMARY KEY (b, a));
		CREATE TABLE no_pk (a int NOT NULL, b int, c int NOT NULL, n int, UNIQUE (a, c));
		CREATE UNIQUE INDEX no_pk_partial ON no_pk (n) WHERE n > 0;
		CREATE TABLE incl (a int NOT NULL, b int NOT NULL);
		CREATE UNIQUE INDEX incl_a ON incl (a) INCLUDE (b);
		CREATE TABLE arr (a int[] PRIMARY KEY);
		CREATE VIEW v AS SELECT 1 AS x;`)

	info, err := db.src.Describe(ctx, "public", "pk_order", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(info.Key, []string{"b", "a"}) || info.Database == "" || info.Schema != "public" || info.Table != "pk_order" {
		t.Errorf("info %+v", info)
	}
	// Key columns given explicitly: kept in the given order.
	if info, err := db.src.Describe(ctx, "public", "pk_order", []string{"a", "b"}); err != nil || !reflect.DeepEqual(info.Key, []string{"a", "b"}) {
		t.Errorf("explicit key: %v %v", info.Key, err)
	}
	// A unique index on NOT NULL columns makes given columns a key, in
	// any order; a superset of a unique key is unique too; INCLUDE
	// columns of an index are not part of its key.
	for _, tc := range []struct {
		table string
		keys  []string
	}{{"no_pk", []string{"c", "a"}}, {"incl", []string{"a"}}, {"incl", []string{"b", "a"}}} {
		if _, err := db.src.Describe(ctx, "public", tc.table, tc.keys); err != nil {
			t.Errorf("%s keys %v: %v", tc.table, tc.keys, err)
		}
	}

	for _, tc := range []struct {
		table string
		keys  []string
		want  string
	}{
		{"no_pk", nil, "has no primary key and no key columns were given"},
		{"no_pk", []string{"a"}, "not covered by a primary key or unique index"},
		{"no_pk", []string{"a", "c", "b"}, `key column "b" of public.no_pk is nullable`},
		{"no_pk", []string{"n"}, "nullable"},
		{"incl", []string{"b"}, "not covered"},
		{"no_pk", []string{"zz"}, `key column "zz" is not a column`},
		{"no_pk", []string{"a", "a"}, "named twice"},
		{"arr", nil, "is an array"},
		{"missing", nil, "public.missing does not exist"},
		{"v", nil, "is not a table"},
	} {
		_, err := db.src.Describe(ctx, "public", tc.table, tc.keys)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Describe(%s, %v): err = %v, want %q", tc.table, tc.keys, err, tc.want)
		}
		if !errors.Is(err, ErrDefinition) || !IsDefinition(err) { // retrying cannot help
			t.Errorf("Describe(%s, %v): %v is not a definition error", tc.table, tc.keys, err)
		}
	}
}

// TestDescribeUnsupported names every column whose type cannot be loaded.
func TestDescribeUnsupported(t *testing.T) {
	db := newDB(t)
	ctx := ctxT(t)
	db.exec(t, `
		CREATE DOMAIN money2 AS numeric(10,2);
		CREATE TABLE odd (id int PRIMARY KEY, iv interval, p point, ax xml[], dm money2, nn numeric(5,-2), ok text, tt timetz);`)
	_, err := db.src.Describe(ctx, "public", "odd", nil)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`column "iv" has type interval`, `column "p" has type point`, `column "ax" has type xml[]`,
		`column "dm" has type money2`, `column "nn" has type numeric(5,-2)`, `column "tt" has type time`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), `"ok"`) || strings.Contains(err.Error(), `"id"`) {
		t.Errorf("error names supported columns: %v", err)
	}
}
