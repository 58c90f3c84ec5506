package devstack

import (
	"context"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
)

func TestPlanTemporalDefaults(t *testing.T) {
	p, err := planTemporal(TemporalOptions{GRPCPort: 17233, HTTPPort: 17243})
	if err != nil {
		t.Fatal(err)
	}
	if p.bindIP != "127.0.0.1" || p.hostIP != "127.0.0.1" || p.namespace != "default" {
		t.Fatalf("bindIP=%q hostIP=%q namespace=%q, want 127.0.0.1 127.0.0.1 default", p.bindIP, p.hostIP, p.namespace)
	}
	if p.frontendHostPort() != "127.0.0.1:17233" || p.uiPort != 18233 || p.httpPort != 17243 || p.metricsPort != 0 {
		t.Fatalf("frontend=%s ui=%d http=%d metrics=%d, want 127.0.0.1:17233 18233 17243 0",
			p.frontendHostPort(), p.uiPort, p.httpPort, p.metricsPort)
	}
	if p.logLevel.String() != "ERROR" {
		t.Fatalf("log level %s, want ERROR", p.logLevel)
	}
	ports := map[int]bool{}
	for _, v := range p.listenPorts() {
		if v != 0 && ports[v] {
			t.Fatalf("port %d used twice in %v", v, p.listenPorts())
		}
		ports[v] = true
	}

	p, err = planTemporal(TemporalOptions{IP: "0.0.0.0", UIPort: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p.bindIP != "0.0.0.0" || p.hostIP != "127.0.0.1" || p.uiPort != 0 || p.grpcPort == 0 || p.httpPort == 0 {
		t.Fatalf("bindIP=%q hostIP=%q ui=%d grpc=%d http=%d", p.bindIP, p.hostIP, p.uiPort, p.grpcPort, p.httpPort)
	}
}

func TestPlanTemporalErrors(t *testing.T) {
	for _, tc := range []struct {
		opts TemporalOptions
		want string
	}{
		{TemporalOptions{IP: "localhost"}, `devstack: IP "localhost" is not an IP address`},
		{TemporalOptions{LogLevel: "loud"}, `devstack: unknown log level "loud" (want debug, info, warn or error)`},
		{TemporalOptions{UIPort: -2}, "devstack: UIPort -2 out of range -1..65535"},
		{TemporalOptions{GRPCPort: 70000}, "devstack: GRPCPort 70000 out of range 0..65535"},
		{TemporalOptions{GRPCPort: 17233, MetricsPort: 17233}, "devstack: "},
	} {
		_, err := planTemporal(tc.opts)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("planTemporal(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestStartTemporalTooManySearchAttributes(t *testing.T) {
	sas := map[string]enumspb.IndexedValueType{}
	for _, n := range []string{"A", "B", "C", "D"} {
		sas[n] = enumspb.INDEXED_VALUE_TYPE_INT
	}
	ts, err := StartTemporal(context.Background(), TemporalOptions{UIPort: -1, SearchAttributes: sas})
	if err == nil {
		_ = ts.Stop()
		t.Fatal("StartTemporal with 4 Int search attributes succeeded, want an error")
	}
	const want = `devstack: namespace "default": cannot have more than 3 search attributes of type Int`
	if err.Error() != want {
		t.Fatalf("error = %q, want %q", err, want)
	}
}
