package expect

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims/evidence"
)

// FitsWith is Fits for an expectation that may read other evidence
// (minus, sameAs, before...): resolve finds the type at another path.
func (e Expectation) FitsWith(t reflect.Type, resolve func(string) (reflect.Type, error)) error {
	number := func(path string, t reflect.Type) error {
		if t.Kind() == reflect.Interface || numeric(t) {
			return nil
		}
		return fmt.Errorf("%s is a %s, not a number: %s compares numbers", path, t, e.Want())
	}
	if e.Minus != "" {
		mt, err := resolve(e.Minus)
		if err != nil {
			return fmt.Errorf("minus: %w", err)
		}
		if err := number(e.Evidence, t); err != nil {
			return fmt.Errorf("minus %s: %w", e.Minus, err)
		}
		if err := number(e.Minus, mt); err != nil {
			return fmt.Errorf("minus: %w", err)
		}
		t = reflect.TypeFor[float64]()
	}
	other := e.Other()
	if other == "" {
		return e.Fits(t)
	}
	ot, err := resolve(other)
	if err != nil {
		return err
	}
	if e.Before != "" || e.After != "" || e.Tolerance != nil {
		if err := number(e.Evidence, t); err != nil {
			return err
		}
		return number(other, ot)
	}
	if t.Kind() == reflect.Interface || ot.Kind() == reflect.Interface || (numeric(t) && numeric(ot)) || t.Kind() == ot.Kind() {
		return nil
	}
	return fmt.Errorf("%s is a %s and %s a %s: %s can never hold", e.Evidence, t, other, ot, e.Want())
}

// Fits reports whether a value of type t can ever satisfy e.
func (e Expectation) Fits(t reflect.Type) error {
	if t.Kind() == reflect.Interface {
		return nil
	}
	want := func(ok bool, what string) error {
		if ok {
			return nil
		}
		return fmt.Errorf("%s wants %s, but the spec records a %s", e.Want(), what, t)
	}
	switch {
	case e.Matches != "", e.NotMatches != "":
		return want(t.Kind() == reflect.String, "a string")
	case e.Absent != nil:
		return nil
	case e.Ranged():
		return want(numeric(t), "a number")
	case e.AnyMatches != nil, e.NoneMatches != nil:
		if err := want(t.Kind() == reflect.Slice || t.Kind() == reflect.Array, "a list"); err != nil {
			return err
		}
		return e.elementFits(evidence.Deref(t.Elem()))
	case e.Contains != nil, e.NotContains != nil:
		return want(t.Kind() == reflect.String || t.Kind() == reflect.Slice || t.Kind() == reflect.Array, "a string or a list")
	}
	var raws []json.RawMessage
	switch {
	case e.Equals != nil:
		raws = []json.RawMessage{*e.Equals}
	case e.NotEquals != nil:
		raws = []json.RawMessage{*e.NotEquals}
	default:
		raws = e.OneOf
	}
	for _, r := range raws {
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			return err
		}
		if err := want(kindFits(v, t), evidence.KindOf(v)); err != nil {
			return err
		}
	}
	return nil
}

// elementFits reports whether an anyMatches pattern can match elements of
// type t: a regular expression needs strings, fields need objects that have
// them.
func (e Expectation) elementFits(t reflect.Type) error {
	p, err := e.ElementPattern()
	if err != nil || t.Kind() == reflect.Interface {
		return err
	}
	if p.Whole != nil {
		if t.Kind() != reflect.String {
			return fmt.Errorf("%s wants a list of strings, but the spec records a list of %s", e.Want(), t)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Map:
		return nil
	case reflect.Struct:
		for field := range p.Fields {
			if _, err := evidence.Resolve(t, "element."+field); err != nil {
				return fmt.Errorf("%s: the list's elements have no field %q (they have %s)", e.Want(), field, strings.Join(evidence.FieldNames(t), ", "))
			}
		}
		return nil
	}
	return fmt.Errorf("%s wants a list of objects, but the spec records a list of %s", e.Want(), t)
}

func numeric(t reflect.Type) bool {
	return slices.Contains([]reflect.Kind{reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64}, t.Kind())
}

// kindFits reports whether a JSON value v can be the encoding of a t.
func kindFits(v any, t reflect.Type) bool {
	switch v.(type) {
	case nil:
		// Any value can be absent, and an absent value reads null.
		return true
	case bool:
		return t.Kind() == reflect.Bool
	case float64:
		return numeric(t)
	case string:
		return t.Kind() == reflect.String
	case []any:
		return t.Kind() == reflect.Slice || t.Kind() == reflect.Array
	default:
		return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
	}
}
