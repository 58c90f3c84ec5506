// Package deploy holds the container build and the docker-compose stack's
// support files (connector registration, Temporal setup, sample schema and
// workload). No Docker engine runs where these tests run, so they parse
// docker-compose.yaml and check that the stack is coherent: images pinned,
// ports unique, dependencies real, the worker configured only through
// settings it reads, Prometheus scraping what the worker serves, Grafana
// provisioned from dashboards/, the connector, workload and starter
// agreeing on database, table and topic.
package deploy

import (
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const (
	root        = ".."
	composeFile = "../docker-compose.yaml"
)

// ---------------------------------------------------------------- model

// list is a compose string-or-list field (command, entrypoint, healthcheck test).
type list []string

func (l *list) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = list{n.Value}
		return nil
	}
	var s []string
	if err := n.Decode(&s); err != nil {
		return err
	}
	*l = s
	return nil
}

// env is a compose environment: a map or a list of K=V.
type env map[string]string

func (e *env) UnmarshalYAML(n *yaml.Node) error {
	*e = env{}
	if n.Kind == yaml.SequenceNode {
		var items []string
		if err := n.Decode(&items); err != nil {
			return err
		}
		for _, it := range items {
			k, v, _ := strings.Cut(it, "=")
			(*e)[k] = v
		}
		return nil
	}
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return err
	}
	for k, v := range m {
		if v == nil {
			(*e)[k] = ""
		} else {
			(*e)[k] = fmt.Sprint(v)
		}
	}
	return nil
}

// dependsOn is a list of services or a map service → {condition}.
type dependsOn map[string]string

func (d *dependsOn) UnmarshalYAML(n *yaml.Node) error {
	*d = dependsOn{}
	if n.Kind == yaml.SequenceNode {
		var items []string
		if err := n.Decode(&items); err != nil {
			return err
		}
		for _, it := range items {
			(*d)[it] = "service_started"
		}
		return nil
	}
	var m map[string]struct {
		Condition string `yaml:"condition"`
	}
	if err := n.Decode(&m); err != nil {
		return err
	}
	for k, v := range m {
		c := v.Condition
		if c == "" {
			c = "service_started"
		}
		(*d)[k] = c
	}
	return nil
}

type port struct{ hostIP, published, target string }

type ports []port

func (p *ports) UnmarshalYAML(n *yaml.Node) error {
	for _, item := range n.Content {
		if item.Kind == yaml.MappingNode {
			var long struct {
				Target    any    `yaml:"target"`
				Published any    `yaml:"published"`
				HostIP    string `yaml:"host_ip"`
			}
			if err := item.Decode(&long); err != nil {
				return err
			}
			pub := ""
			if long.Published != nil {
				pub = fmt.Sprint(long.Published)
			}
			*p = append(*p, port{long.HostIP, pub, fmt.Sprint(long.Target)})
			continue
		}
		s, _ := strings.CutSuffix(strings.TrimSuffix(item.Value, "/udp"), "/tcp")
		parts := strings.Split(s, ":")
		switch len(parts) {
		case 1:
			*p = append(*p, port{"", "", parts[0]})
		case 2:
			*p = append(*p, port{"", parts[0], parts[1]})
		case 3:
			*p = append(*p, port{parts[0], parts[1], parts[2]})
		default:
			return fmt.Errorf("port %q", item.Value)
		}
	}
	return nil
}

type mount struct {
	source, target string
	readOnly, bind bool
}

type mounts []mount

func (m *mounts) UnmarshalYAML(n *yaml.Node) error {
	for _, item := range n.Content {
		if item.Kind == yaml.MappingNode {
			var long struct {
				Type     string `yaml:"type"`
				Source   string `yaml:"source"`
				Target   string `yaml:"target"`
				ReadOnly bool   `yaml:"read_only"`
			}
			if err := item.Decode(&long); err != nil {
				return err
			}
			*m = append(*m, mount{long.Source, long.Target, long.ReadOnly, long.Type == "bind"})
			continue
		}
		parts := strings.Split(item.Value, ":")
		mt := mount{target: parts[0]}
		if len(parts) >= 2 {
			mt.source, mt.target = parts[0], parts[1]
		}
		if len(parts) == 3 {
			mt.readOnly = slices.Contains(strings.Split(parts[2], ","), "ro")
		}
		mt.bind = strings.HasPrefix(mt.source, ".") || strings.HasPrefix(mt.source, "/")
		*m = append(*m, mt)
	}
	return nil
}

type service struct {
	Image       string    `yaml:"image"`
	Build       any       `yaml:"build"`
	Hostname    string    `yaml:"hostname"`
	Command     list      `yaml:"command"`
	Entrypoint  list      `yaml:"entrypoint"`
	Environment env       `yaml:"environment"`
	Ports       ports     `yaml:"ports"`
	Volumes     mounts    `yaml:"volumes"`
	DependsOn   dependsOn `yaml:"depends_on"`
	Restart     string    `yaml:"restart"`
	Healthcheck *struct {
		Test list `yaml:"test"`
	} `yaml:"healthcheck"`
}

type compose struct {
	Name     string             `yaml:"name"`
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
}

func loadCompose(t *testing.T) compose {
	t.Helper()
	data, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	if len(c.Services) == 0 {
		t.Fatalf("%s: no services", composeFile)
	}
	return c
}

func (c compose) service(t *testing.T, name string) service {
	t.Helper()
	s, ok := c.Services[name]
	if !ok {
		t.Fatalf("%s has no service %q", composeFile, name)
	}
	return s
}

// hostFile maps a path inside a service's container to the repository
// file bind-mounted there ("" if none).
func (s service) hostFile(containerPath string) string {
	best := mount{}
	for _, m := range s.Volumes {
		if !m.bind {
			continue
		}
		if containerPath == m.target || strings.HasPrefix(containerPath, strings.TrimSuffix(m.target, "/")+"/") {
			if len(m.target) > len(best.target) {
				best = m
			}
		}
	}
	if best.target == "" {
		return ""
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(containerPath, best.target), "/")
	return filepath.Join(root, best.source, rel)
}

// splitHostPort reads host:port, with an optional scheme://.
func splitHostPort(t *testing.T, what, s string) (string, string) {
	t.Helper()
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	s, _, _ = strings.Cut(s, "/")
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		t.Fatalf("%s: %q: %v", what, s, err)
	}
	return h, p
}

// ---------------------------------------------------------------- images, ports, graph

var digestRE = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)

// imageTag returns the tag of an image reference ("" if none).
func imageTag(ref string) string {
	ref = digestRE.ReplaceAllString(ref, "")
	last := ref[strings.LastIndex(ref, "/")+1:]
	if _, tag, ok := strings.Cut(last, ":"); ok {
		return tag
	}
	return ""
}

func TestImageTag(t *testing.T) {
	for ref, want := range map[string]string{
		"postgres:16.4": "16.4", "quay.io/debezium/connect:3.1.3.Final": "3.1.3.Final", "localhost:5000/x": "",
		"localhost:5000/x:1": "1", "minio/minio": "", "x:latest": "latest",
		"x:1@sha256:" + strings.Repeat("a", 64): "1",
	} {
		if got := imageTag(ref); got != want {
			t.Errorf("imageTag(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestImagesPinned(t *testing.T) {
	c := loadCompose(t)
	for name, s := range c.Services {
		if s.Build != nil {
			if s.Image != "" && (imageTag(s.Image) == "" || imageTag(s.Image) == "latest") {
				t.Errorf("service %s: built image is tagged %q; give it a tag other than latest", name, s.Image)
			}
			continue
		}
		if s.Image == "" {
			t.Errorf("service %s has neither image nor build", name)
			continue
		}
		if strings.Contains(s.Image, "${") {
			t.Errorf("service %s: image %q depends on the environment; pin it in the file", name, s.Image)
		}
		if tag := imageTag(s.Image); (tag == "" || tag == "latest") && !digestRE.MatchString(s.Image) {
			t.Errorf("service %s: image %q is not pinned to a version tag", name, s.Image)
		}
	}
}

// Published ports are unique and bound to the loopback interface only:
// the stack has default passwords and no TLS, so it must not be reachable
// from the network.
func TestPortsUnique(t *testing.T) {
	c := loadCompose(t)
	seen := map[string]string{}
	for name, s := range c.Services {
		for _, p := range s.Ports {
			if p.published == "" {
				continue
			}
			if p.hostIP != "127.0.0.1" {
				t.Errorf("service %s: port %s is published on %q, not 127.0.0.1", name, p.published, p.hostIP)
			}
			if _, err := strconv.Atoi(p.published); err != nil {
				t.Errorf("service %s: published port %q is not a number", name, p.published)
			}
			key := p.hostIP + ":" + p.published
			if other, dup := seen[key]; dup {
				t.Errorf("host port %s is published by %s and %s", key, other, name)
			}
			seen[key] = name
		}
	}
}

// depends_on names existing services with valid conditions; a
// service_healthy dependency has a health check; a
// service_completed_successfully dependency is a one-shot; no cycles.
func TestDependencies(t *testing.T) {
	c := loadCompose(t)
	for name, s := range c.Services {
		for dep, cond := range s.DependsOn {
			d, ok := c.Services[dep]
			if !ok {
				t.Errorf("service %s depends on %q, which does not exist", name, dep)
				continue
			}
			switch cond {
			case "service_started":
			case "service_healthy":
				if d.Healthcheck == nil || len(d.Healthcheck.Test) == 0 {
					t.Errorf("service %s waits for %s to be healthy, which has no healthcheck", name, dep)
				}
			case "service_completed_successfully":
				if d.Restart == "always" || d.Restart == "unless-stopped" {
					t.Errorf("service %s waits for %s to complete, which restarts %s", name, dep, d.Restart)
				}
			default:
				t.Errorf("service %s: depends_on %s: condition %q", name, dep, cond)
			}
		}
	}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(string, []string)
	visit = func(n string, stack []string) {
		switch state[n] {
		case 1:
			t.Errorf("dependency cycle: %s", strings.Join(append(stack, n), " → "))
			return
		case 2:
			return
		}
		state[n] = 1
		for dep := range c.Services[n].DependsOn {
			if _, ok := c.Services[dep]; ok {
				visit(dep, append(stack, n))
			}
		}
		state[n] = 2
	}
	for n := range c.Services {
		visit(n, nil)
	}
}

// Bind mounts point at files of the repository; named volumes are declared.
func TestMounts(t *testing.T) {
	c := loadCompose(t)
	for name, s := range c.Services {
		for _, m := range s.Volumes {
			switch {
			case m.bind:
				if !strings.HasPrefix(m.source, "./") {
					t.Errorf("service %s: bind mount %s is not relative to the repository", name, m.source)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, m.source)); err != nil {
					t.Errorf("service %s: %v", name, err)
				}
			case m.source != "":
				if _, ok := c.Volumes[m.source]; !ok {
					t.Errorf("service %s: volume %s is not declared under volumes:", name, m.source)
				}
			}
		}
		// Scripts the container runs are mounted files.
		for _, arg := range append(slices.Clone(s.Entrypoint), s.Command...) {
			if strings.HasPrefix(arg, "/") && strings.HasSuffix(arg, ".sh") {
				f := s.hostFile(arg)
				if f == "" {
					t.Errorf("service %s runs %s, which is not mounted", name, arg)
				} else if _, err := os.Stat(f); err != nil {
					t.Errorf("service %s runs %s: %v", name, arg, err)
				}
			}
		}
	}
}

// Services reached by host name listen where their clients look.
func TestServiceAddresses(t *testing.T) {
	c := loadCompose(t)
	worker := c.service(t, "worker")
	check := func(what, addr string, wantService, wantPort string) {
		t.Helper()
		h, p := splitHostPort(t, what, addr)
		if h != wantService || p != wantPort {
			t.Errorf("%s = %q, want %s:%s", what, addr, wantService, wantPort)
		}
		if _, ok := c.Services[h]; !ok {
			t.Errorf("%s: no service %q", what, h)
		}
	}
	check("worker TEMPORAL_ADDRESS", worker.Environment["TEMPORAL_ADDRESS"], "temporal", "7233")
	check("temporal-ui TEMPORAL_ADDRESS", c.service(t, "temporal-ui").Environment["TEMPORAL_ADDRESS"], "temporal", "7233")
	check("temporal-init TEMPORAL_ADDRESS", c.service(t, "temporal-init").Environment["TEMPORAL_ADDRESS"], "temporal", "7233")
	check("worker CATALOG_URI", worker.Environment["CATALOG_URI"], "iceberg-rest", "8181")
	for _, b := range strings.Split(worker.Environment["KAFKA_BROKERS"], ",") {
		check("worker KAFKA_BROKERS", b, "kafka", "9092")
	}
	check("connect BOOTSTRAP_SERVERS", c.service(t, "connect").Environment["BOOTSTRAP_SERVERS"], "kafka", "9092")

	// Kafka advertises kafka:9092 to the containers.
	kafka := c.service(t, "kafka")
	if !strings.Contains(kafka.Environment["KAFKA_ADVERTISED_LISTENERS"], "://kafka:9092") {
		t.Errorf("kafka advertises %q; containers connect to kafka:9092", kafka.Environment["KAFKA_ADVERTISED_LISTENERS"])
	}
	if !strings.Contains(kafka.Environment["KAFKA_PROCESS_ROLES"], "controller") {
		t.Errorf("kafka is not in KRaft mode (KAFKA_PROCESS_ROLES %q)", kafka.Environment["KAFKA_PROCESS_ROLES"])
	}

	// Temporal's own PostgreSQL and dynamic config.
	temporal := c.service(t, "temporal")
	if _, ok := c.Services[temporal.Environment["POSTGRES_SEEDS"]]; !ok {
		t.Errorf("temporal POSTGRES_SEEDS %q is not a service", temporal.Environment["POSTGRES_SEEDS"])
	}
	if dc := temporal.Environment["DYNAMIC_CONFIG_FILE_PATH"]; dc != "" {
		f := temporal.hostFile(path.Join("/etc/temporal", dc))
		if _, err := os.Stat(f); f == "" || err != nil {
			t.Errorf("temporal DYNAMIC_CONFIG_FILE_PATH %s is not a mounted file (%v)", dc, err)
		}
	}
}
