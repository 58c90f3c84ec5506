package deploy

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	iceio "github.com/apache/iceberg-go/io"
	"gopkg.in/yaml.v3"

	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/worker/runner"
)

// ---------------------------------------------------------------- worker environment

// envNamesFromSource returns the environment variables the given Go
// packages read: string constants passed to os.LookupEnv/os.Getenv or to
// the flag-default helpers env/envOr, directly or through a constant.
func envNamesFromSource(t *testing.T, dirs ...string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	consts := map[string]string{}
	var files []*ast.File
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								consts[n.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			}
		}
	}
	names := map[string]bool{}
	readers := map[string]bool{"LookupEnv": true, "Getenv": true, "env": true, "envOr": true}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			var fn string
			switch x := call.Fun.(type) {
			case *ast.Ident:
				fn = x.Name
			case *ast.SelectorExpr:
				fn = x.Sel.Name
			}
			if !readers[fn] {
				return true
			}
			switch a := call.Args[0].(type) {
			case *ast.BasicLit:
				if v, err := strconv.Unquote(a.Value); err == nil {
					names[v] = true
				}
			case *ast.Ident:
				if v, ok := consts[a.Name]; ok {
					names[v] = true
				}
			case *ast.SelectorExpr: // config.EnvX from another package
				if v, ok := consts[a.Sel.Name]; ok {
					names[v] = true
				}
			}
			return true
		})
	}
	return names
}

// Every variable the worker and starter services set is one the binaries
// read (internal/config's flag defaults, the worker command's METRICS_ADDR
// in worker/internal/workercmd);
// the worker points at the REST catalog on MinIO with the s3.* FileIO
// properties iceberg-go reads, with the credentials MinIO and the catalog
// use, in the bucket minio-init creates.
func TestWorkerEnvironment(t *testing.T) {
	accepted := envNamesFromSource(t, "internal/config", "worker", "worker/internal/workercmd")
	for _, n := range []string{config.EnvTemporalAddress, config.EnvNamespace, config.EnvKafkaBrokers, config.EnvCatalogType,
		config.EnvCatalogURI, config.EnvWarehouse, config.EnvCatalogProps, config.EnvDataDir} {
		if !accepted[n] {
			t.Fatalf("the source scan missed %s (found %v); fix envNamesFromSource", n, accepted)
		}
	}
	if !accepted["METRICS_ADDR"] {
		t.Fatalf("the worker command (worker/internal/workercmd) no longer reads METRICS_ADDR (found %v)", accepted)
	}
	c := loadCompose(t)
	starterAccepted := envNamesFromSource(t, "internal/config", "starter")
	for svc, ok := range map[string]map[string]bool{"worker": accepted, "starter": starterAccepted} {
		for k := range c.service(t, svc).Environment {
			if !ok[k] {
				var names []string
				for n := range ok {
					names = append(names, n)
				}
				sort.Strings(names)
				t.Errorf("service %s sets %s, which the %s does not read (it reads %v)", svc, k, svc, names)
			}
		}
	}

	w := c.service(t, "worker").Environment
	if w[config.EnvCatalogType] != "rest" {
		t.Errorf("worker %s = %q, want rest", config.EnvCatalogType, w[config.EnvCatalogType])
	}
	props, err := config.ParseProps(config.EnvCatalogProps, w[config.EnvCatalogProps])
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{iceio.S3EndpointURL, iceio.S3Region, iceio.S3AccessKeyID, iceio.S3SecretAccessKey} {
		if props[k] == "" {
			t.Errorf("worker %s lacks %s", config.EnvCatalogProps, k)
		}
	}
	for k := range props {
		if !strings.HasPrefix(k, "s3.") && !strings.HasPrefix(k, "client.") {
			t.Errorf("worker %s: unexpected property %s", config.EnvCatalogProps, k)
		}
	}
	h, p := splitHostPort(t, "s3.endpoint", props[iceio.S3EndpointURL])
	minio := c.service(t, h)
	if p != "9000" || !slices.Contains(minio.Command, "server") {
		t.Errorf("s3.endpoint %s is not the MinIO API (service %s, port 9000)", props[iceio.S3EndpointURL], h)
	}
	if props[iceio.S3AccessKeyID] != minio.Environment["MINIO_ROOT_USER"] || props[iceio.S3SecretAccessKey] != minio.Environment["MINIO_ROOT_PASSWORD"] {
		t.Errorf("worker S3 credentials do not match MinIO's root user")
	}
	rest := c.service(t, "iceberg-rest").Environment
	if rest["AWS_ACCESS_KEY_ID"] != props[iceio.S3AccessKeyID] || rest["AWS_SECRET_ACCESS_KEY"] != props[iceio.S3SecretAccessKey] {
		t.Errorf("the REST catalog's AWS credentials differ from the worker's")
	}
	if eh, _ := splitHostPort(t, "CATALOG_S3_ENDPOINT", rest["CATALOG_S3_ENDPOINT"]); eh != h {
		t.Errorf("the REST catalog writes to %s, the worker to %s", rest["CATALOG_S3_ENDPOINT"], props[iceio.S3EndpointURL])
	}
	bucket := func(what, uri string) string {
		b, ok := strings.CutPrefix(uri, "s3://")
		if !ok {
			t.Errorf("%s = %q is not an s3:// location", what, uri)
		}
		b, _, _ = strings.Cut(b, "/")
		return b
	}
	wb := bucket("worker WAREHOUSE", w[config.EnvWarehouse])
	if rb := bucket("iceberg-rest CATALOG_WAREHOUSE", rest["CATALOG_WAREHOUSE"]); rb != wb {
		t.Errorf("warehouse buckets differ: worker %s, catalog %s", wb, rb)
	}
	mc := strings.Join(c.service(t, "minio-init").Command, " ")
	if !regexp.MustCompile(`mc mb [^&;|]*\b[a-z0-9-]+/` + regexp.QuoteMeta(wb) + `\b`).MatchString(mc) {
		t.Errorf("minio-init does not create bucket %s: %q", wb, mc)
	}
}

// ---------------------------------------------------------------- metrics, Prometheus, Grafana

// flagOrEnv returns a service's value for a flag (in its command) or
// environment variable.
func flagOrEnv(s service, flag, envName string) string {
	for i, a := range s.Command {
		if (a == "-"+flag || a == "--"+flag) && i+1 < len(s.Command) {
			return s.Command[i+1]
		}
		if v, ok := strings.CutPrefix(a, "-"+flag+"="); ok {
			return v
		}
		if v, ok := strings.CutPrefix(a, "--"+flag+"="); ok {
			return v
		}
	}
	return s.Environment[envName]
}

// The worker's metrics listener is reachable from other containers and is
// what Prometheus scrapes; Prometheus loads dashboards/ from its mount.
func TestMetricsScrape(t *testing.T) {
	c := loadCompose(t)
	worker := c.service(t, "worker")
	addr := flagOrEnv(worker, "metrics-addr", "METRICS_ADDR")
	if addr == "" {
		t.Fatal("the worker service sets no METRICS_ADDR; the image default is not visible here, set it explicitly")
	}
	host, port := splitHostPort(t, "METRICS_ADDR", addr)
	if host != "0.0.0.0" && host != "" && host != "::" {
		t.Errorf("worker METRICS_ADDR %s listens on %s only; Prometheus in another container cannot reach it", addr, host)
	}

	prom := c.service(t, "prometheus")
	var cfgPath string
	for _, a := range prom.Command {
		if v, ok := strings.CutPrefix(a, "--config.file="); ok {
			cfgPath = v
		}
	}
	if cfgPath == "" {
		t.Fatal("prometheus: no --config.file")
	}
	hostCfg := prom.hostFile(cfgPath)
	if hostCfg == "" || !strings.HasPrefix(filepath.Clean(hostCfg), filepath.Clean(filepath.Join(root, "dashboards"))) {
		t.Fatalf("prometheus --config.file %s is not the mounted dashboards/prometheus.yml (%q)", cfgPath, hostCfg)
	}
	var pc struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	data, err := os.ReadFile(hostCfg)
	if err == nil {
		err = yaml.Unmarshal(data, &pc)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, rf := range pc.RuleFiles {
		if _, err := os.Stat(filepath.Join(filepath.Dir(hostCfg), rf)); err != nil {
			t.Errorf("prometheus rule file: %v", err)
		}
	}
	scraped := false
	for _, sc := range pc.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, tg := range st.Targets {
				h, p := splitHostPort(t, "scrape target", tg)
				if h == "worker" {
					scraped = true
					if p != port {
						t.Errorf("prometheus job %s scrapes %s, the worker listens on port %s", sc.JobName, tg, port)
					}
				}
			}
		}
	}
	if !scraped {
		t.Errorf("prometheus.yml scrapes no target on the worker service")
	}
}

// Grafana mounts the provisioning files and the dashboards directory,
// the provider reads where the dashboards are mounted, the datasource is
// the Prometheus service.
func TestGrafanaProvisioning(t *testing.T) {
	c := loadCompose(t)
	g := c.service(t, "grafana")
	prov := g.hostFile("/etc/grafana/provisioning")
	if filepath.Clean(prov) != filepath.Join(root, "dashboards", "grafana") {
		t.Fatalf("grafana: /etc/grafana/provisioning is %q, want ./dashboards/grafana", prov)
	}
	var ds struct {
		Datasources []struct {
			Type, URL string
			UID       string `yaml:"uid"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(prov, "datasources", "prometheus.yaml"), &ds)
	if len(ds.Datasources) == 0 || ds.Datasources[0].Type != "prometheus" {
		t.Fatalf("datasource provisioning: %+v", ds)
	}
	h, p := splitHostPort(t, "datasource url", ds.Datasources[0].URL)
	if _, ok := c.Services[h]; !ok || h != "prometheus" || p != "9090" {
		t.Errorf("datasource url %s is not the prometheus service", ds.Datasources[0].URL)
	}

	var dp struct {
		Providers []struct {
			Type    string
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, filepath.Join(prov, "dashboards", "lakemirror.yaml"), &dp)
	if len(dp.Providers) == 0 || dp.Providers[0].Type != "file" {
		t.Fatalf("dashboard provider: %+v", dp)
	}
	dir := g.hostFile(dp.Providers[0].Options.Path)
	if filepath.Clean(dir) != filepath.Join(root, "dashboards") {
		t.Fatalf("the dashboard provider reads %s, which is %q, not ./dashboards", dp.Providers[0].Options.Path, dir)
	}
	jsons, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(jsons) == 0 {
		t.Fatalf("no dashboard JSON in %s", dir)
	}
	for _, f := range jsons {
		var d map[string]any
		data, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(data, &d)
		}
		if err != nil || d["uid"] == nil {
			t.Errorf("%s: %v (uid %v)", f, err, d["uid"])
		}
	}
	if home := g.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home != "" {
		if f := g.hostFile(home); f == "" {
			t.Errorf("grafana home dashboard %s is not mounted", home)
		} else if _, err := os.Stat(f); err != nil {
			t.Errorf("grafana home dashboard: %v", err)
		}
	}
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err == nil {
		err = yaml.Unmarshal(data, v)
	}
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// ---------------------------------------------------------------- source, connector, workload, starter

type sourceStack struct {
	connector   map[string]string
	table       string // schema.table the connector captures
	topic       string // topic.prefix.schema.table
	startArgs   []string
	statusArgs  []string
	startTopic  string
	startTable  string
	startKey    []string
	primaryKeys []string
}

var (
	createTableRE = regexp.MustCompile(`(?is)CREATE TABLE\s+([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\s*\((.*?)\n\);`)
	pkColumnRE    = regexp.MustCompile(`(?im)^\s*([a-z_][a-z0-9_]*)\s+[a-z0-9_(),]+[^,\n]*\bPRIMARY KEY\b`)
	workloadRE    = regexp.MustCompile(`(?i)\b(?:INSERT INTO|UPDATE|DELETE FROM)\s+([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)`)
)

func loadSource(t *testing.T, c compose) sourceStack {
	t.Helper()
	var st sourceStack
	reg := c.service(t, "connect-register")
	cfgFile := reg.hostFile(reg.Environment["CONNECTOR_CONFIG"])
	if cfgFile == "" {
		t.Fatalf("connect-register: CONNECTOR_CONFIG %q is not a mounted file", reg.Environment["CONNECTOR_CONFIG"])
	}
	data, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &st.connector); err != nil {
		t.Fatalf("%s: %v (a flat object of string config values, for PUT /connectors/NAME/config)", cfgFile, err)
	}
	if name := strings.TrimSuffix(filepath.Base(cfgFile), ".json"); st.connector["name"] != name {
		t.Errorf("%s: name %q, want %q (register.sh names the connector after the file)", cfgFile, st.connector["name"], name)
	}
	tables := strings.Split(st.connector["table.include.list"], ",")
	if len(tables) != 1 {
		t.Fatalf("connector table.include.list %q: the stack captures one table", st.connector["table.include.list"])
	}
	st.table = strings.TrimSpace(tables[0])
	st.topic = st.connector["topic.prefix"] + "." + st.table

	starter := c.service(t, "starter")
	script := strings.Join(append(slices.Clone(starter.Entrypoint), starter.Command...), " ")
	for _, seg := range regexp.MustCompile(`\|\||&&|;`).Split(script, -1) {
		f := strings.Fields(seg)
		if i := slices.Index(f, "starter"); i >= 0 && i+1 < len(f) {
			switch f[i+1] {
			case "start":
				st.startArgs = f[i+1:]
			case "status":
				st.statusArgs = f[i+1:]
			}
		}
	}
	if len(st.startArgs) < 2 {
		t.Fatalf("the starter service does not run `starter start TOPIC ...`: %q", script)
	}
	st.startTopic = st.startArgs[1]
	for i, a := range st.startArgs {
		if i+1 < len(st.startArgs) {
			switch a {
			case "--table":
				st.startTable = st.startArgs[i+1]
			case "--key":
				st.startKey = strings.Split(st.startArgs[i+1], ",")
			}
		}
	}
	return st
}

// The connector captures the workload's table in the source database
// (logical decoding on), the starter starts that topic with the table's
// primary key.
func TestSourceConnectorStarterAgree(t *testing.T) {
	c := loadCompose(t)
	st := loadSource(t, c)
	cn := st.connector

	if cn["connector.class"] != "io.debezium.connector.postgresql.PostgresConnector" {
		t.Errorf("connector.class %q", cn["connector.class"])
	}
	pg, ok := c.Services[cn["database.hostname"]]
	if !ok {
		t.Fatalf("connector database.hostname %q is not a service", cn["database.hostname"])
	}
	if cn["database.port"] != "5432" || cn["database.dbname"] != pg.Environment["POSTGRES_DB"] ||
		cn["database.user"] != pg.Environment["POSTGRES_USER"] || cn["database.password"] != pg.Environment["POSTGRES_PASSWORD"] {
		t.Errorf("connector database settings %s:%s/%s as %s do not match the %s service (db %s, user %s)", cn["database.hostname"],
			cn["database.port"], cn["database.dbname"], cn["database.user"], cn["database.hostname"], pg.Environment["POSTGRES_DB"], pg.Environment["POSTGRES_USER"])
	}
	if !slices.Contains(pg.Command, "wal_level=logical") {
		t.Errorf("the source PostgreSQL does not run with wal_level=logical: %q", pg.Command)
	}
	if cn["plugin.name"] != "pgoutput" {
		t.Errorf("plugin.name %q: pgoutput is built into PostgreSQL; others need extensions", cn["plugin.name"])
	}
	for _, k := range []string{"key.converter.schemas.enable", "value.converter.schemas.enable"} {
		if cn[k] != "true" {
			t.Errorf("connector %s = %q; the schema envelope gives lakemirror the column types", k, cn[k])
		}
	}

	// The schema the database is initialised with creates the table.
	var initSQL string
	for _, m := range pg.Volumes {
		if m.bind && strings.HasPrefix(m.target, "/docker-entrypoint-initdb.d/") {
			data, err := os.ReadFile(filepath.Join(root, m.source))
			if err != nil {
				t.Fatal(err)
			}
			initSQL += string(data)
		}
	}
	found := false
	for _, m := range createTableRE.FindAllStringSubmatch(initSQL, -1) {
		if m[1]+"."+m[2] == st.table {
			found = true
			for _, pk := range pkColumnRE.FindAllStringSubmatch(m[3], -1) {
				st.primaryKeys = append(st.primaryKeys, pk[1])
			}
		}
	}
	if !found {
		t.Errorf("the init scripts of %s do not create %s", cn["database.hostname"], st.table)
	}

	// The workload writes that table in that database.
	wl := c.service(t, "workload")
	if wl.Environment["PGHOST"] != cn["database.hostname"] || wl.Environment["PGDATABASE"] != cn["database.dbname"] {
		t.Errorf("workload writes to %s/%s, the connector reads %s/%s", wl.Environment["PGHOST"], wl.Environment["PGDATABASE"],
			cn["database.hostname"], cn["database.dbname"])
	}
	var script string
	for _, a := range append(slices.Clone(wl.Entrypoint), wl.Command...) {
		if strings.HasSuffix(a, ".sh") {
			data, err := os.ReadFile(wl.hostFile(a))
			if err != nil {
				t.Fatal(err)
			}
			script = string(data)
		}
	}
	ops := map[string]bool{}
	for _, m := range workloadRE.FindAllStringSubmatch(script, -1) {
		if m[1] != st.table {
			t.Errorf("the workload writes %s, which the connector does not capture", m[1])
		}
		ops[strings.Fields(strings.ToUpper(m[0]))[0]] = true
	}
	if len(ops) != 3 {
		t.Errorf("the workload should insert, update and delete rows of %s (found %v)", st.table, ops)
	}

	// The starter starts the connector's topic for that table's key.
	if st.startTopic != st.topic {
		t.Errorf("the starter starts topic %q; the connector writes %s to %q (topic.prefix + schema + table)", st.startTopic, st.table, st.topic)
	}
	if _, err := lake.ParseTableName(st.startTable); err != nil {
		t.Errorf("starter --table: %v", err)
	}
	if !slices.Equal(st.startKey, st.primaryKeys) {
		t.Errorf("starter --key %v, the primary key of %s is %v", st.startKey, st.table, st.primaryKeys)
	}
	if len(st.statusArgs) >= 2 && st.statusArgs[1] != st.startTable {
		t.Errorf("starter status %s, started %s", st.statusArgs[1], st.startTable)
	}
	if dep := c.service(t, "starter").DependsOn["connect-register"]; dep != "service_completed_successfully" {
		t.Errorf("the starter should wait for the connector registration (depends_on connect-register: %q)", dep)
	}
}

// The init container registers exactly the search attributes the
// workflows set (runner.SearchAttributes), with their types.
func TestSearchAttributesRegistered(t *testing.T) {
	c := loadCompose(t)
	init := c.service(t, "temporal-init")
	var script string
	for _, a := range append(slices.Clone(init.Entrypoint), init.Command...) {
		if strings.HasSuffix(a, ".sh") {
			data, err := os.ReadFile(init.hostFile(a))
			if err != nil {
				t.Fatal(err)
			}
			script = string(data)
		}
	}
	m := regexp.MustCompile(`for sa in ([^;\n]+);`).FindStringSubmatch(script)
	if m == nil {
		t.Fatalf("temporal-init script has no `for sa in name:type ...` list")
	}
	got := map[string]string{}
	for _, pair := range strings.Fields(m[1]) {
		n, typ, _ := strings.Cut(pair, ":")
		got[n] = typ
	}
	if !strings.Contains(script, "search-attribute create") {
		t.Errorf("the script does not run `temporal operator search-attribute create`")
	}
	want := map[string]string{}
	for n, typ := range runner.SearchAttributes {
		// INDEXED_VALUE_TYPE_KEYWORD → Keyword, KEYWORD_LIST → KeywordList
		var b strings.Builder
		for _, w := range strings.Split(strings.TrimPrefix(typ.String(), "INDEXED_VALUE_TYPE_"), "_") {
			b.WriteString(w[:1] + strings.ToLower(w[1:]))
		}
		want[n] = b.String()
	}
	if len(got) != len(want) {
		t.Errorf("registered %v, the workflows use %v", got, want)
	}
	for n, typ := range want {
		if got[n] != typ {
			t.Errorf("search attribute %s: registered as %q, want %q", n, got[n], typ)
		}
	}
	if init.Environment["TEMPORAL_NAMESPACE"] != c.service(t, "worker").Environment[config.EnvNamespace] {
		t.Errorf("search attributes are registered in namespace %q, the worker uses %q",
			init.Environment["TEMPORAL_NAMESPACE"], c.service(t, "worker").Environment[config.EnvNamespace])
	}
	if c.service(t, "worker").DependsOn["temporal-init"] != "service_completed_successfully" {
		t.Errorf("the worker must wait for temporal-init (the namespace and search attributes)")
	}
}

// ---------------------------------------------------------------- Dockerfile

// The image builds both binaries with the module's Go version from a
// context that keeps every package they need, and runs the worker.
func TestDockerfile(t *testing.T) {
	c := loadCompose(t)
	var dockerfile string
	for _, name := range []string{"worker", "starter"} {
		b, ok := c.service(t, name).Build.(map[string]any)
		if !ok || b["context"] != "." {
			t.Fatalf("service %s: build %v, want context . and a dockerfile", name, c.service(t, name).Build)
		}
		df, _ := b["dockerfile"].(string)
		if dockerfile != "" && df != dockerfile {
			t.Errorf("worker and starter build different Dockerfiles")
		}
		dockerfile = df
	}
	data, err := os.ReadFile(filepath.Join(root, dockerfile))
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)`).FindSubmatch(gomod)
	for _, m := range regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(df, -1) {
		if tag := imageTag(m[1]); tag == "" || tag == "latest" {
			t.Errorf("%s: FROM %s is not pinned", dockerfile, m[1])
		}
		if strings.HasPrefix(m[1], "golang:") && !strings.HasPrefix(imageTag(m[1]), string(goVersion[1])+"-") && imageTag(m[1]) != string(goVersion[1]) {
			t.Errorf("%s: FROM %s; go.mod requires go %s", dockerfile, m[1], goVersion[1])
		}
	}
	if !regexp.MustCompile(`go build .*\./worker`).MatchString(df) || !regexp.MustCompile(`go build .*\./starter`).MatchString(df) {
		t.Errorf("%s does not build ./worker and ./starter", dockerfile)
	}
	if !strings.Contains(df, `ENTRYPOINT ["worker"]`) {
		t.Errorf(`%s: want ENTRYPOINT ["worker"] (the starter service overrides it)`, dockerfile)
	}
	_, port := splitHostPort(t, "METRICS_ADDR", c.service(t, "worker").Environment["METRICS_ADDR"])
	if !regexp.MustCompile(`(?m)^EXPOSE\s+` + port + `\b`).MatchString(df) {
		t.Errorf("%s does not EXPOSE the metrics port %s", dockerfile, port)
	}

	// The ignore file keeps every package the binaries are built from.
	ignore, err := os.ReadFile(filepath.Join(root, dockerfile+".dockerignore"))
	if err != nil {
		t.Fatalf("%v (without it the build context is the whole repository, test binaries and .git included)", err)
	}
	if testing.Short() {
		return
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "../worker", "../starter").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	abs, _ := filepath.Abs(root)
	needed := []string{"go.mod", "go.sum"}
	for _, d := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(abs, d)
		needed = append(needed, filepath.ToSlash(rel))
	}
	for _, line := range strings.Split(string(ignore), "\n") {
		pat := strings.TrimSpace(line)
		if pat == "" || strings.HasPrefix(pat, "#") || strings.HasPrefix(pat, "!") {
			continue
		}
		for _, n := range needed {
			if ok, _ := filepath.Match(pat, n); ok || n == pat || strings.HasPrefix(n, strings.TrimSuffix(pat, "/")+"/") {
				t.Errorf("%s.dockerignore excludes %s, which the build needs", dockerfile, n)
			}
		}
	}
}
