package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFileIsCurrent: commands_gen.go is what go generate writes
// from the package's cmdX definitions today.
func TestGeneratedFileIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	want, err := generate(root, "commands_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "commands_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("commands_gen.go is stale: run go generate in the repository root")
	}
}

// TestDefinitionRules: a definition's doc must document the public
// method, and one must not be defined twice.
func TestDefinitionRules(t *testing.T) {
	for _, tt := range []struct{ name, src, wantErr string }{
		{"doc for the builder", "// cmdFoo does.\nfunc (c *Client) cmdFoo(k string) cmd[int64] { return cmd[int64]{} }\n", `must start with "Foo "`},
		{"no doc", "func (c *Client) cmdFoo(k string) cmd[int64] { return cmd[int64]{} }\n", `must start with "Foo "`},
		{"two results", "// Foo x.\nfunc (c *Client) cmdFoo(k string) (cmd[int64], error) { return cmd[int64]{}, nil }\n", "returns one cmd[T]"},
		{"unnamed parameter", "// Foo x.\nfunc (c *Client) cmdFoo(string) cmd[int64] { return cmd[int64]{} }\n", "every parameter needs a name"},
		{"twice", "// Foo x.\nfunc (c *Client) cmdFoo(k string) cmd[int64] { return cmd[int64]{} }\n// Foo y.\nfunc (c *Client) cmdFoo2(k string) cmd[int64] { return cmd[int64]{} }\n// Foo z.\nfunc (c *Client) cmdFoo(k string) cmd[int64] { return cmd[int64]{} }\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package respire\n\n"+tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := generate(dir, "out.go")
			if tt.wantErr == "" {
				if err == nil {
					t.Fatal("generate = nil, want an error")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("generate = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestRender: a variadic definition spreads its last argument, a manual
// one gets only its Batch member.
func TestRender(t *testing.T) {
	dir := t.TempDir()
	src := "package respire\n\n// Foo counts.\nfunc (c *Client) cmdFoo(key string, vs ...string) cmd[int64] { return cmd[int64]{} }\n\n" +
		"// Bar is split by hand.\n//\n// respire:client manual\nfunc (c *Client) cmdBar(keys []string) cmd[int64] { return cmd[int64]{} }\n"
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := generate(dir, "out.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"func (c *Client) Foo(ctx context.Context, key string, vs ...string) (int64, error) {\n\treturn call(ctx, c, c.cmdFoo(key, vs...))",
		"func (b *Batch) Foo(key string, vs ...string) Future[int64] {\n\treturn enqueue(b, b.client().cmdFoo(key, vs...))",
		"func (b *Batch) Bar(keys []string) Future[int64] {",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("generated file lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "func (c *Client) Bar") || strings.Contains(string(out), "respire:client") {
		t.Errorf("a manual definition got a Client method or its directive leaked:\n%s", out)
	}
}

// TestRenderImports: a signature naming another package (time.Duration)
// imports it in the generated file.
func TestRenderImports(t *testing.T) {
	dir := t.TempDir()
	src := "package respire\n\nimport \"time\"\n\n// Foo waits.\nfunc (c *Client) cmdFoo(key string, d time.Duration) cmd[[]time.Duration] { return cmd[[]time.Duration]{} }\n"
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := generate(dir, "out.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "import (\n\t\"context\"\n\t\"time\"\n)") {
		t.Errorf("generated file does not import time:\n%s", out)
	}
}
