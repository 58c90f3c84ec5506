//go:build e2e

package lakecat

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
)

// A real leak, redacted: iceberg-go's Azure FileIO with a SAS token
// reaching a closed port fails with Go's net/http error, which quotes the
// request URL with its query, the SAS signature included; OpenCatalog's
// and the worker's redaction (RedactText over the settings' properties)
// removes it, and only it.
func TestAzureSASRedactedFromFileIOError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	const sas = "sv=2024-11-04&ss=b&srt=co&sp=rwdlac&se=2030-01-01T00:00:00Z&sig=Zm9vYmFyc2lnbmF0dXJl%3D"
	cfg := CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "wasb://lake@acct.blob.core.windows.net/wh",
		Props: map[string]string{"adls.sas-token.acct.blob.core.windows.net": sas, "adls.endpoint": addr, "adls.protocol": "http"}}
	fsys, loc, ok, err := WarehouseIO(context.Background(), cfg)
	if err != nil || !ok || loc != cfg.Warehouse {
		t.Fatalf("WarehouseIO: %v %v %q", err, ok, loc)
	}
	_, err = fsys.Open(loc + "/x")
	if err == nil {
		t.Fatal("open through a closed port succeeded")
	}
	raw := err.Error()
	if !strings.Contains(raw, "sig=Zm9vYmFyc2lnbmF0dXJl%3D") {
		t.Fatalf("the Azure client no longer quotes the SAS in its error (then this test proves nothing): %s", raw)
	}
	want := fmt.Sprintf(`open wasb://lake@acct.blob.core.windows.net/wh/x: blob (key "wh/x") (code=Unknown): Get "http://%s/acct/lake/wh%%2Fx?`+
		`se=2030-01-01T00%%3A00%%3A00Z&sig=REDACTED&sp=rwdlac&srt=co&ss=b&sv=2024-11-04": dial tcp %s: connect: connection refused`, addr, addr)
	if got := cfg.Redact(raw); got != want {
		t.Fatalf("redacted\n%s\nwant\n%s", got, want)
	}
}
