// Package kafka is the pipeline's thin adapter over franz-go (kgo + kadm):
// topic creation, offset listings, ordered synchronous produce, and exact
// consumption of half-open offset ranges per partition (Fetch; and
// ReadTransactionTopic, which decodes a transaction metadata topic's
// records with the caller's decoder and keeps those it refuses).
//
// Exactness is the point of Fetch: a micro-batch is recorded as an offset
// range per partition before it is applied, and a retried or replayed batch
// must read exactly the same records. Fetch therefore never rewinds silently
// (retention loss is an ErrRetentionGap), reads only committed transactional
// data (read_committed) and decides completion from offsets and the fetch
// position, not from time, because offsets are not dense: transaction
// control markers, aborted records and compaction all leave holes.
//
// No consumer group is used; Kafka group offsets are not part of the
// pipeline's bookkeeping.
package kafka
