// Package linktus is tus 1.0.0 (package core/tus) on the upload endpoints
// /u/{token} (docs/uploads.md), so SEP-1306 binary elicitation,
// request_upload and the upload page resume a cut upload.
//
// POST /u/{token}/tus/ creates the one upload the token allows: it takes
// the token's upload id as the whole-body upload does (a second creation,
// or a whole-body upload after it, is refused 409), and the upload belongs
// to that upload id, so /u/{token}/tus/{id} (HEAD, PATCH, DELETE) answers
// 404 under any other token; the id is random (unguessable). The
// token's maxSize is Tus-Max-Size; Upload-Metadata "filename" (or "name")
// and "filetype" (or "type") name the file as a multipart part's filename
// and Content-Type do, and a declared type outside the token's accept
// list is refused at creation (415), before any byte is sent;
// concatenation is not offered (one token, one upload). POST and PATCH
// take an upload slot of the token's principal and read the body under
// the rate rule, as the whole-body upload does.
//
// Where the store has staged writes (storage.Stager) the bytes go to the
// token's object's staged write as they arrive, each written once, and a
// complete upload is committed through storage/ingest's CommitStaged (the
// token's key, maxSize, accept list, sniffing, IfNotExists) without a
// copy; on a store without them the bytes are kept in records and stored
// through the whole-body upload's ingest at completion. Then come the
// check of a SEP-2631 file's pins (Env.Check) and the "upload done" signal
// to the waiting elicitation or request_upload. Env.Created reports each
// upload created, and Offset reads one's durable offset (files/getUpload).
// A refused
// completion removes the upload and frees the link for another try, as a
// refused whole-body upload does. DELETE (termination) removes the upload
// but leaves the link used: the upload may have been stored already.
// Uploads live in the store's records under core/tus's default prefix, so
// the control API's sweep removes expired ones; an upload expires with its
// token, when no request can reach it any more.
package linktus
