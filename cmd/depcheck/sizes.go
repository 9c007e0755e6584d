package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"
)

const (
	maxPackageLines = 3500 // hand-written non-test lines per package
	maxFuncLines    = 80   // from the func line to the closing brace
)

// A sizeRule bounds the hand-written lines of each package under a
// module-relative pattern more tightly than maxPackageLines.
type sizeRule struct {
	pattern string // "core/server/..."
	max     int
}

var sizeRules = []sizeRule{
	// The HTTP server is an assembly of packages with one job each (the
	// front, the shared request rules, the blob service, the upload page).
	{"core/server/...", 2000},
}

// packageSizes reports every package of g's module whose hand-written
// non-test files (those of the package clause's name, whatever their build
// constraints) hold more than maxPackageLines lines.
func packageSizes(g *graph) result {
	res := packageSizesOf(g, g.main, maxPackageLines)
	res.rule = fmt.Sprintf("no package over %d lines (non-test, non-generated .go files)", maxPackageLines)
	return res
}

// check reports every package under r.pattern over r.max lines.
func (r sizeRule) check(g *graph) result {
	res := packageSizesOf(g, g.matching(r.pattern), r.max)
	res.rule = fmt.Sprintf("no package under %s over %d lines (non-test, non-generated .go files)",
		strings.TrimSuffix(r.pattern, "/..."), r.max)
	if res.checked == 0 {
		res.skip = "no package " + r.pattern + " yet"
	}
	return res
}

// packageSizesOf reports every package of pkgs over limit lines.
func packageSizesOf(g *graph, pkgs []*pkg, limit int) result {
	var res result
	for _, p := range pkgs {
		res.checked++
		total, largest := 0, []*srcFile(nil)
		for _, f := range g.files[p.ImportPath] {
			if !f.generated && f.ast.Name.Name == p.Name {
				total += f.lines
				largest = append(largest, f)
			}
		}
		if total <= limit {
			continue
		}
		slices.SortFunc(largest, func(a, b *srcFile) int { return b.lines - a.lines })
		var top []string
		for _, f := range largest[:min(3, len(largest))] {
			top = append(top, fmt.Sprintf("%s %d", f.path, f.lines))
		}
		res.violations = append(res.violations, fmt.Sprintf("%s/: package %s has %d lines in %d files (limit %d); largest: %s",
			g.dir(p), p.Name, total, len(largest), limit, strings.Join(top, ", ")))
	}
	return res
}

// funcLengths reports every hand-written function longer than maxFuncLines
// that is not data, and lists the long ones that are.
func funcLengths(g *graph) result {
	res := result{rule: fmt.Sprintf("no hand-written function over %d lines (non-test, non-generated; data exempt)", maxFuncLines),
		unit: "file"}
	for _, p := range g.main {
		for _, f := range g.files[p.ImportPath] {
			if f.generated {
				continue
			}
			res.checked++
			for _, fn := range funcSizes(g.fset, f.ast) {
				if fn.lines <= maxFuncLines {
					continue
				}
				msg := fmt.Sprintf("%s:%d: %s is %d lines", f.path, fn.line, fn.name, fn.lines)
				if fn.exempt != "" {
					res.exempt = append(res.exempt, msg+": "+fn.exempt)
				} else {
					res.violations = append(res.violations, fmt.Sprintf("%s (limit %d)", msg, maxFuncLines))
				}
			}
		}
	}
	return res
}

// funcSize is one function, method or package-level function literal.
type funcSize struct {
	name   string
	line   int    // line of the func keyword
	lines  int    // from the func line to the closing brace, both included
	exempt string // why the body counts as data; "" when it holds code
}

// funcSizes measures the function declarations of f and the function
// literals assigned at package level (var f = func() {...}).
func funcSizes(fset *token.FileSet, f *ast.File) []funcSize {
	measure := func(name string, fn token.Pos, body *ast.BlockStmt) funcSize {
		start, end := fset.Position(fn).Line, fset.Position(body.Rbrace).Line
		return funcSize{name: name, line: start, lines: end - start + 1, exempt: dataReason(body)}
	}
	var out []funcSize
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				out = append(out, measure(funcName(d), d.Type.Func, d.Body))
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				name := fmt.Sprintf("func literal in var %s", vs.Names[0].Name)
				for _, v := range vs.Values {
					ast.Inspect(v, func(n ast.Node) bool {
						lit, ok := n.(*ast.FuncLit)
						if ok {
							out = append(out, measure(name, lit.Type.Func, lit.Body))
						}
						return !ok
					})
				}
			}
		}
	}
	return out
}

// funcName is "name", "T.name" or "(*T).name".
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	typ, star := d.Recv.List[0].Type, false
	if s, ok := typ.(*ast.StarExpr); ok {
		typ, star = s.X, true
	}
	switch t := typ.(type) { // generic receivers: T[K] or T[K, V]
	case *ast.IndexExpr:
		typ = t.X
	case *ast.IndexListExpr:
		typ = t.X
	}
	recv := "?"
	if id, ok := typ.(*ast.Ident); ok {
		recv = id.Name
	}
	if star {
		return "(*" + recv + ")." + d.Name.Name
	}
	return recv + "." + d.Name.Name
}

// dataReason reports why body is data rather than code, or "" when it is
// code. Body is data when it is
//
//   - a single return statement whose one result is a composite literal
//     (or &literal) made of data, or
//   - a data table: only var/const/type declarations and assignments whose
//     values are literals made of data, then at most a final return of data,
//     with at least one composite literal in all.
//
// Data ([isData]) never holds a function literal.
func dataReason(body *ast.BlockStmt) string {
	if len(body.List) == 1 {
		if ret, ok := body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
			if lit, ok := unwrap(ret.Results[0]).(*ast.CompositeLit); ok && isData(lit) {
				return "a single return of a composite literal"
			}
		}
	}
	if isTable(body) {
		return "a pure data table"
	}
	return ""
}

// isTable reports whether body is a data table (see [dataReason]).
func isTable(body *ast.BlockStmt) bool {
	for i, stmt := range body.List {
		switch s := stmt.(type) {
		case *ast.DeclStmt:
			if !isDataDecl(s.Decl.(*ast.GenDecl)) {
				return false
			}
		case *ast.AssignStmt:
			if s.Tok != token.DEFINE && s.Tok != token.ASSIGN || !allData(s.Lhs, false) || !allData(s.Rhs, true) {
				return false
			}
		case *ast.ReturnStmt:
			if i != len(body.List)-1 || !allData(s.Results, false) {
				return false
			}
		default:
			return false
		}
	}
	hasLit := false
	ast.Inspect(body, func(n ast.Node) bool {
		_, ok := n.(*ast.CompositeLit)
		hasLit = hasLit || ok
		return !hasLit
	})
	return hasLit
}

// isDataDecl reports whether every value a declaration binds is a literal
// made of data. Type declarations hold no code.
func isDataDecl(d *ast.GenDecl) bool {
	for _, spec := range d.Specs {
		if vs, ok := spec.(*ast.ValueSpec); ok && !allData(vs.Values, true) {
			return false
		}
	}
	return true
}

// allData reports whether every expression is data and, with literal set,
// a literal: a basic or composite literal, possibly behind & or parentheses.
func allData(exprs []ast.Expr, literal bool) bool {
	for _, e := range exprs {
		if !isData(e) {
			return false
		}
		switch unwrap(e).(type) {
		case *ast.BasicLit, *ast.CompositeLit:
		default:
			if literal {
				return false
			}
		}
	}
	return true
}

// unwrap strips parentheses and a leading &.
func unwrap(e ast.Expr) ast.Expr {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.UnaryExpr:
			if x.Op != token.AND {
				return e
			}
			e = x.X
		default:
			return e
		}
	}
}

// isData reports whether e is built only of literals, names, selectors,
// operators, indexing, types and calls on such operands (conversions and
// constructors such as json.RawMessage(`{}`) or textBlock("x"), whose code
// lives, and is measured, elsewhere). A function literal, a channel receive
// or a type assertion makes e code.
func isData(e ast.Expr) bool {
	data := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case nil, *ast.BasicLit, *ast.Ident, *ast.SelectorExpr, *ast.CompositeLit, *ast.KeyValueExpr,
			*ast.BinaryExpr, *ast.ParenExpr, *ast.StarExpr, *ast.IndexExpr, *ast.IndexListExpr,
			*ast.SliceExpr, *ast.CallExpr, *ast.Ellipsis, *ast.ArrayType, *ast.MapType, *ast.ChanType,
			*ast.StructType, *ast.InterfaceType, *ast.FuncType, *ast.FieldList, *ast.Field:
		case *ast.UnaryExpr:
			data = data && x.Op != token.ARROW
		default: // *ast.FuncLit, *ast.TypeAssertExpr, *ast.BadExpr, ...
			data = false
		}
		return data
	})
	return data
}
