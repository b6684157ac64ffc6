// Package hygiene holds the repository to what a clean checkout carries:
// its test fails when a tracked file is a build output (an executable, an
// archive or a compressed blob beyond what test data needs), which belongs
// in _output/ and is made by the Makefile, never committed.
package hygiene
