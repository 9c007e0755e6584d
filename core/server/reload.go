package server

import (
	"errors"
	"fmt"

	"github.com/mcpblob/mcpblob/core/auth"
)

// ReloadKeys reads the API keys again (Options.Auth.KeysFile and Keys)
// and replaces those in use, returning how many there are now. A key no
// longer there is refused from its next request, and the notification
// streams it opened (GET streams, subscriptions/listen) end at their next
// event or keep-alive. A file that does not load, or a reload that would
// turn authentication off (no key left and no OAuth) or on, changes
// nothing: restart for that. With quotas on, the key lines' quotas and
// the quota file (Options.Quota.File) are read again too; a quota file
// that does not load changes nothing either.
func (s *Server) ReloadKeys() (int, error) {
	keys, err := auth.LoadKeys(s.opts.Auth.KeysFile, s.opts.Auth.Keys)
	if err != nil {
		return 0, fmt.Errorf("server: %w", err)
	}
	if (keys.Len() > 0 || s.gate.Auth.OAuth != nil) != s.gate.Auth.Enabled() {
		return 0, errors.New("server: a reload of the API keys cannot turn authentication on or off; the keys are unchanged (restart instead)")
	}
	if s.quotas != nil {
		if err := s.quotas.load(s.opts.Quota.File, keys); err != nil {
			return 0, fmt.Errorf("%w; the keys and quotas are unchanged", err)
		}
	}
	s.gate.Auth.Keys.Replace(keys)
	return keys.Len(), nil
}
