package claims

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/claims/evidence"
)

// decodeError turns an error decoding the claims file at source into
// "source:LINE: claim ID: message": the YAML decoder behind the loader
// (YAML to JSON, then encoding/json) knows neither lines nor claims, so the
// file is read again as YAML nodes and each claim entry decoded on its own
// to find the entry, and the field in it, that the error is about.
func decodeError(source string, data []byte, err error) error {
	var doc yaml3.Node
	if perr := yaml3.Unmarshal(data, &doc); perr != nil {
		return fmt.Errorf("%s:%s", source, syntaxMessage(perr))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml3.MappingNode {
		return fmt.Errorf("%s:1: %s", source, jsonMessage(err))
	}
	for _, item := range claimEntries(&doc) {
		var c Claim
		cerr := strictDecode(item, &c)
		if cerr == nil {
			continue
		}
		line := blame(item, reflect.TypeOf(c))
		if line == 0 {
			line = item.Line
		}
		return fmt.Errorf("%s:%d: claim %s: %s", source, line, entryID(item), jsonMessage(cerr))
	}
	line := blame(doc.Content[0], reflect.TypeOf(File{}))
	if line == 0 {
		line = 1
	}
	return fmt.Errorf("%s:%d: %s", source, line, jsonMessage(err))
}

// syntaxMessage is a YAML syntax error as "LINE: message".
func syntaxMessage(err error) string {
	m := regexp.MustCompile(`line (\d+): (.*)`).FindStringSubmatch(err.Error())
	if m == nil {
		return "1: " + err.Error()
	}
	return m[1] + ": " + m[2]
}

// jsonMessage is a decoding error without the decoders' prefixes ("error
// unmarshaling JSON: while decoding JSON: json: ").
func jsonMessage(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "json: "); i >= 0 {
		s = s[i+len("json: "):]
	}
	if m := typeErrorRE.FindStringSubmatch(s); m != nil {
		return fmt.Sprintf("%s: %s where the field is of type %s", m[2], jsonWords[m[1]], m[3])
	}
	return s
}

// jsonWords name encoding/json's kinds of value as a reader of YAML does.
var jsonWords = map[string]string{"array": "a list", "object": "an object (a mapping)", "string": "a string", "number": "a number", "bool": "a boolean"}

// typeErrorRE is encoding/json's error for a value of the wrong type, whose
// field path starts with a Go type name a claims file does not show.
var typeErrorRE = regexp.MustCompile(`^cannot unmarshal (\S+) into Go struct field \S*?([A-Za-z0-9]+) of type (\S+)$`)

// claimEntries are the entries of the file's claims list.
func claimEntries(doc *yaml3.Node) []*yaml3.Node {
	if doc.Kind != yaml3.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml3.MappingNode {
		return nil
	}
	top := doc.Content[0].Content
	for i := 0; i+1 < len(top); i += 2 {
		if top[i].Value == "claims" && top[i+1].Kind == yaml3.SequenceNode {
			return top[i+1].Content
		}
	}
	return nil
}

// entryID is the id a claim entry gives, or its position when it has none.
func entryID(item *yaml3.Node) string {
	for j := 0; item.Kind == yaml3.MappingNode && j+1 < len(item.Content); j += 2 {
		if item.Content[j].Value == "id" && item.Content[j+1].Value != "" {
			return item.Content[j+1].Value
		}
	}
	return "at line " + strconv.Itoa(item.Line) + " (no id)"
}

// blame returns the line of the innermost part of n that does not decode
// into a t: the key of an unknown field, or of a field whose value is of
// the wrong type (deepest first). 0 when n decodes.
func blame(n *yaml3.Node, t reflect.Type) int {
	t = evidence.Deref(t)
	switch {
	case n.Kind == yaml3.MappingNode && t.Kind() == reflect.Struct:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			one := &yaml3.Node{Kind: yaml3.MappingNode, Tag: "!!map", Content: []*yaml3.Node{key, val}}
			if strictDecode(one, reflect.New(t).Interface()) == nil {
				continue
			}
			if ft, ok := evidence.FieldType(t, key.Value); ok {
				if line := blame(val, ft); line > 0 {
					return line
				}
			}
			return key.Line
		}
	case n.Kind == yaml3.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for _, item := range n.Content {
			if strictDecode(item, reflect.New(t.Elem()).Interface()) == nil {
				continue
			}
			if line := blame(item, t.Elem()); line > 0 {
				return line
			}
			return item.Line
		}
	}
	return 0
}

// strictDecode decodes n into v as the loader decodes a file: YAML to
// JSON, unknown fields refused.
func strictDecode(n *yaml3.Node, v any) error {
	data, err := yaml3.Marshal(n)
	if err != nil {
		return fmt.Errorf("re-encode line %d: %w", n.Line, err)
	}
	return yaml.UnmarshalStrict(data, v)
}
