package metrics

import (
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
)

var _ fileargs.Metrics = (*Set)(nil)

func TestGatewayFiles(t *testing.T) {
	s := New(Build{})
	s.FileRefused(fileargs.SurfaceArgument)
	s.FileRefused(fileargs.SurfaceElicitation)
	s.FileRefused(fileargs.SurfaceElicitation)
	s.FileByReference(9_300_000)
	var b strings.Builder
	s.WritePrometheus(&b)
	for _, want := range []string{
		`mcpblob_gateway_file_refusals_total{surface="argument"} 1`,
		`mcpblob_gateway_file_refusals_total{surface="elicitation"} 2`,
		"mcpblob_gateway_files_by_reference_total 1",
		"mcpblob_gateway_files_by_reference_bytes_total 9300000",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("exposition lacks %q:\n%s", want, b.String())
		}
	}
}
