package cdc

import "testing"

func TestDataCollection(t *testing.T) {
	for _, c := range []struct{ connector, db, schema, table, want string }{
		{"postgresql", "shop", "public", "orders", "public.orders"},
		{"mysql", "inventory", "", "customers", "inventory.customers"},
		{"mariadb", "inventory", "", "customers", "inventory.customers"},
		{"sqlserver", "testDB", "dbo", "tablea", "testDB.dbo.tablea"},
		{"db2", "TESTDB", "DB2INST1", "CUSTOMERS", "TESTDB.DB2INST1.CUSTOMERS"},
		{"oracle", "ORCLPDB1", "DEBEZIUM", "CUSTOMERS", ""},
		{"postgresql", "shop", "", "orders", ""},
		{"mysql", "", "", "orders", ""},
		{"sqlserver", "testDB", "", "tablea", ""},
		{"mongodb", "rs0", "", "orders", ""},
		{"postgresql", "shop", "public", "", ""},
	} {
		if got := DataCollection(c.connector, c.db, c.schema, c.table); got != c.want {
			t.Errorf("DataCollection(%q, %q, %q, %q) = %q, want %q", c.connector, c.db, c.schema, c.table, got, c.want)
		}
	}
}
