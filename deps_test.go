package respire

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCoreDependencies: the client package pulls in only the OpenTelemetry
// metric API, never the global otel package, tracing, the SDK or logr, so
// a program that only connects and GETs stays small.
func TestCoreDependencies(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "go.opentelemetry.io/otel",
			strings.HasPrefix(dep, "go.opentelemetry.io/otel/trace"),
			strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk"),
			strings.HasPrefix(dep, "go.opentelemetry.io/otel/internal/global"),
			strings.Contains(dep, "go-logr"):
			t.Errorf("the client depends on %s", dep)
		}
	}
}
