//go:build e2e

package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The worker's and the starter's command lines parse: the real binaries
// are built and run with the service's arguments plus --help, so an
// unknown or misspelt flag fails here instead of in a container.
func TestCommandLines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker and starter binaries")
	}
	c := loadCompose(t)
	st := loadSource(t, c)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(os.PathSeparator), "./worker", "./starter")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
		for k, v := range c.service(t, name).Environment {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	worker := c.service(t, "worker")
	run("worker", append(slices.Clone(worker.Command), "-h")...)
	run("starter", append(slices.Clone(st.startArgs), "--help")...)
	if st.statusArgs != nil {
		run("starter", append(slices.Clone(st.statusArgs), "--help")...)
	}
}
