// Package pace holds two limits against slow or many clients
// (docs/security.md "Limits"): Slots, a cap on uploads in progress in all
// and per principal, and Reader, a request body read under a minimum
// transfer rate. Package core/server/gate applies both.
package pace
