// Package hostiletus is the tus class of `make hardening`: hostile inputs
// to the resumable upload endpoint /v1/tus/ (tus 1.0.0, docs/uploads.md),
// as [hostile.Case]s on the [hostile.Tus] row. Each input prepares an
// upload of its own when it needs one, expects the status of the refusal
// table, and checks after the answer that a refusal appended nothing (HEAD
// reports the offset the upload had) and that every upload completed along
// the way holds its exact bytes (registered with the store check, and read
// back). A small tus client (client.go) prepares and inspects uploads.
package hostiletus
