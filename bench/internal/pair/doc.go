// Package pair holds what bench-compare reports for one target: ratios
// measured side by side (mcpblob against a reference in the same run),
// repeated over several runs so a verdict reports min, median and max, plus
// the bounds a target also sets (RSS growth, errors) and the generated
// lines that explain a miss. Workloads (bench/compare, bench/internal/...)
// fill a Target; the report renders it and draws its chart.
package pair
