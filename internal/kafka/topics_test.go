package kafka

import (
	"slices"
	"testing"
)

// Topics lists every topic the cluster has, sorted, internal ones left out.
func TestTopics(t *testing.T) {
	_, c := newCluster(t)
	ctx := testCtx(t)
	for _, topic := range []string{"srv.shop.orders", "srv.shop.customers", "other"} {
		if err := c.CreateTopic(ctx, topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.Topics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"other", "srv.shop.customers", "srv.shop.orders"}; !slices.Equal(got, want) {
		t.Fatalf("topics %v, want %v", got, want)
	}
}
