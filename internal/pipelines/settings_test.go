package pipelines

import (
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// The settings of payload.Settings are read by their names and by their
// aliases (their JSON names, as status --output json shows a spec), in
// defaults and per pipeline; an empty value leaves the setting to the
// defaults.
func TestSettingAliases(t *testing.T) {
	src := `defaults:
  max_events: 250
  max_wait: 5m
pipelines:
  - topic: srv.shop.orders
    max_batch_events: 1000
  - topic: srv.shop.items
    batch_size: 300
    max_wait:
`
	f, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ps, warns, err := f.Resolve(nil, false)
	if err != nil || len(warns) != 0 {
		t.Fatalf("Resolve: %v, warnings %v", err, warns)
	}
	want := []payload.TableSpec{
		{StartFrom: "earliest", MaxEvents: 250, MaxBatchEvents: 1000, MaxWait: 5 * time.Minute, MaxQuarantine: 100},
		{StartFrom: "earliest", MaxEvents: 300, MaxWait: 5 * time.Minute, MaxQuarantine: 100},
	}
	for i, p := range ps {
		if got := p.Settings; got.StartFrom != want[i].StartFrom || got.MaxEvents != want[i].MaxEvents || got.MaxBatchEvents != want[i].MaxBatchEvents ||
			got.MaxWait != want[i].MaxWait || got.MaxQuarantine != want[i].MaxQuarantine {
			t.Errorf("%s: settings %+v, want %+v", p.Table, got, want[i])
		}
	}
}

func TestSettingKeyProblems(t *testing.T) {
	src := `defaults:
  batch_size: 10
  max_events: 20
  batch_sise: 30
pipelines:
  - topic: a.b
    max_quarantin: 5
    max_wait: [1s]
    start_from: {x: 1}
    max_batch_events: 2.5
`
	_, err := Parse("p.yaml", []byte(src))
	want := `p.yaml:3: defaults.max_events: given twice: max_events is another name of batch_size (line 2)
p.yaml:4: defaults.batch_sise: unknown field batch_sise (did you mean batch_size?)
p.yaml:7: pipelines[0].max_quarantin: unknown field max_quarantin (did you mean max_quarantine?)
p.yaml:8: pipelines[0].max_wait: a list is not a duration
p.yaml:9: pipelines[0].start_from: a mapping is not a string
p.yaml:10: pipelines[0].max_batch_events: "2.5" is not an integer`
	if err == nil || err.Error() != want {
		t.Fatalf("problems:\n%v\nwant:\n%s", err, want)
	}
}

// comment: is a setting of the file like the others, checked by its rule.
func TestCommentKey(t *testing.T) {
	f, err := Parse("p.yaml", []byte("defaults:\n  comment: shop tables\npipelines:\n  - topic: srv.shop.orders\n    comment: \"orders, owner: data-eng\"\n  - topic: srv.shop.items\n"))
	if err != nil {
		t.Fatal(err)
	}
	ps, _, err := f.Resolve(nil, false)
	if err != nil || len(ps) != 2 || ps[0].Settings.Comment != "orders, owner: data-eng" || ps[1].Settings.Comment != "shop tables" {
		t.Fatalf("Resolve: %v %+v", err, ps)
	}
	_, err = Parse("p.yaml", []byte("pipelines:\n  - topic: a.b\n    comment: |\n      two\n      lines\n"))
	if want := "p.yaml:3: pipelines[0].comment: control character U+000A at character 4: give one line of text without tabs"; err == nil || err.Error() != want {
		t.Fatalf("problems %v, want %s", err, want)
	}
}

// group: on a pipeline (or in defaults) names a group the groups block
// declares; the group's transaction_topic is given there, once, and
// reaches every pipeline of the group.
func TestGroupKeys(t *testing.T) {
	src := `defaults:
  group: shop
groups:
  shop:
    transaction_topic: srv.transaction
    cut_every: 30s
  audit:
pipelines:
  - topic: srv.shop.orders
  - topic: srv.shop.items
  - topic: srv.audit.logins
    group: audit
  - topic: srv.other.things
    group:
`
	f, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ps, warns, err := f.Resolve(nil, false)
	if err != nil || len(warns) != 0 || len(ps) != 4 {
		t.Fatalf("Resolve: %v, warnings %v, %d pipelines", err, warns, len(ps))
	}
	want := [][2]string{{"shop", "srv.transaction"}, {"shop", "srv.transaction"}, {"audit", ""}, {"shop", "srv.transaction"}}
	for i, p := range ps {
		if got := [2]string{p.Settings.Group, p.Settings.TransactionTopic}; got != want[i] {
			t.Errorf("%s: group, transaction topic %q, want %q", p.Table, got, want[i])
		}
		if err := p.Settings.Validate(); err != nil {
			t.Errorf("%s: %v", p.Table, err)
		}
		if want := map[string]time.Duration{"shop": 30 * time.Second}[p.Settings.Group]; p.Settings.CutEvery != want {
			t.Errorf("%s: cut_every %s, want %s", p.Table, p.Settings.CutEvery, want)
		}
	}

	src = `groups:
  Shop:
    transaction_topic: "a/b"
  shop:
    transaction_topics: x
    cut_every: 5s
  audit:
    cut_every: soon
pipelines:
  - topic: srv.shop.orders
    group: shoq
  - topic: srv.shop.items
    group: shop
    transaction_topic: srv.transaction
`
	_, err = Parse("p.yaml", []byte(src))
	want2 := `p.yaml:2: groups.Shop: group: "Shop" has "S" at byte 0 (upper case); ` + payload.GroupRule + `
p.yaml:3: groups.Shop.transaction_topic: topic "a/b" has "/" at byte 1; a Kafka topic name is 1 to 249 characters of a-z, A-Z, 0-9, '.', '_' and '-', other than "." and ".."
p.yaml:5: groups.shop.transaction_topics: unknown field transaction_topics (did you mean transaction_topic?)
p.yaml:6: groups.shop.cut_every: cut_every: 5s is shorter than 10s
p.yaml:8: groups.audit.cut_every: "soon" is not a duration (e.g. 500ms, 2s, 1h, 30d)
p.yaml:11: pipelines[0].group: group shoq is not declared: add it under groups (with its transaction_topic, if the connector writes one)
p.yaml:14: pipelines[1].transaction_topic: transaction_topic is a group's: give it once under groups.<group>.transaction_topic`
	if err == nil || err.Error() != want2 {
		t.Fatalf("problems:\n%v\nwant:\n%s", err, want2)
	}
	var keys []string
	for _, g := range Fields() {
		keys = append(keys, g.Fields...)
	}
	if n := strings.Count(strings.Join(keys, " "), "transaction_topic"); n != 1 {
		t.Fatalf("Fields() lists transaction_topic %d times, want once (under groups): %v", n, Fields())
	}
}
