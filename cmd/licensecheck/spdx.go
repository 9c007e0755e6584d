package main

import (
	"fmt"
	"regexp"
	"strings"
)

// spdxID matches one licence id or LicenseRef of an SPDX expression.
var spdxID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+-]*$`)

// classifyExpression judges an SPDX licence expression (an npm package's
// license field): an OR is acceptable when one alternative is, an AND when
// every part is; an exception (WITH) only adds permissions, so its licence
// decides. Anything that does not parse is an unknown licence.
func classifyExpression(expr string) verdict {
	v := verdict{licence: expr}
	if strings.TrimSpace(expr) == "" {
		v.licence = "none"
		v.add("no license field")
		return v
	}
	p := &spdxParser{tokens: spdxTokens(expr)}
	res, err := p.or()
	if err == nil && p.pos < len(p.tokens) {
		err = fmt.Errorf("unexpected %q", p.tokens[p.pos])
	}
	switch {
	case err != nil:
		v.add(fmt.Sprintf("unknown licence %q (not an SPDX expression: %v)", expr, err))
	case !res.ok:
		v.denied = res.denied
		v.add(res.why)
	}
	return v
}

// spdxTokens splits an expression into ids, operators and parentheses.
func spdxTokens(expr string) []string {
	expr = strings.NewReplacer("(", " ( ", ")", " ) ").Replace(expr)
	return strings.Fields(expr)
}

// spdxResult is the judgement of a sub-expression.
type spdxResult struct {
	ok     bool
	denied bool   // not ok because of a denied licence
	why    string // when not ok
}

// spdxParser is a recursive-descent parser over the tokens; WITH binds
// tighter than AND, AND tighter than OR.
type spdxParser struct {
	tokens []string
	pos    int
}

func (p *spdxParser) peek(op string) bool {
	return p.pos < len(p.tokens) && strings.EqualFold(p.tokens[p.pos], op)
}

func (p *spdxParser) or() (spdxResult, error) {
	res, err := p.and()
	for err == nil && p.peek("OR") {
		p.pos++
		var alt spdxResult
		if alt, err = p.and(); err == nil && !res.ok {
			if alt.ok {
				res = alt
			} else {
				res = spdxResult{denied: res.denied && alt.denied, why: res.why + "; " + alt.why}
			}
		}
	}
	return res, err
}

func (p *spdxParser) and() (spdxResult, error) {
	res, err := p.term()
	for err == nil && p.peek("AND") {
		p.pos++
		var part spdxResult
		if part, err = p.term(); err == nil && !part.ok {
			if res.ok {
				res = part
			} else {
				res = spdxResult{denied: res.denied || part.denied, why: res.why + "; " + part.why}
			}
		}
	}
	return res, err
}

func (p *spdxParser) term() (spdxResult, error) {
	if p.pos >= len(p.tokens) {
		return spdxResult{}, fmt.Errorf("expression ends early")
	}
	tok := p.tokens[p.pos]
	p.pos++
	if tok == "(" {
		res, err := p.or()
		if err == nil && !p.peek(")") {
			err = fmt.Errorf("missing )")
		}
		p.pos++
		return res, err
	}
	if !spdxID.MatchString(tok) || isOperator(tok) {
		return spdxResult{}, fmt.Errorf("%q is not a licence id", tok)
	}
	if p.peek("WITH") {
		p.pos += 2
		if p.pos > len(p.tokens) || !spdxID.MatchString(p.tokens[p.pos-1]) {
			return spdxResult{}, fmt.Errorf("WITH without an exception")
		}
	}
	return judgeID(tok), nil
}

func isOperator(tok string) bool {
	return strings.EqualFold(tok, "AND") || strings.EqualFold(tok, "OR") || strings.EqualFold(tok, "WITH")
}

// judgeID judges one licence id.
func judgeID(id string) spdxResult {
	switch {
	case isDenied(id):
		return spdxResult{denied: true, why: id + " is denied"}
	case isAccepted(id):
		return spdxResult{ok: true}
	}
	return spdxResult{why: id + " is not on the accepted list"}
}
