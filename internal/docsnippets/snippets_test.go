package docsnippets

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// snippet is one ```go block of a document.
type snippet struct {
	file string // absolute
	line int    // line of the block's first code line
	body string
}

// prelude is what a snippet may use without declaring it: the names the
// documents use for a context, a client and a failover group, and a
// function library's source. Each becomes a parameter of the function that
// wraps a snippet, unless the snippet declares the name itself.
var prelude = []struct{ name, typ string }{
	{"ctx", "context.Context"},
	{"client", "*respire.Client"},
	{"c", "*respire.Client"},
	{"g", "*respire.FailoverGroup"},
	{"group", "*respire.FailoverGroup"},
	{"libSource", "string"},
}

// imports are the packages a snippet may use without importing them; the
// wrapper refers to each once so that an unused one is no error.
var imports = []struct{ path, use string }{
	{"context", "context.Background"},
	{"errors", "errors.Is"},
	{"fmt", "fmt.Println"},
	{"log", "log.Fatal"},
	{"time", "time.Second"},
	{"github.com/respire-go/respire", "respire.Connect"},
	{"github.com/respire-go/respire/catalog", "catalog.New"},
}

// declared matches a variable declared at a snippet's top level, with :=
// or var; the wrapper uses each once, as a reader's program would.
var (
	shortDecl = regexp.MustCompile(`(?m)^([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*:=`)
	varDecl   = regexp.MustCompile(`(?m)^var\s+([A-Za-z_]\w*)`)
)

// TestDocSnippetsCompile: every ```go block of README.md and docs/*.md
// compiles, and passes go vet, against the current API. Each block is the
// body of a function that receives the prelude's names it does not declare
// and may use the imports' packages; it is vetted in a temporary module
// of a Go workspace with this repository. The workspace's module graph
// may need go.mod files that building this repository does not (those of
// dependencies' own older requirements): the go command fetches them
// through GOPROXY when the module cache lacks them, checked against this
// repository's go.sum. A failure names the document's file and line.
func TestDocSnippetsCompile(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippets := extract(t, filepath.Join(root, "README.md"))
	if len(snippets) == 0 {
		t.Fatal("found no go block in README.md (its quick start is one): is the extraction broken?")
	}
	for _, path := range docs {
		snippets = append(snippets, extract(t, path)...)
	}

	dir := t.TempDir()
	goVersion := goDirective(t, filepath.Join(root, "go.mod"))
	write(t, filepath.Join(dir, "go.mod"), "module docsnippets\n\ngo "+goVersion+"\n")
	write(t, filepath.Join(dir, "go.work"), fmt.Sprintf("go %s\n\nuse (\n\t%q\n\t.\n)\n", goVersion, root))
	for i, s := range snippets {
		write(t, filepath.Join(dir, fmt.Sprintf("s%02d", i), "main.go"), wrap(s))
	}

	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GOWORK="+filepath.Join(dir, "go.work"),
		"GOFLAGS=", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("a documented Go snippet does not compile or vet (%v; a snippet may use ctx, client, c, g, group and libSource undeclared, see prelude):\n%s", err, out)
	}
}

// extract returns the ```go blocks of the document at path.
func extract(t *testing.T, path string) []snippet {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out  []snippet
		cur  *snippet
		body strings.Builder
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &snippet{file: path, line: n + 1}
			body.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.body = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: a go block is not closed", path, cur.line)
	}
	return out
}

// wrap makes a snippet a program: a //line directive maps its lines back
// to the document.
func wrap(s snippet) string {
	declared := map[string]bool{}
	for _, m := range shortDecl.FindAllStringSubmatch(s.body, -1) {
		for _, name := range strings.Split(m[1], ",") {
			declared[strings.TrimSpace(name)] = true
		}
	}
	for _, m := range varDecl.FindAllStringSubmatch(s.body, -1) {
		declared[m[1]] = true
	}
	delete(declared, "_")

	var b strings.Builder
	b.WriteString("package main\n\nimport (\n")
	for _, imp := range imports {
		fmt.Fprintf(&b, "\t%q\n", imp.path)
	}
	b.WriteString(")\n\n")
	for _, imp := range imports {
		fmt.Fprintf(&b, "var _ = %s\n", imp.use)
	}
	var params []string
	for _, p := range prelude {
		if !declared[p.name] {
			params = append(params, p.name+" "+p.typ)
		}
	}
	fmt.Fprintf(&b, "\nfunc main() {}\n\nfunc snippet(%s) error {\n", strings.Join(params, ", "))
	fmt.Fprintf(&b, "//line %s:%d\n%s", s.file, s.line, s.body)
	b.WriteString("//line docsnippets-wrapper.go:1\n")
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		fmt.Fprintf(&b, "\t_ = %s\n", name)
	}
	b.WriteString("\treturn nil\n}\n")
	return b.String()
}

// goDirective returns the go version the module at path declares.
func goDirective(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go\s+(\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s has no go directive", path)
	}
	return string(m[1])
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
