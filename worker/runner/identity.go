package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// Identity is a lakemirror worker's Temporal identity
// (worker.Options.Identity), shown in the Web UI and in DescribeTaskQueue's
// pollers: "<pid>@<host> lakemirror/<build> catalog/<hash>", with build
// buildinfo.Info.Short() and hash CatalogHash of the worker's catalog
// identity, so `starter doctor` and other workers can tell which build
// and which catalog a poller has without asking it. runner.Start appends
// " worker/<id>" (the worker id of its own queue), which also keeps the
// identities of several workers in one process apart.
func Identity(build, catalogID string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s lakemirror/%s catalog/%s", os.Getpid(), host, build, CatalogHash(catalogID))
}

// CatalogHash is a short fingerprint of a catalog identity
// (lake.CatalogConfig.Identity): the first 12 hex digits of its SHA-256.
func CatalogHash(catalogID string) string {
	sum := sha256.Sum256([]byte(catalogID))
	return hex.EncodeToString(sum[:6])
}

// Poller is what a poller's identity says about it.
type Poller struct {
	Identity string // as Temporal reports it
	Host     string // "<pid>@<host>"
	Build    string // the lakemirror build; "" for a poller that is not a lakemirror worker of this kind (older builds, other programs)
	Catalog  string // CatalogHash of its catalog; "" when unknown
	Worker   string // its worker id (its own queue is WorkerQueue(Worker)); "" when unknown
}

// ParsePoller reads an identity written by Identity; other identities
// (the SDK's default "<pid>@<host>@", older lakemirror workers) give a
// Poller with only Identity and Host.
func ParsePoller(identity string) Poller {
	p := Poller{Identity: identity}
	fields := strings.Fields(identity)
	if len(fields) > 0 {
		p.Host = strings.TrimSuffix(fields[0], "@")
	}
	for _, f := range fields[1:] {
		if v, ok := strings.CutPrefix(f, "lakemirror/"); ok {
			p.Build = v
		} else if v, ok := strings.CutPrefix(f, "catalog/"); ok {
			p.Catalog = v
		} else if v, ok := strings.CutPrefix(f, "worker/"); ok {
			p.Worker = v
		}
	}
	return p
}
