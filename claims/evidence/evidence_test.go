package evidence

import (
	"reflect"
	"strings"
	"testing"
)

type who struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

type tokenEv struct {
	JWTParts int `json:"jwtParts"`
	who
	Extra map[string]who `json:"extra"`
	Raw   any            `json:"raw"`
}

func TestResolveAndPaths(t *testing.T) {
	tt := reflect.TypeOf(tokenEv{})
	for path, kind := range map[string]reflect.Kind{
		"t.jwtParts": reflect.Int, "t.username": reflect.String, "t.groups": reflect.Slice, "t.groups.0": reflect.String,
		"t.extra.anything.username": reflect.String,
	} {
		got, err := Resolve(tt, path)
		if err != nil || got.Kind() != kind {
			t.Errorf("Resolve(%s) = %v, %v; want a %s", path, got, err, kind)
		}
	}
	if _, err := Resolve(tt, "t.raw.deeper"); err == nil || !strings.Contains(err.Error(), "untyped") {
		t.Errorf("a path below an untyped field must not pass: %v", err)
	}
	paths := strings.Join(Paths("t", tt), " ")
	for _, want := range []string{"t.jwtParts", "t.username", "t.extra.{key}.username"} {
		if !strings.Contains(paths, want) {
			t.Errorf("Paths lacks %s: %s", want, paths)
		}
	}
}
