package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Break 35: a --definition's key columns are joined with "," and split
// again (splitKey trims and drops empties), so a key column the rule
// refuses is reshaped instead of refused: "order,id" becomes the two
// columns "order" and "id", and "order_id " becomes "order_id". apply
// passes the definition's key as it is and startTable refuses both; start
// --definition should refuse them too (exit 2, names.ColumnRule), before
// anything is dialled. Fails today: start goes on to dial.
func TestBreakStartDefinitionKeyNotReshaped(t *testing.T) {
	nowhere := []string{"--temporal-address", closedAddr(t), "--kafka-brokers", closedAddr(t), "--data-dir", t.TempDir()}
	for _, key := range []string{"order,id", "order_id ", " order_id"} {
		def := `{"table":"shop.orders","key":[` + quote(key) + `],"columns":[{"name":` + quote(key) + `,"type":"long","nullable":false},{"name":"status","type":"string"}]}`
		path := filepath.Join(t.TempDir(), "orders.table.json")
		if err := os.WriteFile(path, []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"start", "shop.public.orders", "--table", "shop.orders", "--definition", path}, nowhere...)
		code, _, stderr := cli(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "key column") {
			t.Errorf("start --definition with key %q: exit %d, stderr:\n%s\nwant exit 2 refusing the key column", key, code, stderr)
		}
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// Break 35: the pipelines file refuses an empty key column ("order_id,"
// → "key column 2 is empty", exit 2), but start --key drops it (splitKey)
// and starts the table with the key [order_id]: one rule, two answers.
// Fails today: start goes on to dial.
func TestBreakStartKeyEmptyEntryRefused(t *testing.T) {
	nowhere := []string{"--temporal-address", closedAddr(t), "--kafka-brokers", closedAddr(t), "--data-dir", t.TempDir()}
	for _, key := range []string{"order_id,", "order_id,,status", ",order_id"} {
		args := append([]string{"start", "shop.public.orders", "--table", "shop.orders", "--key", key}, nowhere...)
		code, _, stderr := cli(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "is empty") {
			t.Errorf("start --key %q: exit %d, stderr:\n%s\nwant exit 2: key column … is empty", key, code, stderr)
		}
	}
}
