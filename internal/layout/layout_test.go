package layout

import (
	"errors"
	"testing"
)

func TestParsePartition(t *testing.T) {
	for in, want := range map[string]Field{
		"region":               {Transform: Identity, Column: "region"},
		" identity(region) ":   {Transform: Identity, Column: "region"},
		"bucket(16, order_id)": {Transform: Bucket, Param: 16, Column: "order_id"},
		"BUCKET(4,id)":         {Transform: Bucket, Param: 4, Column: "id"},
		"truncate(10, name)":   {Transform: Truncate, Param: 10, Column: "name"},
		"year(created_at)":     {Transform: Year, Column: "created_at"},
		"month(created_at)":    {Transform: Month, Column: "created_at"},
		"day(_valid_from)":     {Transform: Day, Column: "_valid_from"},
		"hour(_ingested_at)":   {Transform: Hour, Column: "_ingested_at"},
	} {
		got, err := ParsePartition(in)
		if err != nil || got != want {
			t.Errorf("ParsePartition(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"":                  `layout: invalid field "": want a column name, or transform(column)`,
		"bucket(id)":        `layout: invalid field "bucket(id)": want bucket(N, column)`,
		"bucket(0, id)":     `layout: invalid field "bucket(0, id)": want bucket(N, column) with N from 1 to 1048576`,
		"truncate(x, name)": `layout: invalid field "truncate(x, name)": want truncate(N, column) with N from 1 to 1048576`,
		"day(a, b)":         `layout: invalid field "day(a, b)": want day(column)`,
		"week(ts)":          `layout: invalid field "week(ts)": want one of identity, bucket, truncate, year, month, day, hour`,
		"day(ts":            `layout: invalid field "day(ts": want a closing parenthesis`,
		"order id":          `layout: invalid field "order id": want a column name, or transform(column)`,
		`"Order"`:           `layout: invalid field "\"Order\"": want a column name, or transform(column)`,
		"1col":              `layout: invalid field "1col": want a column name, or transform(column)`,
	} {
		_, err := ParsePartition(in)
		if err == nil || err.Error() != msg || !errors.Is(err, ErrSyntax) {
			t.Errorf("ParsePartition(%q) error %v, want %s", in, err, msg)
		}
	}
}

func TestParseSort(t *testing.T) {
	for in, want := range map[string]SortField{
		"amount":                  {Column: "amount", NullsFirst: true},
		"amount asc":              {Column: "amount", NullsFirst: true},
		"amount desc":             {Column: "amount", Descending: true},
		"amount DESC nulls first": {Column: "amount", Descending: true, NullsFirst: true},
		"amount nulls last":       {Column: "amount"},
	} {
		got, err := ParseSort(in)
		if err != nil || got != want {
			t.Errorf("ParseSort(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "amount up", "amount desc nulls", "amount nulls middle", "a b"} {
		if _, err := ParseSort(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseSort(%q) error %v, want a syntax error", in, err)
		}
	}
}

func TestTablesValidateAndBronzeDefault(t *testing.T) {
	if got := (Tables{}).BronzeSpec(); len(got.PartitionBy) != 1 || got.PartitionBy[0] != "day(_ingested_at)" {
		t.Errorf("default bronze layout %+v", got)
	}
	if got := (Tables{Bronze: Spec{PartitionBy: []string{"none"}}}).BronzeSpec(); !got.IsZero() {
		t.Errorf("bronze none gave %+v", got)
	}
	err := Tables{History: Spec{PartitionBy: []string{"day(_valid_from)", "day(_valid_from)"}}}.Validate()
	if err == nil || err.Error() != `history layout: layout: invalid field "day(_valid_from)": column _valid_from is partitioned by day twice` {
		t.Errorf("Validate: %v", err)
	}
	if err := (Tables{Mirror: Spec{PartitionBy: []string{"bucket(16, id)"}, SortBy: []string{"id desc"}}}).Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
