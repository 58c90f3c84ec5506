package pipelines

import (
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
