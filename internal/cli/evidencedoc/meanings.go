package evidencedoc

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
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

// meaningsFile is meanings.json: the meanings of the suites' evidence, read
// from their Go source by go generate (./gen), since the binary carries no
// source to read them from.
type meaningsFile struct {
	Generated string   `json:"generated"`
	Specs     Meanings `json:"specs"`
}

const generatedNote = "by go generate ./internal/cli/evidencedoc from the suites' doc comments; do not edit"

//go:embed meanings.json
var builtinData []byte

var builtin = sync.OnceValues(func() (Meanings, error) { return DecodeMeanings(builtinData) })

// Builtin returns the meanings of the built-in suites' evidence.
func Builtin() (Meanings, error) { return builtin() }

// DecodeMeanings reads a meanings.json.
func DecodeMeanings(data []byte) (Meanings, error) {
	var f meaningsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("read the evidence meanings: %w", err)
	}
	if f.Specs == nil {
		f.Specs = Meanings{}
	}
	return f.Specs, nil
}

// EncodeMeanings writes m as meanings.json: indented, keys sorted, so that
// a regenerated file differs from the committed one only where a meaning
// did.
func EncodeMeanings(m Meanings) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(meaningsFile{Generated: generatedNote, Specs: m}); err != nil {
		return nil, fmt.Errorf("encode the evidence meanings: %w", err)
	}
	return b.Bytes(), nil
}
