package workflows

import (
	"testing"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
)

// A batch's late keys that could not be woven into the history (no
// bronze, a rebuilt local state) count in the table's totals, which
// status shows as "late keys not in history" (issue 34 item 3: they were
// counted only when RebuildKeys found them).
func TestTotalsCountUnwovenInBatches(t *testing.T) {
	var tot Totals
	tot.add(&activities.ApplyResult{Records: 3, History: lake.HistoryResult{Unwoven: 2, Late: 2}})
	tot.add(&activities.ApplyResult{Records: 1})
	if tot.UnwovenKeys != 2 || tot.Batches != 2 || tot.Records != 4 {
		t.Errorf("totals %+v, want 2 unwoven keys in 2 batches of 4 records", tot)
	}
}

// Changes whose _source_ts is their Kafka record timestamp (the source
// gave no commit time) add up in the totals (issue 34 item 9).
func TestTotalsCountSourceTsFromKafka(t *testing.T) {
	var tot Totals
	tot.add(&activities.ApplyResult{Records: 7, Changes: 4, SourceTsFromKafka: 1})
	tot.add(&activities.ApplyResult{Records: 2, Changes: 2, SourceTsFromKafka: 2})
	if tot.SourceTsFromKafka != 3 || tot.Changes != 6 {
		t.Errorf("totals %+v, want 3 changes timed by Kafka of 6", tot)
	}
}

// TOAST/LOB placeholders written as NULL (no value known) add up in the
// totals, which status shows as "values never known" (issue 34).
func TestTotalsCountUnknownValues(t *testing.T) {
	var tot Totals
	tot.add(&activities.ApplyResult{Records: 2, Mirror: lake.MirrorResult{UnknownPlaceholders: 2}})
	tot.add(&activities.ApplyResult{Records: 1, Mirror: lake.MirrorResult{UnknownPlaceholders: 1}})
	if tot.UnknownValues != 3 {
		t.Errorf("totals %+v, want 3 unknown values", tot)
	}
}
