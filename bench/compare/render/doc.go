// Package render turns bench/compare's measured targets (pair.Target) into
// markdown and hand-written SVG charts: the verdict of each target, the
// figures against what the target asks, a generated line for every miss,
// ratio charts per run and the bar charts of the report.
package render
