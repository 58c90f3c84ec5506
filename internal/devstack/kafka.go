package devstack

import (
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
)

// KafkaOptions configures StartKafka. The zero value is valid: one in-memory
// broker on a free port of 127.0.0.1 that auto-creates topics with 1 partition.
type KafkaOptions struct {
	// Port is the broker port on 127.0.0.1; 0 = a free port chosen by the
	// kernel (the -dev default used by callers is 19092).
	Port int
	// DataDir persists topics and records across restarts; "" = in memory.
	// The directory is created if missing.
	DataDir string
	// Partitions is the partition count of auto-created topics (and of
	// CreateTopics with -1 partitions); 0 = 1.
	Partitions int32
}

// Kafka is an embedded single-broker Kafka (franz-go kfake) on 127.0.0.1.
type Kafka struct {
	c       *kfake.Cluster
	brokers []string
	once    sync.Once
}

// StartKafka starts one kfake broker listening on 127.0.0.1:opts.Port with
// topic auto-creation on (clients must ask for it, e.g. kgo.AllowAutoTopicCreation).
// It returns once the broker accepts connections. Errors: negative or too
// large Port/Partitions, a port already in use, an unreadable DataDir.
func StartKafka(opts KafkaOptions) (*Kafka, error) {
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("devstack: Kafka port %d out of range 0..65535", opts.Port)
	}
	if opts.Partitions < 0 {
		return nil, fmt.Errorf("devstack: Kafka partitions %d < 0", opts.Partitions)
	}
	parts := opts.Partitions
	if parts == 0 {
		parts = 1
	}
	kopts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(int(parts)),
	}
	if opts.Port != 0 {
		kopts = append(kopts, kfake.Ports(opts.Port))
	}
	if opts.DataDir != "" {
		kopts = append(kopts, kfake.DataDir(opts.DataDir))
	}
	c, err := kfake.NewCluster(kopts...)
	if err != nil {
		return nil, fmt.Errorf("devstack: start Kafka: %w", err)
	}
	return &Kafka{c: c, brokers: c.ListenAddrs()}, nil
}

// Brokers returns the seed broker addresses, e.g. ["127.0.0.1:19092"].
func (k *Kafka) Brokers() []string { return slices.Clone(k.brokers) }

// Cluster returns the kfake cluster for topic management and fault injection.
func (k *Kafka) Cluster() *kfake.Cluster { return k.c }

// Stop closes the listener and, with a DataDir, writes the data out. Safe to
// call more than once.
func (k *Kafka) Stop() { k.once.Do(k.c.Close) }
