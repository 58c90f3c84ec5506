package runner

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestIdentityRoundTrip(t *testing.T) {
	id := Identity("v1.4.0+7593f21e0c1a", "rest http://iceberg-rest:8181 s3://warehouse/")
	host, _ := os.Hostname()
	want := strconv.Itoa(os.Getpid()) + "@" + host + " lakemirror/v1.4.0+7593f21e0c1a catalog/" + CatalogHash("rest http://iceberg-rest:8181 s3://warehouse/")
	if id != want {
		t.Fatalf("Identity = %q, want %q", id, want)
	}
	p := ParsePoller(id)
	if p.Build != "v1.4.0+7593f21e0c1a" || p.Catalog != CatalogHash("rest http://iceberg-rest:8181 s3://warehouse/") || !strings.HasSuffix(p.Host, "@"+host) {
		t.Fatalf("ParsePoller = %+v", p)
	}
	if h := CatalogHash("x"); h != "2d711642b726" {
		t.Fatalf("CatalogHash(x) = %s", h)
	}
	if p := ParsePoller("4242@box@"); p != (Poller{Identity: "4242@box@", Host: "4242@box"}) {
		t.Fatalf("the SDK's default identity: %+v", p)
	}
}
