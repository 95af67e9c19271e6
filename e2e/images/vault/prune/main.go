// Command prune removes the uses of some imports from a Go source file, so a test build of Vault leaves out the
// plugins, storage backends and seals the e2e suites never use (their cloud SDKs are most of Vault's compile).
//
//	prune FILE IMPORT_PATH... [-name IDENT...]
//
// Every import of IMPORT_PATH is dropped, and with it, repeatedly until nothing changes: each composite-literal
// element, switch case, statement and package-level var/const spec that mentions a dropped package or a dropped
// name; each function whose signature mentions one (its name is dropped too); and the body of each function that
// still mentions one, replaced by a panic naming what was left out. -name adds identifiers to drop (e.g. a type
// defined in a file the build deletes). The file is rewritten gofmt-formatted.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: prune FILE IMPORT_PATH... [-name IDENT...]")
		os.Exit(2)
	}
	file, paths, names := os.Args[1], map[string]bool{}, map[string]bool{}
	target := paths
	for _, a := range os.Args[2:] {
		if a == "-name" {
			target = names
			continue
		}
		target[a] = true
	}
	if err := prune(file, paths, names); err != nil {
		fmt.Fprintf(os.Stderr, "prune %s: %v\n", file, err)
		os.Exit(1)
	}
}

func prune(file string, paths, names map[string]bool) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		return err
	}
	found := map[string]bool{}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.IMPORT {
			continue
		}
		kept := gen.Specs[:0]
		for _, spec := range gen.Specs {
			imp := spec.(*ast.ImportSpec)
			p, _ := strconv.Unquote(imp.Path.Value)
			if !paths[p] {
				kept = append(kept, spec)
				continue
			}
			found[p] = true
			names[localName(imp)] = true
		}
		gen.Specs = kept
	}
	for p := range paths {
		if !found[p] {
			return fmt.Errorf("does not import %s (has the source changed?)", p)
		}
	}
	delete(names, "_")
	for changed := true; changed; {
		changed = false
		mentions := func(n ast.Node) bool { return n != nil && !isNil(n) && mentionsAny(n, names) }
		decls := f.Decls[:0]
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if mentions(d.Type) || (d.Recv != nil && mentions(d.Recv)) {
					drop(d)
					names[d.Name.Name] = true
					changed = true
					continue
				}
				if d.Body != nil && mentions(d.Body) {
					d.Body = pruneBody(d.Body, d.Name.Name, mentions)
					changed = true
				}
			case *ast.GenDecl:
				if d.Tok == token.VAR || d.Tok == token.CONST {
					specs := d.Specs[:0]
					for _, s := range d.Specs {
						vs := s.(*ast.ValueSpec)
						if mentions(vs.Type) || anyMentions(vs.Values, mentions) {
							changed = true
							for i, v := range vs.Values {
								if fn, ok := v.(*ast.FuncLit); ok && !mentions(fn.Type) {
									fn.Body = pruneBody(fn.Body, vs.Names[i].Name, mentions)
								} else {
									pruneLiterals(v, mentions)
								}
							}
							if mentions(vs.Type) || anyMentions(vs.Values, mentions) {
								for _, n := range vs.Names {
									names[n.Name] = true
								}
								drop(vs)
								continue
							}
						}
						specs = append(specs, s)
					}
					d.Specs = specs
					if len(specs) == 0 {
						continue
					}
				}
			}
			decls = append(decls, decl)
		}
		f.Decls = decls
	}
	// Imports only the removed code used go too (as goimports would), so their packages leave the build.
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.IMPORT {
			continue
		}
		kept := gen.Specs[:0]
		for _, spec := range gen.Specs {
			name := localName(spec.(*ast.ImportSpec))
			if name == "_" || name == "." || used[name] {
				kept = append(kept, spec)
			}
		}
		gen.Specs = kept
	}
	// Comments inside removed code or replaced bodies would otherwise float to odd places.
	comments := f.Comments[:0]
	for _, c := range f.Comments {
		if !inRemoved(c) {
			comments = append(comments, c)
		}
	}
	f.Comments = comments
	var out bytes.Buffer
	if err := format.Node(&out, fset, f); err != nil {
		return err
	}
	return os.WriteFile(file, out.Bytes(), 0o644)
}

// pruneBody drops what can go without changing the rest of a function: switch cases that mention a dropped name
// (the switch's default then handles them), literal elements, and statements that declare nothing. If the body
// still mentions one, it becomes a panic naming what was left out.
func pruneBody(body *ast.BlockStmt, name string, mentions func(ast.Node) bool) *ast.BlockStmt {
	ast.Inspect(body, func(n ast.Node) bool {
		switch b := n.(type) {
		case *ast.SwitchStmt:
			if !mentions(b.Tag) && !mentions(b.Init) {
				b.Body.List = without(b.Body.List, func(c ast.Stmt) bool { return mentions(c) })
			}
		case *ast.TypeSwitchStmt:
			b.Body.List = without(b.Body.List, func(c ast.Stmt) bool { return mentions(c) })
		case *ast.BlockStmt:
			b.List = keepStatements(b.List, mentions)
		case *ast.CaseClause:
			b.Body = keepStatements(b.Body, mentions)
		case *ast.CompositeLit:
			b.Elts = without(b.Elts, func(e ast.Expr) bool { return mentions(e) })
		}
		return true
	})
	if mentions(body) {
		drop(body)
		replaced := panicBody(name)
		replaced.Lbrace, replaced.Rbrace = body.Lbrace, body.Rbrace
		return replaced
	}
	return body
}

func pruneLiterals(n ast.Node, mentions func(ast.Node) bool) {
	ast.Inspect(n, func(n ast.Node) bool {
		if lit, ok := n.(*ast.CompositeLit); ok {
			lit.Elts = without(lit.Elts, func(e ast.Expr) bool { return mentions(e) })
		}
		return true
	})
}

// keepStatements drops the statements that mention a dropped name and declare nothing (calls, plain assignments).
func keepStatements(list []ast.Stmt, mentions func(ast.Node) bool) []ast.Stmt {
	return without(list, func(s ast.Stmt) bool {
		switch x := s.(type) {
		case *ast.ExprStmt, *ast.IncDecStmt:
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				return false
			}
		case *ast.IfStmt:
			// An optional step (e.g. a metrics sink configured only when asked for): left out as a whole.
			if x.Else != nil || x.Init != nil || mentions(x.Cond) {
				return false
			}
		default:
			return false
		}
		return mentions(s)
	})
}

// without drops (and records, for their comments) the elements of list that remove says to.
func without[T ast.Node](list []T, remove func(T) bool) []T {
	out := list[:0]
	for _, n := range list {
		if remove(n) {
			drop(n)
			continue
		}
		out = append(out, n)
	}
	return out
}

func anyMentions(list []ast.Expr, mentions func(ast.Node) bool) bool {
	for _, e := range list {
		if mentions(e) {
			return true
		}
	}
	return false
}

func mentionsAny(n ast.Node, names map[string]bool) bool {
	hit := false
	ast.Inspect(n, func(n ast.Node) bool {
		if hit {
			return false
		}
		switch x := n.(type) {
		case *ast.SelectorExpr:
			// Only the package side of a selector: a field or method that shares a dropped name is not a use.
			hit = mentionsAny(x.X, names)
			return false
		case *ast.Ident:
			if names[x.Name] {
				hit = true
			}
		}
		return !hit
	})
	return hit
}

// isNil reports a typed nil node (e.g. a nil *ast.FieldList in an interface).
func isNil(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.FieldList:
		return x == nil
	case *ast.BlockStmt:
		return x == nil
	case ast.Expr:
		return x == nil
	case ast.Stmt:
		return x == nil
	}
	return false
}

// removed holds the source ranges of what was removed or replaced, so their comments go too.
var removed [][2]token.Pos

func drop(n ast.Node) { removed = append(removed, [2]token.Pos{n.Pos(), n.End()}) }

func inRemoved(c *ast.CommentGroup) bool {
	for _, r := range removed {
		if r[0] <= c.Pos() && c.End() <= r[1] {
			return true
		}
	}
	return false
}

func panicBody(name string) *ast.BlockStmt {
	msg := strconv.Quote("capstan test build: " + name + " needs a part of Vault this image leaves out")
	return &ast.BlockStmt{List: []ast.Stmt{&ast.ExprStmt{X: &ast.CallExpr{
		Fun:  ast.NewIdent("panic"),
		Args: []ast.Expr{&ast.BasicLit{Kind: token.STRING, Value: msg}},
	}}}}
}

// localName is the name an import is used by in the file: its alias, else its package name.
func localName(imp *ast.ImportSpec) string {
	if imp.Name != nil {
		return imp.Name.Name
	}
	p, _ := strconv.Unquote(imp.Path.Value)
	return packageName(p)
}

// packageName guesses an import's package name from its path: the last element without a /vN suffix or a go-
// prefix (as goimports does).
func packageName(p string) string {
	base := path.Base(p)
	if strings.HasPrefix(base, "v") && len(base) > 1 && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(p))
	}
	base = strings.TrimPrefix(base, "go-")
	return strings.NewReplacer("-", "", ".", "").Replace(base)
}
