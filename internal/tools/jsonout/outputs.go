package jsonout

//go:generate go run ./gen ../../..

import (
	"fmt"
	"path"
	"strings"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/jsonschema"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/tools/bench"
	"github.com/kubeproof/kubeproof/internal/tools/evidencedoc"
	"github.com/kubeproof/kubeproof/internal/tools/faults"
	"github.com/kubeproof/kubeproof/internal/tools/trace"
)

// Output is one JSON document kubeproof writes.
type Output struct {
	// Version is its schemaVersion (kubeproof.io/<name>/v<n>).
	Version string
	// What says which command writes it, and where.
	What string
	// Type is a value of its Go type.
	Type any
}

// Outputs are every JSON document kubeproof writes, a file of a report
// directory or what a command prints with -o json. specs.json is not
// among them: it is Ginkgo's own JSON report, in Ginkgo's format.
var Outputs = []Output{
	{report.SchemaVersion, "claims.json of a report directory (run, report, faults, matrix)", report.Report{}},
	{report.MatrixSchemaVersion, "matrix.json (matrix, report merge)", report.Matrix{}},
	{cluster.InfoSchema, "cluster.json of a report directory, and of a cluster kubeproof made", cluster.Info{}},
	{bench.Schema, "bench.json (bench)", bench.Result{}},
	{faults.Schema, "faults.json (faults)", faults.Document{}},
	{trace.Schema, "trace -o json", trace.Result{}},
	{StatusSchema, "status -o json", Status{}},
	{DryRunSchema, "run --dry-run -o json", DryRun{}},
	{DiffSchema, "report diff -o json", Diff{}},
	{ClaimShowSchema, "claims show ID -o json", ClaimShow{}},
	{ClaimListSchema, "claims list -o json", ClaimList{}},
	{evidencedoc.Schema, "claims specs --evidence -o json", evidencedoc.Document{}},
}

// SchemaDir is where the schemas are in the repository.
const SchemaDir = "schemas/output"

// File is where the output's schema is, relative to the repository's
// root: schemas/output/<name>-<version>.json.
func (o Output) File() string {
	name, version := path.Split(strings.TrimPrefix(o.Version, "kubeproof.io/"))
	return path.Join(SchemaDir, strings.TrimSuffix(name, "/")+"-"+version+".json")
}

// Schema generates the output's JSON Schema; root is the repository's.
func (o Output) Schema(root string) ([]byte, error) {
	return jsonschema.Generate(root, o.Type, jsonschema.Options{
		Title:  fmt.Sprintf("kubeproof %s: %s", o.Version, o.What),
		Consts: map[string]string{"schemaVersion": o.Version},
	})
}

// Find is the output whose schemaVersion is version.
func Find(version string) (Output, bool) {
	for _, o := range Outputs {
		if o.Version == version {
			return o, true
		}
	}
	return Output{}, false
}
