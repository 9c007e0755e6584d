package validate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var dashboardPath = filepath.Join(repo, "deploy", "grafana", "mcpblob-dashboard.json")

// dashboard is the part of Grafana's dashboard JSON model the file uses,
// decoded strictly: a field missing here fails, so a misspelt "expr" or
// "gridPos" cannot slip through as an empty panel. Panel options and field
// defaults are per panel type and stay free-form.
type dashboard struct {
	ID            *int     `json:"id"`
	UID           string   `json:"uid"`
	Title         string   `json:"title"`
	Description   string   `json:"description"`
	Tags          []string `json:"tags"`
	Timezone      string   `json:"timezone"`
	Editable      bool     `json:"editable"`
	GraphTooltip  int      `json:"graphTooltip"`
	SchemaVersion int      `json:"schemaVersion"`
	Version       int      `json:"version"`
	Refresh       string   `json:"refresh"`
	Time          struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"time"`
	Links       []map[string]any `json:"links"`
	Annotations struct {
		List []map[string]any `json:"list"`
	} `json:"annotations"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type variable struct {
	Name       string         `json:"name"`
	Label      string         `json:"label"`
	Type       string         `json:"type"`
	Query      any            `json:"query"` // a plugin id for a datasource variable, a query object otherwise
	Datasource *datasourceRef `json:"datasource"`
	Definition string         `json:"definition"`
	Current    map[string]any `json:"current"`
	Hide       int            `json:"hide"`
	Refresh    int            `json:"refresh"`
	Multi      bool           `json:"multi"`
	IncludeAll bool           `json:"includeAll"`
	Sort       int            `json:"sort"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID          int            `json:"id"`
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Datasource  *datasourceRef `json:"datasource"`
	GridPos     struct {
		H int `json:"h"`
		W int `json:"w"`
		X int `json:"x"`
		Y int `json:"y"`
	} `json:"gridPos"`
	Collapsed   bool  `json:"collapsed"`
	Panels      []any `json:"panels"` // a collapsed row's panels; this dashboard has none
	FieldConfig *struct {
		Defaults  map[string]any   `json:"defaults"`
		Overrides []map[string]any `json:"overrides"`
	} `json:"fieldConfig"`
	Options         map[string]any `json:"options"`
	Transformations []struct {
		ID      string         `json:"id"`
		Options map[string]any `json:"options"`
	} `json:"transformations"`
	Targets []struct {
		RefID        string         `json:"refId"`
		Datasource   *datasourceRef `json:"datasource"`
		Expr         string         `json:"expr"`
		LegendFormat string         `json:"legendFormat"`
		Instant      bool           `json:"instant"`
		Format       string         `json:"format"`
	} `json:"targets"`
}

// panelTypes are the panel plugins the dashboard may use (core Grafana).
var panelTypes = []string{"row", "timeseries", "stat", "table", "gauge", "bargauge", "text"}

// grafanaVar matches $name, ${name}, ${name:format} and [[name]].
var grafanaVar = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]`)

// intervalVars are Grafana's built-in interval variables, which stand for
// a range duration in PromQL.
var intervalVars = []string{"__rate_interval", "__interval", "__range"}

// expandGrafana replaces Grafana's variables in a query so that PromQL can
// parse it: interval variables by a duration, dashboard variables by a
// label value. An undefined variable fails.
func expandGrafana(expr string, vars []string) (string, error) {
	var errs []error
	out := grafanaVar.ReplaceAllStringFunc(expr, func(m string) string {
		sub := grafanaVar.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		switch {
		case slices.Contains(intervalVars, name):
			return "5m"
		case slices.Contains(vars, name):
			return "x"
		}
		errs = append(errs, fmt.Errorf("variable $%s is not defined", name))
		return m
	})
	return out, errors.Join(errs...)
}

// checkDashboard decodes a dashboard strictly and checks its layout, its
// variables, its data sources and every query, and that the queries cover
// every family mcpblob exports.
func checkDashboard(data []byte) error {
	var d dashboard
	if err := strictJSON(data, &d); err != nil {
		return err
	}
	var errs []error
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		errs = append(errs, fmt.Errorf("uid %q, title %q, schemaVersion %d: want a uid, a title and schema 36 or later", d.UID, d.Title, d.SchemaVersion))
	}
	var vars []string
	dsVar := ""
	for _, v := range d.Templating.List {
		if slices.Contains(vars, v.Name) {
			errs = append(errs, fmt.Errorf("variable %q defined twice", v.Name))
		}
		vars = append(vars, v.Name)
		if v.Type == "datasource" && v.Query == "prometheus" {
			dsVar = "${" + v.Name + "}"
		}
	}
	if dsVar == "" {
		errs = append(errs, errors.New("no Prometheus data source variable: the dashboard would be tied to one data source uid"))
	}
	for _, v := range d.Templating.List {
		q, ok := v.Query.(map[string]any)
		if !ok {
			continue
		}
		if v.Datasource == nil || v.Datasource.UID != dsVar {
			errs = append(errs, fmt.Errorf("variable %q: data source %v, want uid %s", v.Name, v.Datasource, dsVar))
		}
		expr, _ := q["query"].(string)
		inner, ok := strings.CutPrefix(expr, "label_values(")
		if !ok {
			errs = append(errs, fmt.Errorf("variable %q: query %q, want label_values(...)", v.Name, expr))
			continue
		}
		// label_values(selector, label): the selector is PromQL.
		i := strings.LastIndex(inner, ",")
		if i < 0 {
			errs = append(errs, fmt.Errorf("variable %q: query %q names no label", v.Name, expr))
			continue
		}
		sel, err := expandGrafana(inner[:i], vars)
		if err == nil {
			_, err = checkPromQL(sel, false)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("variable %q: %w", v.Name, err))
		}
	}
	var names []string // series the panels query
	ids := map[int]bool{}
	type cell struct{ x, y int }
	used := map[cell]int{}
	for _, p := range d.Panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID <= 0 || ids[p.ID] {
			errs = append(errs, fmt.Errorf("%s: id missing or used twice", where))
		}
		ids[p.ID] = true
		if !slices.Contains(panelTypes, p.Type) {
			errs = append(errs, fmt.Errorf("%s: type %q is not one of %v", where, p.Type, panelTypes))
		}
		g := p.GridPos
		if g.W < 1 || g.H < 1 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			errs = append(errs, fmt.Errorf("%s: gridPos %+v outside the 24 columns", where, g))
		}
	cells:
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := used[cell{x, y}]; ok {
					errs = append(errs, fmt.Errorf("%s overlaps panel %d at column %d, row %d", where, other, x, y))
					break cells
				}
				used[cell{x, y}] = p.ID
			}
		}
		if p.Type == "row" {
			if len(p.Targets) > 0 || len(p.Panels) > 0 {
				errs = append(errs, fmt.Errorf("%s: a row with queries or collapsed panels", where))
			}
			continue
		}
		if p.Title == "" || len(p.Targets) == 0 {
			errs = append(errs, fmt.Errorf("%s: want a title and at least one query", where))
		}
		if p.Datasource == nil || p.Datasource.UID != dsVar {
			errs = append(errs, fmt.Errorf("%s: data source %v, want uid %s", where, p.Datasource, dsVar))
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] {
				errs = append(errs, fmt.Errorf("%s: refId %q empty or used twice", where, tg.RefID))
			}
			refs[tg.RefID] = true
			if tg.Datasource != nil && tg.Datasource.UID != dsVar {
				errs = append(errs, fmt.Errorf("%s query %s: data source %v, want uid %s", where, tg.RefID, tg.Datasource, dsVar))
			}
			expr, err := expandGrafana(tg.Expr, vars)
			var use promQLUse
			if err == nil {
				use, err = checkPromQL(expr, false)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s query %s: %w", where, tg.RefID, err))
			}
			names = append(names, use.names...)
		}
	}
	for name, f := range families {
		if !slices.ContainsFunc(names, func(n string) bool {
			return n == name || f.histogram && strings.HasPrefix(n, name+"_")
		}) {
			errs = append(errs, fmt.Errorf("no panel shows %s", name))
		}
	}
	for _, prefix := range familyPrefixes {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) }) {
			errs = append(errs, fmt.Errorf("no panel shows a %s* family", prefix))
		}
	}
	return errors.Join(errs...)
}

func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkDashboard(data); err != nil {
		t.Fatal(err)
	}
}

// TestGrafanaDashboardRejects feeds broken copies of the dashboard.
func TestGrafanaDashboardRejects(t *testing.T) {
	orig, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, old, new, want string
		first                bool // change the first occurrence only
	}{
		{"misspelt query field", `"expr": "count(mcpblob_build_info`, `"exp": "count(mcpblob_build_info`, `unknown field "panels[1].targets[0].exp"`, false},
		{"field in the wrong case", `"gridPos": {`, `"gridpos": {`, `unknown field "panels[0].gridpos"`, true},
		{"unknown metric", `sum(mcpblob_sessions_active{`, `sum(mcpblob_session_active{`, "not a metric family", false},
		{"undefined variable", `count(mcpblob_build_info{job=~\"$job\"`, `count(mcpblob_build_info{job=~\"$jobs\"`, "$jobs is not defined", false},
		{"unknown panel type", `"type": "table"`, `"type": "tabel"`, `type "tabel"`, false},
		{"bad PromQL", `count(mcpblob_build_info{`, `count((mcpblob_build_info{`, "parse error", false},
		{"hard-wired data source", `"refId": "A",` + "\n          \"datasource\": {\n            \"type\": \"prometheus\",\n            \"uid\": \"${datasource}\"",
			`"refId": "A",` + "\n          \"datasource\": {\n            \"type\": \"prometheus\",\n            \"uid\": \"P1809F7CD0C75ACF3\"", "want uid ${datasource}", true},
		{"family left out", `"expr": "process_open_fds{`, `"expr": "process_max_fds{`, "no panel shows process_open_fds", false},
		{"overlapping panels", `"x": 4,` + "\n        \"y\": 1", `"x": 2,` + "\n        \"y\": 1", "overlaps panel", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			broken := string(orig)
			if c.first {
				if !strings.Contains(broken, c.old) {
					t.Fatalf("%q does not occur", c.old)
				}
				broken = strings.Replace(broken, c.old, c.new, 1)
			} else {
				broken = replaceOnce(t, broken, c.old, c.new)
			}
			wantRejected(t, checkDashboard([]byte(broken)), c.want)
		})
	}
}
