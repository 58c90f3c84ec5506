package pipelines

import (
	"testing"
	"time"
)

// maintenance.bronze_retention takes days, is the expire job's
// (Diff compares it only while both sides schedule expiry), and is
// refused below a day.
func TestBronzeRetentionSetting(t *testing.T) {
	src := `defaults:
  maintenance:
    bronze_retention: 30d
pipelines:
  - topic: srv.shop.orders
  - topic: srv.shop.items
    maintenance:
      bronze_retention: 0
`
	f, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ps, _, err := f.Resolve([]string{"srv.shop.orders", "srv.shop.items"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Maintenance.BronzeRetention != 30*24*time.Hour || ps[1].Maintenance.BronzeRetention != 0 {
		t.Fatalf("bronze retention %v, %v; want 720h and 0", ps[0].Maintenance.BronzeRetention, ps[1].Maintenance.BronzeRetention)
	}
	observed := ps[0]
	observed.Maintenance.BronzeRetention = 0
	ch := Diff(ps[0], observed)
	if len(ch) != 1 || ch[0].Field != "maintenance.bronze_retention" || ch[0].Old != "0s" || ch[0].New != "30d" || !ch[0].Live {
		t.Fatalf("diff %+v", ch)
	}
	observed.Maintenance.ExpireEvery = 0 // no expire schedule: its parameters are not compared
	for _, c := range Diff(ps[0], observed) {
		if c.Field == "maintenance.bronze_retention" {
			t.Fatalf("compared without an expire schedule: %+v", c)
		}
	}
	_, err = Parse("p.yaml", []byte("pipelines:\n  - topic: a.b\n    maintenance:\n      bronze_retention: 12h\n"))
	want := "p.yaml:4: pipelines[0].maintenance.bronze_retention: bronze retention 12h0m0s is shorter than a day: bronze is dropped in whole day partitions (0 keeps it for ever)"
	if err == nil || err.Error() != want {
		t.Fatalf("12h: %v\nwant %s", err, want)
	}
}
