package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/source"
	"github.com/lakemirror/lakemirror/schemas"
)

// LoadTable loads the table straight from its PostgreSQL source (issue 6,
// "direct initial load"): it reads the table in key order in chunks from
// one REPEATABLE READ snapshot whose WAL position P is taken with it, and
// applies each chunk like a batch of Debezium snapshot reads (the events
// the decoder would give, built from the typed rows: source.Renderer.Event,
// or decoded when the spec declares column types; for bronze also
// rendered as the Debezium JSON the connector would send, stored under
// the topic "<topic>#<load id>"; merged into mirror and history by the
// same rules), committing a load cursor with every chunk
// (TableSpec.LoadChunkRows rows). A retried attempt resumes after the
// last committed chunk (a new snapshot for the rest). It heartbeats the
// cursor. The next chunk is read and its events built while one is
// written (chunks commit in order): memory holds two chunks.
//
// Positions: an initial load writes (0, P) like Debezium's own snapshot,
// so every streamed change wins over it; a re-snapshot writes (P, 0),
// which also wins over changes committed before the snapshot (so rows
// whose changes were lost are repaired), and soft-deletes at (P, 0) every
// live mirror row below that position the snapshot did not contain (ghost
// rows, deleted while their events were lost). A transaction in progress
// when the snapshot was taken may have written its changes before P and
// commit after it; the first one streamed after P has the previous commit
// as its lastCommitLsn, so its changes sort below (P, 0) although the
// snapshot does not show them. Every chunk's cursor therefore records the
// snapshot's transaction list (LoadCursor.Snapshots, with those of earlier
// re-snapshots), and the mirror lifts such changes above the snapshot's
// rows wherever it takes decoded changes (lake.MirrorWriter.Prepare: a
// batch, or bronze read for a rebuild).
//
// Errors: a missing source (non-retryable InvalidTableSpec), PostgreSQL,
// catalog and storage errors (retried).
func (a *Activities) LoadTable(ctx context.Context, req LoadRequest) (LoadResult, error) {
	spec := req.Spec.Defaults()
	res := LoadResult{LoadID: req.LoadID}
	if err := a.checkCatalog(spec); err != nil {
		return res, err
	}
	dsn, ok := a.Sources[spec.Source]
	if !ok || spec.Source == "" {
		return res, badSpec(fmt.Errorf("table %s: source %q is not configured on this worker (-sources name=dsn)", spec.Table, spec.Source))
	}
	srcSchema, srcTable, ok := strings.Cut(spec.SourceTable, ".")
	if !ok {
		return res, badSpec(fmt.Errorf("table %s: source table %q is not schema.table", spec.Table, spec.SourceTable))
	}
	st, name, err := a.state(spec)
	if err != nil {
		return res, badSpec(err)
	}
	// heartbeat from the start, not only per chunk: a cancellation (a stop
	// while the load runs) reaches the activity with a heartbeat's answer
	// and ends its source reads through ctx
	stop := keepAlive(ctx, 5*time.Second, func() any { return "load " + req.LoadID })
	defer stop()
	st.mu.Lock()
	defer st.mu.Unlock()
	pg, err := source.Open(ctx, dsn)
	if err != nil {
		return res, sourceError(err)
	}
	defer pg.Close()
	info, err := pg.Describe(ctx, srcSchema, srcTable, spec.KeyColumns)
	if err != nil {
		return res, sourceError(err)
	}
	if len(st.keyCols) == 0 {
		st.keyCols = info.Key
	}
	if err := st.settleKeys(ctx, a, name); err != nil {
		return res, err
	}
	serverName, _, _ := strings.Cut(spec.Topic, ".")
	renderer, err := source.NewRenderer(info, serverName)
	if err != nil {
		return res, badSpec(err)
	}
	cur, err := a.loadCursor(ctx, name, spec, req.LoadID)
	if err != nil {
		return res, err
	}
	loadTopic := spec.Topic + "#" + req.LoadID
	var seen map[cdc.Key]bool
	if req.Resnapshot && !spec.WithoutBronze {
		if seen, err = tableread.BronzeKeysOfTopic(ctx, a.Catalog, name, loadTopic); err != nil {
			return res, err
		}
	}
	first := uint64(0)
	base := int64(0)
	var snaps []cdc.PostgresSnapshot // the table's re-snapshot reads, this load's included
	if cur != nil {
		res.Resumed, first, base, res.LSN, snaps = true, cur.LSN, cur.Read, cur.LSN, cur.Snapshots
	} else if snaps, err = a.tableSnapshots(ctx, name); err != nil {
		return res, err
	}
	chunk := req.Chunk
	if chunk <= 0 {
		chunk = spec.LoadChunkRows()
	}
	// the events are built from the typed rows unless the spec declares
	// column types (TableSpec.Columns), which the decoder applies to the
	// records (an unconstrained numeric declared a decimal): then every
	// row is rendered and decoded, as a streamed one is
	typed := spec.Columns == nil
	// each chunk's events (and bronze's records) are built on the source's
	// goroutine (render) while the chunk before it is written (write, on
	// its own goroutine, in chunk order): the source read overlaps the
	// lake's work
	type rendered struct {
		recs   []schemas.Record // the rendered records: bronze's, or the decoder's input; nil when typed without bronze
		dec    *decoded         // the chunk's events when typed; nil: recs are decoded
		b      lake.Batch
		cursor *lake.LoadCursor
	}
	render := func(ch source.Chunk) (rendered, error) {
		if first == 0 {
			first, res.LSN = ch.LSN, ch.LSN
		}
		from := base + ch.Read - int64(len(ch.Rows))
		commit, lsn := uint64(0), ch.LSN
		if req.Resnapshot {
			commit, lsn = ch.LSN, 0
		}
		var dec *decoded
		if typed {
			dec = &decoded{typed: true, records: len(ch.Rows), events: make([]*cdc.Event, len(ch.Rows))}
		}
		var recs []schemas.Record
		if !typed || !spec.WithoutBronze { // bronze keeps the record Debezium would have sent
			recs = make([]schemas.Record, len(ch.Rows))
		}
		if typed && recs != nil {
			dec.bronze = make([]lake.BronzeRecord, len(ch.Rows))
		}
		for i, row := range ch.Rows {
			now, last := time.Now().UnixMicro(), ch.Final && i == len(ch.Rows)-1
			var e *cdc.Event
			if typed {
				var err error
				if e, err = renderer.Event(row, commit, lsn, now, last, loadTopic, from+int64(i)); err != nil {
					return rendered{}, err
				}
				dec.events[i] = e
				dec.counts.mark(0, e.Snapshot)
			}
			if recs == nil {
				continue
			}
			v, err := renderer.ValueAt(row, commit, lsn, now, last)
			if err != nil {
				return rendered{}, err
			}
			k, err := renderer.Key(row)
			if err != nil {
				return rendered{}, err
			}
			recs[i] = schemas.Record{Topic: loadTopic, Offset: from + int64(i), Key: k, Value: v, Timestamp: now}
			if typed {
				dec.bronze[i] = lake.BronzeRecord{Record: recs[i], Op: "r", Seq: e.Seq, SourceTs: e.SourceTs}
			}
		}
		if typed {
			dec.counts.changes, dec.counts.snapshotRows = len(ch.Rows), len(ch.Rows)
			dec.counts.snapshotLast = ch.Final && len(ch.Rows) > 0
		}
		if req.Resnapshot {
			snaps = lake.WithSnapshot(snaps, ch.Snapshot)
		}
		cursor := &lake.LoadCursor{ID: req.LoadID, LSN: first, Read: base + ch.Read, After: lake.KeyParts(ch.Last), Done: ch.Final, Snapshots: snaps}
		b := lake.Batch{ID: fmt.Sprintf("%s#%s.%d", spec.Table, req.LoadID, cursor.Read), Topic: loadTopic,
			Ranges: []lake.Range{{From: from, To: base + ch.Read}}, EndOffsets: req.Position, Load: cursor}
		return rendered{recs, dec, b, cursor}, nil
	}
	// the chunks' writes share one table cache: the load holds the table
	// (st.mu) and makes every commit of its tables meanwhile, so each
	// chunk starts from the tables the one before committed instead of
	// loading and parsing their metadata again (a commit that another
	// writer's raced fails and the load is retried, with a new cache)
	wctx := lake.WithTableCache(ctx)
	write := func(r rendered) error {
		stage := ""
		ares, keys, err := a.applyRecords(wctx, st, name, spec, r.b, r.recs, r.dec, "", &stage)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if seen != nil {
				seen[k] = true
			}
		}
		res.Rebuilt += ares.WovenKeys()
		if ares.History.Pending > 0 { // late keys: rebuild before the next chunk touches them
			rb, err := a.rebuildPending(wctx, st, name)
			if err != nil {
				return err
			}
			res.Rebuilt += rb.Keys
		}
		res.Rows, res.Chunks = r.cursor.Read, res.Chunks+1
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, r.cursor)
		}
		return nil
	}
	queue := make(chan rendered, 1)
	failed := make(chan error, 1) // the writer's error; it then drains queue
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for r := range queue {
			if err := write(r); err != nil {
				failed <- err
				for range queue {
				}
				return
			}
		}
	}()
	var writeErr error // the writer's error, once seen
	apply := func(ch source.Chunk) error {
		select {
		case writeErr = <-failed:
			return writeErr
		default:
		}
		r, err := render(ch)
		if err != nil {
			return err
		}
		select {
		case queue <- r:
			return nil
		case writeErr = <-failed:
			return writeErr
		}
	}
	waitWritten := func() error {
		close(queue)
		<-writerDone
		if writeErr == nil {
			select {
			case writeErr = <-failed:
			default:
			}
		}
		return writeErr
	}
	switch {
	case cur != nil && cur.Done:
		res.Rows = cur.Read
	case cur != nil:
		_, err = pg.SnapshotFrom(ctx, info, cur.Values(), chunk, apply)
	default:
		var lsn uint64
		lsn, err = pg.Snapshot(ctx, info, chunk, apply)
		if first == 0 {
			first, res.LSN = lsn, lsn // an empty table
		}
	}
	if werr := waitWritten(); werr != nil {
		err = werr // the write's error, which also ended the source's read
	}
	if err != nil {
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) { // not a chunk's apply (classified there): the source's read
			err = sourceError(err)
		}
		return res, classify(err)
	}
	if req.Resnapshot && spec.WithoutBronze {
		res.GhostsUnchecked = true // the keys read are known only through bronze
	} else if req.Resnapshot {
		if res.Ghosts, err = a.deleteGhosts(ctx, st, name, spec, renderer, req, first, res.Rows, seen, snaps); err != nil {
			return res, classify(err)
		}
	}
	return res, nil
}

// loadCursor returns where load id stopped: the lesser of the mirror's
// and (when the spec keeps one) the history's cursors (history commits
// after the mirror), or nil.
func (a *Activities) loadCursor(ctx context.Context, name lake.TableName, spec TableSpec, id string) (*lake.LoadCursor, error) {
	var out *lake.LoadCursor
	idents := [][]string{name.Mirror()}
	if !spec.WithoutHistory {
		idents = append(idents, name.History())
	}
	for _, ident := range idents {
		tbl, err := lake.LoadTable(ctx, a.Catalog, ident)
		if err != nil {
			return nil, err
		}
		if tbl == nil {
			return nil, nil
		}
		c, err := lake.ReadLoadCursor(tbl)
		if err != nil || c == nil || c.ID != id {
			return nil, err
		}
		if out == nil || c.Read < out.Read {
			out = c
		}
	}
	return out, nil
}

// tableSnapshots returns the re-snapshot reads recorded on the table's
// mirror by earlier loads (none when it has no mirror yet).
func (a *Activities) tableSnapshots(ctx context.Context, name lake.TableName) ([]cdc.PostgresSnapshot, error) {
	tbl, err := lake.LoadTable(ctx, a.Catalog, name.Mirror())
	if err != nil || tbl == nil {
		return nil, err
	}
	c, err := lake.ReadLoadCursor(tbl)
	if err != nil || c == nil {
		return nil, err
	}
	return c.Snapshots, nil
}
