// Package claimschema writes the JSON schema of a claims file from the Go
// types that read it (claims.File), so that the schema editors check files
// against cannot drift from what the loader accepts: a test fails when the
// schema shipped in schemas/ is not the one generated here.
//
// Descriptions come from the types' doc comments and enums from their typed
// constants, both read from the Go source (internal/jsonschema), so that an
// editor explains a field in the words the code does.
package claimschema

//go:generate go run ./gen ../../schemas/claims-v1alpha1.json

import (
	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/jsonschema"
)

// ShippedPath is where the schema is in the repository, relative to its
// root; claims files name it in their first line.
const ShippedPath = "schemas/claims-v1alpha1.json"

// Generate returns the schema of claims.File, indented, with a final
// newline. root is the repository's root, where the source of the types is
// read for their comments and constants.
func Generate(root string) ([]byte, error) {
	return jsonschema.Generate(root, claims.File{}, jsonschema.Options{
		Title:  "kubeproof claims file, " + claims.APIVersion,
		Consts: map[string]string{"apiVersion": claims.APIVersion, "kind": claims.FileKind},
		// Read with strict decoding; what the loader sets is not written.
		Input: true,
	})
}
