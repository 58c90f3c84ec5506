package cdc

// DataCollection is the name Debezium's transaction metadata gives the
// source table of a change event (an END event's
// data_collections[].data_collection; the connector's
// DataCollectionId.identifier()), from the event's source block:
// source.connector, source.db, source.schema and source.table.
//
//   - "postgresql": schema.table ("public.orders"; the database is not
//     part of it);
//   - "mysql", "mariadb": db.table ("inventory.orders");
//   - "sqlserver", "db2": db.schema.table ("testDB.dbo.orders"; Debezium's
//     SQL Server and Db2 documentation show this form in their
//     transaction boundary examples).
//
// It returns "" for another connector (Oracle's and Informix's forms are
// not verified here), or when a part it needs is empty: the name is then
// unknown, not guessed.
func DataCollection(connector, db, schema, table string) string {
	if table == "" {
		return ""
	}
	switch connector {
	case "postgresql":
		if schema != "" {
			return schema + "." + table
		}
	case "mysql", "mariadb":
		if db != "" {
			return db + "." + table
		}
	case "sqlserver", "db2":
		if db != "" && schema != "" {
			return db + "." + schema + "." + table
		}
	}
	return ""
}
