package fileargs

import "errors"

// Checker checks the file arguments of one tools/call body as it is fed.
// Not safe for concurrent use.
type Checker struct {
	walk    walker
	check   fileCheck
	lookup  func(tool string) map[string]Spec
	tool    string
	looked  bool
	refused *Refusal
}

// New returns the Checker of a tools/call body. name is the tool's name
// when known before the body (the Mcp-Name header; params.name wins);
// lookup returns the file arguments of a tool (nil: none, or unknown).
func New(name string, lookup func(tool string) map[string]Spec) *Checker {
	c := &Checker{lookup: lookup}
	c.walk.sink = &c.check
	c.walk.isFile = c.isFile
	c.walk.name = name
	return c
}

func (c *Checker) isFile(tool, arg string) bool {
	if !c.looked || tool != c.tool {
		c.tool, c.looked = tool, true
		c.check.specs = c.lookup(tool)
	}
	_, ok := c.check.specs[arg]
	return ok
}

// Feed walks the next chunk of the body. A *Refusal means the chunk, and
// what follows, must not reach the upstream; every later Feed returns it.
func (c *Checker) Feed(p []byte) error {
	if c.refused != nil {
		return c.refused
	}
	err := c.walk.feed(p)
	if err != nil && !errors.As(err, &c.refused) {
		return nil // not a refusal: the check of that value stopped
	}
	return err
}

// Refused is the file refused, or nil.
func (c *Checker) Refused() *Refusal { return c.refused }

// Stop ends a check left midway (the body will not be fed further).
func (c *Checker) Stop() { c.check.stop() }

// Deliver makes the Checker deliver by reference the files of arguments
// whose Spec asks it: their data URI is decoded into store as it is fed
// (checked as any other), and Rewrite forwards the stored file's link in
// its place. Call it before the first Feed or Rewrite.
func (c *Checker) Deliver(store Store) { c.check.store = store }

// Expand makes the Checker expand, while it rewrites, the file URIs
// given as inline file arguments into data URIs read through o
// (expand.go): Rewrite withholds such a URI and records a splice, taken
// with takeSplices. Call it before the first Rewrite.
func (c *Checker) Expand(o Opener) { c.check.opener = o }

// endRewrite appends to out what the walk still withholds when the body
// ends: the start of a string that might have been a file URI, as it
// came (the upstream judges the JSON).
func (c *Checker) endRewrite(out []byte) []byte {
	if c.walk.st != wPeekStr {
		return out
	}
	c.walk.st = wSkipStr
	return append(out, c.walk.capt...)
}

// takeSplices returns the splices recorded since the last call, at
// offsets of the out of Rewrite.
func (c *Checker) takeSplices() []splice {
	s := c.walk.splices
	c.walk.splices = nil
	return s
}

// InlineOnly makes every file argument from here on checked and forwarded
// inline, whatever its Spec asks (the request was sent with the length
// the client declared, so its body must not change).
func (c *Checker) InlineOnly() { c.check.store = nil }

// Tool is the name of the tool called, as far as known ("" before
// params.name was read when no name was given to New).
func (c *Checker) Tool() string { return c.walk.name }

// Rewrite walks the next chunk of the body like Feed and appends to out
// the bytes to forward: the chunk as it is, except the contents of the
// string of a file delivered by reference, which are withheld while they
// are stored and replaced by the file's link once the string ends.
func (c *Checker) Rewrite(p, out []byte) ([]byte, error) {
	c.walk.rewrite, c.walk.out = true, out
	err := c.Feed(p)
	out = c.walk.out
	c.walk.rewrite, c.walk.out = false, nil // a later Feed forwards nothing
	return out, err
}
