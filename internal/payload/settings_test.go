package payload

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSpecDefaults(t *testing.T) {
	got := TableSpec{Table: "shop.orders"}.Defaults()
	want := TableSpec{Table: "shop.orders", StartFrom: "earliest", MaxEvents: 5000, MaxWait: 2 * time.Second, MaxQuarantine: 100}
	if got.StartFrom != want.StartFrom || got.MaxEvents != want.MaxEvents || got.MaxWait != want.MaxWait ||
		got.MaxQuarantine != want.MaxQuarantine || got.MaxBatchEvents != 0 || got.Table != want.Table {
		t.Fatalf("Defaults() = %+v, want %+v", got, want)
	}
	// negative values count as unset; given values stay
	got = TableSpec{StartFrom: "latest", MaxEvents: -1, MaxWait: time.Second, MaxQuarantine: 7, MaxBatchEvents: 9}.Defaults()
	if got.StartFrom != "latest" || got.MaxEvents != 5000 || got.MaxWait != time.Second || got.MaxQuarantine != 7 || got.MaxBatchEvents != 9 {
		t.Fatalf("Defaults() = %+v", got)
	}
	if err := (TableSpec{}).Defaults().Validate(); err != nil {
		t.Fatalf("the defaults do not validate: %v", err)
	}
}

func TestSpecValidate(t *testing.T) {
	ok := TableSpec{}.Defaults()
	for _, c := range []struct {
		change func(*TableSpec)
		want   string
	}{
		{func(s *TableSpec) { s.StartFrom = "newest" }, `start_from: "newest": give earliest or latest`},
		{func(s *TableSpec) { s.MaxEvents = 0 }, "batch_size: 0 outside 1..1000000 records"},
		{func(s *TableSpec) { s.MaxEvents = 1_000_001 }, "batch_size: 1000001 outside 1..1000000 records"},
		{func(s *TableSpec) { s.MaxBatchEvents = -1 }, "max_batch_size: -1 outside 0..1000000 records (0 = batches do not grow)"},
		{func(s *TableSpec) { s.MaxBatchEvents = 1_000_001 }, "max_batch_size: 1000001 outside 0..1000000 records (0 = batches do not grow)"},
		{func(s *TableSpec) { s.MaxWait = 0 }, "max_wait: 0s outside (0, 10m]"},
		{func(s *TableSpec) { s.MaxWait = 11 * time.Minute }, "max_wait: 11m outside (0, 10m]"},
		{func(s *TableSpec) { s.MaxQuarantine = 0 }, "max_quarantine: 0 outside 1..1000000 records"},
	} {
		s := ok
		c.change(&s)
		err := s.Validate()
		var se *SettingError
		if err == nil || err.Error() != c.want || !errors.As(err, &se) {
			t.Errorf("Validate() = %v, want %q (a *SettingError)", err, c.want)
		}
	}
	edge := ok
	edge.MaxEvents, edge.MaxBatchEvents, edge.MaxWait, edge.MaxQuarantine = 1_000_000, 1_000_000, 10*time.Minute, 1_000_000
	if err := edge.Validate(); err != nil {
		t.Errorf("the bounds themselves: %v", err)
	}
}

func TestLookupSettingAliases(t *testing.T) {
	for name, want := range map[string]string{"batch_size": "batch_size", "batch-size": "batch_size", "max_events": "batch_size",
		"max-events": "batch_size", "max_batch_events": "max_batch_size", "max_wait": "max_wait", "start-from": "start_from"} {
		if s := LookupSetting(name); s == nil || s.Name != want {
			t.Errorf("LookupSetting(%q) = %v, want %s", name, s, want)
		}
	}
	if s := LookupSetting("batchsize"); s != nil {
		t.Errorf("LookupSetting(batchsize) = %s, want nil", s.Name)
	}
	if got := LookupSetting("max_batch_size").Flag(); got != "max-batch-size" {
		t.Errorf("Flag() = %q", got)
	}
}

func TestSettingParseFormat(t *testing.T) {
	for _, c := range []struct{ name, text, back, err string }{
		{"batch_size", " 250 ", "250", ""},
		{"batch_size", "many", "", `"many" is not an integer`},
		{"max_wait", "1d", "1d", ""},
		{"max_wait", "90s", "1m30s", ""},
		{"max_wait", "soon", "", `"soon" is not a duration (e.g. 500ms, 2s, 1h, 30d)`},
		{"start_from", "latest", "latest", ""},
	} {
		s := LookupSetting(c.name)
		v, err := s.Parse(c.text)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s.Parse(%q) error = %v, want %q", c.name, c.text, err, c.err)
			}
			continue
		}
		if err != nil || s.Format(v) != c.back {
			t.Errorf("%s.Parse(%q) = %v, %v; formatted %q, want %q", c.name, c.text, v, err, s.Format(v), c.back)
		}
	}
}

func TestSettingsChange(t *testing.T) {
	var c SettingsChange
	if !c.IsZero() {
		t.Fatal("a zero change changes something")
	}
	c.Set("batch_size", 250)
	c.Set("max-wait", time.Second)
	if len(c.Changed()) != 2 || c.Changed()[0].Name != "batch_size" || c.Changed()[1].Name != "max_wait" {
		t.Fatalf("Changed() = %v", c.Changed())
	}
	got := c.Apply(TableSpec{Table: "t", MaxEvents: 5000, MaxWait: 2 * time.Second, MaxQuarantine: 3})
	if got.Table != "t" || got.MaxEvents != 250 || got.MaxWait != time.Second || got.MaxQuarantine != 3 {
		t.Fatalf("Apply = %+v", got)
	}
	b, _ := json.Marshal(c)
	if string(b) != `{"max_events":250,"max_wait":1000000000}` {
		t.Fatalf("JSON %s", b)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Set("max_quarantine", 0)
	if err := c.Validate(); err == nil || err.Error() != "max_quarantine: 0 outside 1..1000000 records" {
		t.Fatalf("Validate() = %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Set of a setting that is not live did not panic")
			}
		}()
		c.Set("start_from", "latest")
	}()
}

func TestCommentRules(t *testing.T) {
	ok := TableSpec{}.Defaults()
	for _, c := range []struct{ comment, want string }{
		{"", ""},
		{"orders from the shop database, owner: data-eng", ""},
		{strings.Repeat("ü", 1000), ""},
		{strings.Repeat("ü", 1001), "comment: 1001 characters, more than 1000"},
		{"line one\nline two", "comment: control character U+000A at character 9: give one line of text without tabs"},
		{"a\x7fb", "comment: control character U+007F at character 2: give one line of text without tabs"},
		{"bad \xff byte", "comment: not valid UTF-8"},
	} {
		s := ok
		s.Comment = c.comment
		err := s.Validate()
		if (c.want == "" && err != nil) || (c.want != "" && (err == nil || err.Error() != c.want)) {
			t.Errorf("Validate(comment %q) = %v, want %q", c.comment, err, c.want)
		}
	}
	var ch SettingsChange
	ch.Set("comment", "owner: data-eng")
	if b, _ := json.Marshal(ch); string(b) != `{"comment":"owner: data-eng"}` {
		t.Fatalf("change JSON %s", b)
	}
	if got := ch.Apply(ok).Comment; got != "owner: data-eng" {
		t.Fatalf("Apply: comment %q", got)
	}
}

// group and transaction_topic: a group name follows GroupRule, a
// transaction topic Kafka's topic rule and needs a group; both are fixed
// settings (not Live) without defaults, and transaction_topic is a
// group's (PerGroup).
func TestGroupSettings(t *testing.T) {
	ok := TableSpec{}.Defaults()
	for _, c := range []struct {
		group, topic string
		want         string
	}{
		{"", "", ""},
		{"shop", "", ""},
		{"shop_2", "shop.transaction", ""},
		{"Shop", "", `group: "Shop" has "S" at byte 0 (upper case); ` + GroupRule},
		{"shop.eu", "", `group: "shop.eu" has a dot; ` + GroupRule},
		{"2shop", "", `group: "2shop" has a part starting with a digit ("2shop"); ` + GroupRule},
		{"order", "", `group: "order" has the part "order", a word SQL reserves (engines must quote it); ` + GroupRule},
		{"", "shop.transaction", "transaction_topic: needs a group (a transaction topic is a group's)"},
		{"shop", "shop/transaction", `transaction_topic: topic "shop/transaction" has "/" at byte 4; ` + "a Kafka topic name is 1 to 249 characters of a-z, A-Z, 0-9, '.', '_' and '-', other than \".\" and \"..\""},
	} {
		s := ok
		s.Group, s.TransactionTopic = c.group, c.topic
		err := s.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("group %q, transaction topic %q: Validate() = %q, want %q", c.group, c.topic, got, c.want)
		}
	}
	if err := CheckGroup("shop"); err != nil {
		t.Errorf("CheckGroup(shop) = %v", err)
	}
	var se *SettingError
	if err := CheckGroup(""); !errors.As(err, &se) || se.Name != "group" || se.Why != `"" is empty; `+GroupRule {
		t.Errorf("CheckGroup(\"\") = %v", err)
	}
	g, tt := LookupSetting("group"), LookupSetting("transaction-topic")
	if g == nil || tt == nil || g.Live || tt.Live || g.PerGroup || !tt.PerGroup || g.Default != nil || tt.Default != nil || tt.Flag() != "transaction-topic" {
		t.Fatalf("settings group %+v, transaction_topic %+v", g, tt)
	}
	b, err := json.Marshal(TableSpec{Group: "shop", TransactionTopic: "shop.transaction"}.SettingsOnly())
	if err != nil || !strings.Contains(string(b), `"group":"shop","transaction_topic":"shop.transaction"`) {
		t.Fatalf("JSON %s (%v)", b, err)
	}
	if b, _ := json.Marshal(TableSpec{}); strings.Contains(string(b), "group") || strings.Contains(string(b), "transaction_topic") {
		t.Fatalf("a spec without a group has them in JSON: %s", b)
	}
}

// DataCollection: the source table when given, else the topic's last two
// segments.
func TestDataCollection(t *testing.T) {
	for _, c := range []struct {
		spec TableSpec
		want string
	}{
		{TableSpec{Topic: "srv.public.orders"}, "public.orders"},
		{TableSpec{Topic: "srv.public.orders", SourceTable: "sales.orders"}, "sales.orders"},
		{TableSpec{Topic: "orders"}, ""},
		{TableSpec{Topic: "srv..orders"}, ""},
	} {
		if got := c.spec.DataCollection(); got != c.want {
			t.Errorf("%+v: DataCollection() = %q, want %q", c.spec, got, c.want)
		}
	}
}

func TestDataCollectionText(t *testing.T) {
	for _, c := range []struct {
		spec TableSpec
		want string
	}{
		{TableSpec{Topic: "srv.public.orders"}, `"public.orders" (the topic's last two segments)`},
		{TableSpec{Topic: "srv.public.orders", SourceTable: "sales.orders"}, `"sales.orders" (--source-table)`},
		{TableSpec{Topic: "orders"}, "nothing (the topic name has fewer than two segments)"},
	} {
		if got := c.spec.DataCollectionText(); got != c.want {
			t.Errorf("%+v: DataCollectionText() = %q, want %q", c.spec, got, c.want)
		}
	}
}

// cut_every: a group's (PerGroup), fixed at start, at least MinCutEvery,
// needs a group; 0 leaves the group workflow's minute.
func TestCutEverySetting(t *testing.T) {
	ok := TableSpec{}.Defaults()
	for _, c := range []struct {
		group string
		every time.Duration
		want  string
	}{
		{"", 0, ""},
		{"shop", 0, ""},
		{"shop", 10 * time.Second, ""},
		{"shop", 5 * time.Minute, ""},
		{"shop", 9 * time.Second, "cut_every: 9s is shorter than 10s"},
		{"shop", -time.Second, "cut_every: -1s is shorter than 10s"},
		{"", time.Minute, "cut_every: needs a group (the cut interval is a group's)"},
	} {
		s := ok
		s.Group, s.CutEvery = c.group, c.every
		got := ""
		if err := s.Validate(); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("group %q, cut_every %s: Validate() = %q, want %q", c.group, c.every, got, c.want)
		}
	}
	st := LookupSetting("cut-every")
	if st == nil || st.Live || !st.PerGroup || st.Default != nil || st.Flag() != "cut-every" || st.Kind() != durationType {
		t.Fatalf("setting cut_every %+v", st)
	}
}
