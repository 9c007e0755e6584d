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
