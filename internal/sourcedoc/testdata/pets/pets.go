// Package pets is what sourcedoc's test reads.
package pets

// Kind is a kind of pet.
type Kind string

const (
	Cat Kind = "cat"
	Dog Kind = "dog"
)

// Untyped constants are no enum.
const other = "x"

// Pet is an animal someone keeps.
type Pet struct {
	// Name is what it answers to.
	Name string
	Kind Kind // Kind says what it is.

	// Age and Weight, in years and kilograms.
	Age    int
	Weight float64

	// Vet is who treats it.
	Vet struct {
		// Phone is the vet's number.
		Phone string
	}
}

// fido is a dog,
// declared over two lines.
var fido = Pet{
	Name: "Fido",
}

var rex = Pet{Name: "Rex"} // rex has a trailing comment.
