// Package coverage decides every line of a document: quoted by a claim,
// or noted (fixtures/sentences) as restating one, not testable, or open;
// the sentence table (docs/sentences.md) and the reports' document view
// are made of it.
package coverage

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/claims"
)

// A document's every line is decided: quoted by a claim, or noted (in
// fixtures/sentences/<seed>.yaml) as restating claimed sentences, not
// testable, or open. This file splits a document into its units and maps
// each to what decides it; docs/sentences.md and the reports' document view
// are both made from it.

// Unit is a unit of a document: one line of prose, or one fenced block (a
// diagram, a code sample), which claims decide as a whole.
type Unit struct {
	// First and Last are line numbers, from 1.
	First, Last int
	Block       bool
	// Lines are the unit's non-empty lines, trimmed; Numbers their line
	// numbers.
	Lines   []string
	Numbers []int
}

// Text is the unit's lines joined, white space collapsed.
func (u Unit) Text() string { return collapse(strings.Join(u.Lines, " ")) }

var (
	separatorLine = regexp.MustCompile(`^\|?[-| :]+\|?$`)
	// markup is a line of HTML that folds an answer away, or a bold
	// label that introduces what follows ("**실제 측정:**").
	markup = regexp.MustCompile(`^</?details>$|^<summary>.*</summary>$|^\*\*[^*]+:\s*\*\*$`)
	// bullet is a list item's or a tree's marker in front of a line.
	bullet = regexp.MustCompile(`^(?:[-*>]|\d+\.|[├└│─ ]+)\s*`)
)

// Units splits a document into its units: the front matter, headings,
// rules, table separators and folding markup are not sentences.
func Units(doc string) []Unit {
	var units []Unit
	var block *Unit
	lines := strings.Split(doc, "\n")
	start := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "---" {
				start = i + 1
				break
			}
		}
	}
	for i := start; i < len(lines); i++ {
		s := strings.TrimSpace(lines[i])
		if strings.HasPrefix(s, "```") {
			if block == nil {
				block = &Unit{First: i + 1, Block: true}
			} else {
				block.Last = i + 1
				if len(block.Lines) > 0 {
					units = append(units, *block)
				}
				block = nil
			}
			continue
		}
		if block != nil {
			if s != "" {
				block.Lines = append(block.Lines, s)
				block.Numbers = append(block.Numbers, i+1)
			}
			continue
		}
		if s == "" || s == "---" || strings.HasPrefix(s, "#") || separatorLine.MatchString(s) || markup.MatchString(s) {
			continue
		}
		units = append(units, Unit{First: i + 1, Last: i + 1, Lines: []string{s}, Numbers: []int{i + 1}})
	}
	return units
}

// quotedBy are the claims whose quote (a fragment of it) contains the
// unit's line, or, for longer fragments, is contained in it.
func quotedBy(u Unit, cs []claims.Claim) []string {
	var ids []string
	for _, c := range cs {
		for _, frag := range strings.Split(collapse(c.Quote), " … ") {
			if quotes(frag, u) {
				ids = append(ids, c.ID)
				break
			}
		}
	}
	return ids
}

func quotes(frag string, u Unit) bool {
	if u.Block {
		return len(frag) > 15 && strings.Contains(u.Text(), frag)
	}
	line := collapse(u.Lines[0])
	bare := bullet.ReplaceAllString(line, "")
	return strings.Contains(frag, line) || (bare != "" && strings.Contains(frag, bare)) || (len(frag) > 15 && strings.Contains(line, frag))
}

// LineNotes are the notes of one document: fixtures/sentences/<seed>.yaml.
type LineNotes struct {
	Lines []LineNote `json:"lines"`
}

// LineNote decides a line no claim quotes. Text names it: the line,
// trimmed; a block's first line names the block, its other lines (InBlock)
// themselves.
type LineNote struct {
	Text string `json:"text"`
	// InBlock: Text is a line inside a block, after its first.
	InBlock     bool     `json:"inBlock,omitempty"`
	Restates    []string `json:"restates,omitempty"`
	NotTestable string   `json:"notTestable,omitempty"`
	Open        string   `json:"open,omitempty"`
}

// Decision names what a note (or a line's claims) decide.
type Decision string

const (
	// Quoted: claims quote the line.
	Quoted Decision = "claims"
	// Restates: the line says again what the named claims check.
	Restates Decision = "restates"
	// Untestable: no cluster can decide the line (the note says why).
	Untestable Decision = "not-testable"
	// Open: testable, and not checked yet.
	Open Decision = "open"
	// Undecided: neither quoted nor noted (the catalog's test fails).
	Undecided Decision = "undecided"
)

// Validate checks that the note decides its line one way.
func (n LineNote) Validate() error {
	set := 0
	for _, b := range []bool{len(n.Restates) > 0, n.NotTestable != "", n.Open != ""} {
		if b {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("note %q: give exactly one of restates, notTestable, open", n.Text)
	}
	return nil
}

// Decision is what the note says of its line.
func (n LineNote) Decision() Decision {
	switch {
	case len(n.Restates) > 0:
		return Restates
	case n.NotTestable != "":
		return Untestable
	}
	return Open
}

// Reason is the note's text for a line it does not decide by claims: why
// it is not testable, or what a claim would take.
func (n LineNote) Reason() string {
	if n.NotTestable != "" {
		return n.NotTestable
	}
	return n.Open
}

// Find returns the index of the note on line: a line of prose or a
// block's first line, or (inBlock) one of a block's other lines; -1 if
// there is none.
func (ns LineNotes) Find(line string, inBlock bool) int {
	return slices.IndexFunc(ns.Lines, func(n LineNote) bool {
		return n.InBlock == inBlock && collapse(n.Text) == collapse(line)
	})
}

// ParseLineNotes reads a notes file; name is for errors.
func ParseLineNotes(name string, data []byte) (LineNotes, error) {
	var ns LineNotes
	if err := yaml.UnmarshalStrict(data, &ns); err != nil {
		return ns, fmt.Errorf("%s: %w", name, err)
	}
	return ns, nil
}

// DocumentText is a document's text and the notes on its lines.
type DocumentText struct {
	File  string
	Text  string
	Notes LineNotes
}

// LoadDocumentText reads the document file from docs and its notes
// (<file without .txt>.yaml) from notes; a document without notes has
// none. ok is false when docs lacks the document.
func LoadDocumentText(docs, notes fs.FS, file string) (t DocumentText, ok bool, err error) {
	data, err := fs.ReadFile(docs, file)
	if errors.Is(err, fs.ErrNotExist) {
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("read document %s: %w", file, err)
	}
	t = DocumentText{File: file, Text: string(data)}
	name := strings.TrimSuffix(file, ".txt") + ".yaml"
	nd, err := fs.ReadFile(notes, name)
	if errors.Is(err, fs.ErrNotExist) {
		return t, true, nil
	}
	if err != nil {
		return t, true, fmt.Errorf("read notes %s: %w", name, err)
	}
	t.Notes, err = ParseLineNotes(name, nd)
	return t, true, err
}

// DecidedUnit is a unit with what decides it: the claims that quote it,
// its note, and notes on lines inside it (a block's lines that say more
// than the claims that quote the block).
type DecidedUnit struct {
	Unit
	Claims []string
	Note   *LineNote
	Inner  []InnerLine
}

// Decision is what decides the unit, as docs/sentences.md counts it: its
// note if it has one (a block's note decides what its claims leave),
// else its claims.
func (u DecidedUnit) Decision() Decision {
	switch {
	case u.Note != nil:
		return u.Note.Decision()
	case len(u.Claims) > 0:
		return Quoted
	}
	return Undecided
}

// InnerLine is a noted line inside a block.
type InnerLine struct {
	Line int
	Text string
	Note *LineNote
}

// Decide maps every unit of the document to the claims of the catalog
// that quote it and to its note. problems are what the catalog's test
// refuses: a line neither quoted nor noted, a line both quoted and noted, a
// note that matches no line or decides nothing, a restated claim that does
// not exist.
func Decide(text DocumentText, cat *claims.Catalog) (units []DecidedUnit, problems []string) {
	var docClaims []claims.Claim
	for _, c := range cat.Claims {
		if c.Document == text.File {
			docClaims = append(docClaims, c)
		}
	}
	notes := text.Notes.Lines
	used := make([]bool, len(notes))
	for _, u := range Units(text.Text) {
		d := DecidedUnit{Unit: u, Claims: quotedBy(u, docClaims)}
		if i := text.Notes.Find(u.Lines[0], false); i >= 0 {
			used[i] = true
			d.Note = &notes[i]
		}
		for j := 1; u.Block && j < len(u.Lines); j++ {
			if i := text.Notes.Find(u.Lines[j], true); i >= 0 {
				used[i] = true
				d.Inner = append(d.Inner, InnerLine{Line: u.Numbers[j], Text: u.Lines[j], Note: &notes[i]})
			}
		}
		switch {
		case d.Note != nil && len(d.Claims) > 0 && !u.Block:
			problems = append(problems, fmt.Sprintf("%s line %d: quoted by %v and also noted in fixtures/sentences: drop the note", text.File, u.First, d.Claims))
		case d.Note == nil && len(d.Claims) == 0:
			problems = append(problems, fmt.Sprintf("%s line %d is neither quoted by a claim nor noted in fixtures/sentences/%s: %q",
				text.File, u.First, strings.TrimSuffix(text.File, ".txt")+".yaml", u.Lines[0]))
		}
		units = append(units, d)
	}
	for i, n := range notes {
		if !used[i] {
			problems = append(problems, fmt.Sprintf("fixtures/sentences for %s: note %q matches no line of the seed", text.File, n.Text))
		}
		if err := n.Validate(); err != nil {
			problems = append(problems, fmt.Sprintf("fixtures/sentences for %s: %v", text.File, err))
		}
		for _, id := range n.Restates {
			if _, ok := cat.Claim(id); !ok {
				problems = append(problems, fmt.Sprintf("fixtures/sentences for %s: note %q restates %s, which is no claim", text.File, n.Text, id))
			}
		}
	}
	return units, problems
}

// LineCounts counts a document's units by what decides them, and the
// noted lines inside blocks.
type LineCounts struct {
	Units       int `json:"units"`
	InBlocks    int `json:"inBlocks"`
	Quoted      int `json:"quoted"`
	Restating   int `json:"restating"`
	NotTestable int `json:"notTestable"`
	Open        int `json:"open"`
	Undecided   int `json:"undecided,omitempty"`
}

// CountLines counts units as docs/sentences.md does.
func CountLines(units []DecidedUnit) LineCounts {
	c := LineCounts{Units: len(units)}
	count := func(d Decision) {
		switch d {
		case Quoted:
			c.Quoted++
		case Restates:
			c.Restating++
		case Untestable:
			c.NotTestable++
		case Open:
			c.Open++
		default:
			c.Undecided++
		}
	}
	for _, u := range units {
		count(u.Decision())
		for _, in := range u.Inner {
			count(in.Note.Decision())
			c.InBlocks++
		}
	}
	return c
}

// String is the counts' sentence, the same in docs/sentences.md and the
// reports.
func (c LineCounts) String() string {
	s := fmt.Sprintf("%d units and %d lines inside blocks: %d quoted by claims, %d restating claimed ones, %d not testable, %d open",
		c.Units, c.InBlocks, c.Quoted, c.Restating, c.NotTestable, c.Open)
	if c.Undecided > 0 {
		s += fmt.Sprintf(", %d undecided", c.Undecided)
	}
	return s + "."
}

// collapse turns every run of white space into one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
