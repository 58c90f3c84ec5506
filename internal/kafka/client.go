package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Timeouts applied when the caller's context has no deadline.
const (
	// DefaultAdminTimeout bounds EndOffsets, StartOffsets,
	// OffsetsAfterTime, CreateTopic and Produce.
	DefaultAdminTimeout = 30 * time.Second
	// DefaultFetchTimeout bounds one Fetch call (all its ranges).
	DefaultFetchTimeout = 2 * time.Minute
)

// Client talks to one Kafka cluster. It holds one long-lived kgo client for
// metadata, offset listings and produce, and a small pool of consuming kgo
// clients that Fetch calls borrow one at a time (see consumers.go), so a
// worker running many tables opens a bounded number of Kafka clients and
// connections instead of one per batch. A Client is safe for concurrent
// use.
type Client struct {
	brokers []string
	opts    []kgo.Opt // the caller's options, applied to every kgo client
	cl      *kgo.Client
	adm     *kadm.Client
	pool    consumerPool // Fetch's consuming clients

	// Fetch tuning; fixed by NewClient, changed only by tests.
	fetchMaxWait time.Duration // broker long-poll wait per fetch request
	idleProbe    time.Duration // no progress for this long → probe the fetch position
	keepControl  bool          // deliver control markers to Fetch (see fetch.go)
	probes       atomic.Int64  // position probes sent (observability for tests)
}

// NewClient returns a Client for the cluster reachable at brokers
// ("host:port" seeds). opts are applied to every kgo client the Client
// creates (the shared admin/producer client and each Fetch's consumer), so
// they should be connection settings (SASL, TLS, dialer, client id) and
// producer settings; consumer-group, consume-topic and transactional
// options do not belong here. Pass ManualPartitioner() to make Produce honour
// each record's Partition. NewClient does not contact the cluster: it fails
// only on empty brokers or invalid options.
func NewClient(brokers []string, opts ...kgo.Opt) (*Client, error) {
	if len(brokers) == 0 {
		return nil, errors.New("kafka: no seed brokers")
	}
	opts = slices.Clone(opts)
	cl, err := kgo.NewClient(append(slices.Clone(opts), kgo.SeedBrokers(brokers...))...)
	if err != nil {
		return nil, fmt.Errorf("kafka: new client: %w", err)
	}
	return &Client{
		brokers:      slices.Clone(brokers),
		opts:         opts,
		cl:           cl,
		adm:          kadm.NewClient(cl),
		fetchMaxWait: 250 * time.Millisecond,
		idleProbe:    500 * time.Millisecond,
		keepControl:  true,
		pool:         consumerPool{maxIdle: MaxIdleConsumers},
	}, nil
}

// ManualPartitioner is the NewClient option that makes Produce send every
// record to exactly the partition in its Partition field (which must then
// be set, 0 included, and exist). Without it, Produce partitions by key
// like the Java client's default partitioner (murmur2 of the key, so a key
// always lands where Kafka Connect would put it; records without a key are
// spread), and Record.Partition is ignored on input.
func ManualPartitioner() kgo.Opt { return kgo.RecordPartitioner(kgo.ManualPartitioner()) }

// Close releases the client's connections and its pooled consuming
// clients. In-flight calls fail; a Fetch after Close returns an error
// wrapping kgo.ErrClientClosed.
func (c *Client) Close() {
	c.pool.close()
	c.cl.Close()
}

// Kgo returns the underlying shared kgo client (for callers that need a
// franz-go feature this adapter does not wrap). Do not close it.
func (c *Client) Kgo() *kgo.Client { return c.cl }

// withDefault returns ctx bounded by d when ctx has no deadline.
func withDefault(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
