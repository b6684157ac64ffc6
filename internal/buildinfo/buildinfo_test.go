package buildinfo

import "testing"

func TestTag(t *testing.T) {
	for in, want := range map[string]string{
		"v0.2.0": "v0.2.0",
		"v0.0.0-20261127101010-4a856e5c1f2e+dirty": "v0.0.0-20261127101010-4a856e5c1f2e-dirty",
		"dev": "dev",
		"-x":  "x",
		"":    "dev",
	} {
		if got := Tag(in); got != want {
			t.Errorf("Tag(%q) = %q, want %q", in, got, want)
		}
	}
}
