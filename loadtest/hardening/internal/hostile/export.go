package hostile

import (
	"context"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// What classes kept in packages of their own (hostiletus) send with.

// Send writes r on a fresh connection to the server and reads the answer.
func (e *Env) Send(ctx context.Context, r wire.Raw) *wire.Answer { return e.sendRaw(ctx, r) }

// Addr is the server's address.
func (e *Env) Addr() string { return e.addr }

// CaseLimit bounds one input's exchange.
func (e *Env) CaseLimit() time.Duration { return e.caseLimit }

// Flips is the count of seeded variants per input (32 full, 8 smoke).
func (e *Env) Flips() int { return e.flips }

// NoteStored records the objects a success answer names for principal.
func (e *Env) NoteStored(principal string, a *wire.Answer) { e.inv.NoteStored(principal, a) }

// Forget records that principal's key is gone on purpose.
func (e *Env) Forget(principal, key string) { e.inv.Forget(principal, key) }

// Next is a fresh number for a generated key, unique in the run.
func Next() int64 { return next() }

// NoteSecret registers a token (the signature or sealed box of a minted
// URL's token) that must never reach the server's logs.
func (e *Env) NoteSecret(kind, token string) { e.sec.AddToken(kind, token) }
