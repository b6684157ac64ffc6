// Package hygiene holds the repository to what a clean checkout carries
// and to the shape of its code: its tests fail when a tracked file is a
// build output (an executable, an archive or a compressed blob beyond what
// test data needs), which belongs in _output/ and is made by the Makefile,
// never committed; when a Go file other than a test is over 400 lines; and
// when a package has no test of its own (but for those named, with why).
package hygiene
