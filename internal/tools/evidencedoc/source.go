package evidencedoc

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Meaning is what one evidence path means, in one line of prose, and where
// that line was read.
type Meaning struct {
	Text string `json:"text"`
	// From names the Go declaration the text is the doc comment of:
	// "declaration scaleUp" (the DeclareEvidence call or its var), "type
	// scaleUpEvidence", "field scaleUpEvidence.Ready" (whose comment may
	// be that of the fields written with it, when it names the field). No
	// line: a line that moves does not change what a path means.
	From string `json:"from"`
}

// Meanings are the meanings of evidence paths, by spec ID and then path
// (as Expand names it). A path that is missing has no meaning written.
type Meanings map[string]map[string]Meaning

// Merge returns m with other's meanings added; other's win where both have
// one (a source given later is the more specific one).
func (m Meanings) Merge(other Meanings) Meanings {
	out := Meanings{}
	for _, src := range []Meanings{m, other} {
		for spec, paths := range src {
			if out[spec] == nil {
				out[spec] = map[string]Meaning{}
			}
			maps.Copy(out[spec], paths)
		}
	}
	return out
}

// SpecNeeds are the cluster capabilities a spec declares beside its ID
// (framework.Checks).
type SpecNeeds struct {
	// Requires are those without which the spec is skipped (its claims
	// are not checkable).
	Requires []cluster.Capability `json:"requires"`
	// Uses are those it asks for and does without: it records less, or
	// marks evidence unobservable.
	Uses []cluster.Capability `json:"uses"`
}

// NeedsOf are the capabilities each of specs declares, by spec ID.
func NeedsOf(specs []speclink.SpecInfo) map[string]SpecNeeds {
	out := map[string]SpecNeeds{}
	for _, s := range specs {
		if s.ID != "" {
			out[s.ID] = SpecNeeds{Requires: s.Requires, Uses: s.Uses}
		}
	}
	return out
}

// Source is what the suites' Go source says about their evidence: read by
// go generate (package gosource) into source.json, which the binary
// embeds, since it carries no source to read.
type Source struct {
	Generated string   `json:"generated"`
	Meanings  Meanings `json:"meanings"`
}

// GeneratedNote says where source.json comes from.
const GeneratedNote = "by go generate ./internal/tools/evidencedoc from the suites' Go source; do not edit"

//go:embed source.json
var builtinData []byte

var builtin = sync.OnceValues(func() (Source, error) { return DecodeSource(builtinData) })

// Builtin returns what the built-in suites' source says of their evidence.
func Builtin() (Source, error) { return builtin() }

// DecodeSource reads a source.json.
func DecodeSource(data []byte) (Source, error) {
	var s Source
	if err := json.Unmarshal(data, &s); err != nil {
		return Source{}, fmt.Errorf("read what the suites' source says of their evidence: %w", err)
	}
	if s.Meanings == nil {
		s.Meanings = Meanings{}
	}
	return s, nil
}

// EncodeSource writes s as source.json: indented, keys sorted, so that a
// regenerated file differs from the committed one only where the source
// does.
func EncodeSource(s Source) ([]byte, error) {
	s.Generated = GeneratedNote
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encode what the suites' source says of their evidence: %w", err)
	}
	return b.Bytes(), nil
}
