package fileargs

// Metrics counts what the gates do; core/metrics implements it
// (docs/gateway.md, "Metrics").
type Metrics interface {
	// FileRefused counts one request refused for a file, by surface:
	// SurfaceArgument (a tools/call argument) or SurfaceElicitation (a
	// form's answer).
	FileRefused(surface string)
	// FileByReference counts one file stored for delivery by reference
	// and its n decoded bytes.
	FileByReference(n int64)
}

// The surfaces of [Metrics.FileRefused].
const (
	SurfaceArgument    = "argument"
	SurfaceElicitation = "elicitation"
)

// MetricsOf is v's Metrics, or one that counts nothing when v has none.
func MetricsOf(v any) Metrics {
	if m, ok := v.(Metrics); ok && m != nil {
		return m
	}
	return noMetrics{}
}

type noMetrics struct{}

func (noMetrics) FileRefused(string)    {}
func (noMetrics) FileByReference(int64) {}

// countedStore counts the files its Store commits.
type countedStore struct {
	Store
	m Metrics
}

func (s countedStore) Keep(arg, mediaType string) (File, error) {
	f, err := s.Store.Keep(arg, mediaType)
	if err != nil {
		return nil, err
	}
	return countedFile{f, s.m}, nil
}

type countedFile struct {
	File
	m Metrics
}

func (f countedFile) Commit(facts Facts) (string, error) {
	link, err := f.File.Commit(facts)
	if err == nil {
		f.m.FileByReference(facts.Size)
	}
	return link, err
}
