// Command commands writes the typed command methods of package respire
// from their definitions: every method
//
//	func (c *Client) cmdX(params) cmd[T]
//
// in the package's non-test files defines command method X. The tool
// writes
//
//	func (c *Client) X(ctx context.Context, params) (T, error)
//	func (b *Batch) X(params) Future[T]
//
// the first with the definition's doc comment (which is written for X),
// the second pointing to it. A definition whose doc comment has a line
// "respire:client manual" gets only the Batch member: its Client method
// is written by hand (for example to split keys across Cluster slots).
//
// Run it with go generate in the repository root.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"
)

func main() {
	dir := flag.String("dir", ".", "the package directory")
	out := flag.String("out", "commands_gen.go", "the output file, in -dir")
	flag.Parse()
	src, err := generate(*dir, *out)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*dir, *out), src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// def is one command definition.
type def struct {
	name   string // the public method name
	doc    []string
	manual bool   // the Client method is hand-written
	params string // the parameter list, as written
	args   string // the call's arguments (variadic spread)
	result string // T
	file   string
	// imports are the import paths of the packages the signature names
	// (time, for a time.Duration parameter).
	imports []string
}

// generate parses dir (skipping tests and out) and returns the formatted
// generated file.
func generate(dir, out string) ([]byte, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var defs []def
	for _, name := range files {
		base := filepath.Base(name)
		if strings.HasSuffix(base, "_test.go") || base == out {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			df, ok, err := definition(fset, fd)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fset.Position(fd.Pos()), err)
			}
			if ok {
				if df.imports, err = signatureImports(f, fd); err != nil {
					return nil, fmt.Errorf("%s: %w", fset.Position(fd.Pos()), err)
				}
				df.file = base
				defs = append(defs, df)
			}
		}
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].name < defs[j].name })
	for i := 1; i < len(defs); i++ {
		if defs[i].name == defs[i-1].name {
			return nil, fmt.Errorf("command method %s defined twice", defs[i].name)
		}
	}
	return render(defs)
}

// definition reports whether fd is a command definition and describes it.
func definition(fset *token.FileSet, fd *ast.FuncDecl) (def, bool, error) {
	if fd.Recv == nil || len(fd.Recv.List) != 1 || !strings.HasPrefix(fd.Name.Name, "cmd") {
		return def{}, false, nil
	}
	rest := strings.TrimPrefix(fd.Name.Name, "cmd")
	if rest == "" || !unicode.IsUpper(rune(rest[0])) {
		return def{}, false, nil
	}
	if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); !ok || !isIdent(star.X, "Client") {
		return def{}, false, nil
	}
	res := fd.Type.Results
	if res == nil || len(res.List) != 1 {
		return def{}, false, fmt.Errorf("%s: a definition returns one cmd[T]", fd.Name.Name)
	}
	idx, ok := res.List[0].Type.(*ast.IndexExpr)
	if !ok || !isIdent(idx.X, "cmd") {
		return def{}, false, fmt.Errorf("%s: a definition returns one cmd[T]", fd.Name.Name)
	}
	if fd.Doc == nil || !strings.HasPrefix(fd.Doc.Text(), rest+" ") {
		return def{}, false, fmt.Errorf("%s: the doc comment must start with %q (it documents the Client method)", fd.Name.Name, rest+" ")
	}
	d := def{name: rest, result: node(fset, idx.Index)}
	for _, line := range strings.Split(strings.TrimRight(fd.Doc.Text(), "\n"), "\n") {
		if strings.TrimSpace(line) == "respire:client manual" {
			d.manual = true
			continue
		}
		d.doc = append(d.doc, line)
	}
	for len(d.doc) > 0 && strings.TrimSpace(d.doc[len(d.doc)-1]) == "" {
		d.doc = d.doc[:len(d.doc)-1]
	}
	var params, args []string
	for _, p := range fd.Type.Params.List {
		typ := node(fset, p.Type)
		var names []string
		for _, n := range p.Names {
			names = append(names, n.Name)
			a := n.Name
			if _, variadic := p.Type.(*ast.Ellipsis); variadic {
				a += "..."
			}
			args = append(args, a)
		}
		if len(names) == 0 {
			return def{}, false, fmt.Errorf("%s: every parameter needs a name", fd.Name.Name)
		}
		params = append(params, strings.Join(names, ", ")+" "+typ)
	}
	d.params, d.args = strings.Join(params, ", "), strings.Join(args, ", ")
	return d, true, nil
}

// signatureImports returns the import paths of the packages fd's
// parameters and result name, resolved with the imports of file f.
func signatureImports(f *ast.File, fd *ast.FuncDecl) ([]string, error) {
	byName := map[string]string{}
	for _, im := range f.Imports {
		path := strings.Trim(im.Path.Value, `"`)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		byName[name] = path
	}
	var paths []string
	var err error
	visit := func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok {
			path, known := byName[id.Name]
			if !known {
				err = fmt.Errorf("%s: package %s is not imported", fd.Name.Name, id.Name)
			} else if !slices.Contains(paths, path) {
				paths = append(paths, path)
			}
		}
		return false
	}
	ast.Inspect(fd.Type.Params, visit)
	ast.Inspect(fd.Type.Results, visit)
	return paths, err
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func node(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, fset, n)
	return b.String()
}

func render(defs []def) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/gen/commands from the cmdX definitions; DO NOT EDIT.\n\n")
	imports := []string{"context"}
	for _, d := range defs {
		for _, p := range d.imports {
			if !slices.Contains(imports, p) {
				imports = append(imports, p)
			}
		}
	}
	slices.Sort(imports)
	b.WriteString("package respire\n\nimport (\n")
	for _, p := range imports {
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	b.WriteString(")\n")
	for _, d := range defs {
		ctxParams := "ctx context.Context"
		if d.params != "" {
			ctxParams += ", " + d.params
		}
		if !d.manual {
			b.WriteString("\n")
			for _, line := range d.doc {
				b.WriteString(strings.TrimRight("// "+line, " ") + "\n")
			}
			fmt.Fprintf(&b, "func (c *Client) %s(%s) (%s, error) {\n\treturn call(ctx, c, c.cmd%s(%s))\n}\n",
				d.name, ctxParams, d.result, d.name, d.args)
		}
		if d.manual {
			fmt.Fprintf(&b, "\n// %s queues the command of [Client.%s]; its Future holds the\n// member's result as a %s.\n", d.name, d.name, d.result)
		} else {
			fmt.Fprintf(&b, "\n// %s queues the command of [Client.%s]; its Future holds what that\n// method returns.\n", d.name, d.name)
		}
		fmt.Fprintf(&b, "func (b *Batch) %s(%s) Future[%s] {\n\treturn enqueue(b, b.client().cmd%s(%s))\n}\n",
			d.name, d.params, d.result, d.name, d.args)
	}
	return format.Source(b.Bytes())
}
