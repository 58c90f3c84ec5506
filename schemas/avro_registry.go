package schemas

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// Avro records in the Confluent wire format (Confluent docs, "Wire
// format"): byte 0 is the magic byte 0, bytes 1–4 the schema id (a
// big-endian int32), the rest the Avro binary body written with that
// schema. The schema is fetched from a Confluent-compatible registry with
// franz-go's sr client (GET /schemas/ids/{id}), parsed with hamba/avro,
// compiled into a decode plan, and cached per id.

// confluentMagic is the first byte of a Confluent-framed record.
const confluentMagic = 0

// avroCacheLimit bounds the cached schemas per decoder (a topic has a
// handful of schema versions; hitting it resets the cache).
const avroCacheLimit = 1024

// defaultRegistryTimeout bounds one schema fetch.
const defaultRegistryTimeout = 30 * time.Second

// avroState is a Decoder's Avro side: the registry client, the schemas
// and plans cached by id, and a reader.
type avroState struct {
	client  *sr.Client
	timeout time.Duration
	nodes   map[int]*anode
	values  map[int]*avroValuePlan
	keys    map[int]*avroRow
	missing map[int]missingID // ids the registry did not know, not asked again for a while
	readers [40]*avro.Reader  // by ceil(log2(body length)), see readerFor
	json    []byte            // JSON rendering scratch
}

// missingID remembers an unknown schema id: its error and when to ask
// the registry again.
type missingID struct {
	err   error
	retry time.Time
}

// missingRetry is how long an unknown schema id is answered from memory
// (every record with it is a DecodeError) before the registry is asked
// again.
const missingRetry = time.Minute

func (a *avroState) init(client *sr.Client, timeout time.Duration) {
	if timeout <= 0 {
		timeout = defaultRegistryTimeout
	}
	a.client, a.timeout = client, timeout
	a.nodes = make(map[int]*anode)
	a.values = make(map[int]*avroValuePlan)
	a.keys = make(map[int]*avroRow)
	a.missing = make(map[int]missingID)
}

// splitConfluent returns the schema id and the Avro body of a framed
// record.
func splitConfluent(b []byte) (int, []byte, error) {
	if len(b) < 5 || b[0] != confluentMagic {
		return 0, nil, errors.New("not in the Confluent wire format (magic byte 0, 4-byte schema id, Avro body)")
	}
	id := int32(binary.BigEndian.Uint32(b[1:5]))
	if id < 0 {
		return 0, nil, fmt.Errorf("negative schema id %d", id)
	}
	return int(id), b[5:], nil
}

// schemaNode returns the compiled schema of id, fetching it from the
// registry the first time. An id the registry does not know is a plain
// error (a DecodeError for Decode); any other registry failure is a
// *RegistryError.
func (a *avroState) schemaNode(id int) (*anode, error) {
	if n, ok := a.nodes[id]; ok {
		return n, nil
	}
	if a.client == nil {
		return nil, fmt.Errorf("an Avro record (schema id %d) but no schema registry is configured (DecoderOptions.Registry)", id)
	}
	if m, ok := a.missing[id]; ok && time.Now().Before(m.retry) {
		return nil, m.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	defer cancel()
	s, err := a.client.SchemaByID(ctx, id)
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && (re.ErrorCode == sr.ErrSchemaNotFound.Code || re.StatusCode == http.StatusNotFound) {
			err = fmt.Errorf("schema id %d is not registered in the schema registry: %v", id, err)
			if len(a.missing) >= avroCacheLimit {
				clear(a.missing)
			}
			a.missing[id] = missingID{err: err, retry: time.Now().Add(missingRetry)}
			return nil, err
		}
		return nil, &RegistryError{SchemaID: id, Err: err}
	}
	if s.Type != sr.TypeAvro {
		return nil, fmt.Errorf("schema id %d is a %s schema, not Avro", id, s.Type)
	}
	if len(s.References) > 0 {
		return nil, fmt.Errorf("schema id %d uses schema references, which are not supported", id)
	}
	parsed, err := avro.ParseWithCache(s.Schema, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("schema id %d is not a valid Avro schema: %v", id, err)
	}
	n, err := compileAvro(parsed)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %v", id, err)
	}
	if len(a.nodes) >= avroCacheLimit {
		clear(a.nodes)
		clear(a.values)
		clear(a.keys)
	}
	a.nodes[id] = n
	delete(a.missing, id)
	return n, nil
}

// valuePlan returns the plan of a value schema id.
func (d *Decoder) avroValuePlan(id int) (*avroValuePlan, error) {
	if p, ok := d.avro.values[id]; ok {
		return p, nil
	}
	n, err := d.avro.schemaNode(id)
	if err != nil {
		return nil, err
	}
	p, err := d.planValue(n)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %v", id, err)
	}
	d.avro.values[id] = p
	return p, nil
}

// avroKeyPlan returns the plan of a key schema id.
func (d *Decoder) avroKeyPlan(id int) (*avroRow, error) {
	if p, ok := d.avro.keys[id]; ok {
		return p, nil
	}
	n, err := d.avro.schemaNode(id)
	if err != nil {
		return nil, err
	}
	p, err := d.compileRow(n, "key", "")
	if err != nil {
		return nil, fmt.Errorf("key schema id %d: %v", id, err)
	}
	d.avro.keys[id] = p
	return p, nil
}

// readerFor returns the decoder's Avro reader reset to body. Its
// MaxByteSliceSize is the power of two at or above the body's length: no
// string or bytes value can be longer than the body, so a corrupt length
// never allocates more than twice the record.
func (a *avroState) readerFor(body []byte) *avro.Reader {
	k := bits.Len(uint(len(body)))
	if k >= len(a.readers) {
		k = len(a.readers) - 1
	}
	if a.readers[k] == nil {
		cfg := avro.Config{MaxByteSliceSize: max(1<<k, 64)}.Freeze()
		a.readers[k] = avro.NewReader(nil, 0, avro.WithReaderConfig(cfg))
	}
	r := a.readers[k]
	r.Error = nil
	return r.Reset(body)
}

// readerEnd checks that a record was read completely and without error.
func readerEnd(r *avro.Reader) error {
	if r.Error != nil {
		return avroErr(r.Error)
	}
	r.Peek()
	if r.Error == nil {
		return errors.New("the Avro body has trailing bytes after the record")
	}
	if !errors.Is(r.Error, io.EOF) {
		return avroErr(r.Error)
	}
	return nil
}

// avroErr explains a reader error.
func avroErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("malformed Avro: the body ends early")
	}
	return fmt.Errorf("malformed Avro: %v", err)
}
