// Package falseclaims holds the worked examples' claims written to be false
// (docs/examples/*/false.yaml) to real runs of the examples, kept in
// testdata: every probe capability an example's claims use (an observer of
// the node or the container, a component restarted, restored or added, a
// signal, kubectl's environment and standard input, an operator comparing
// evidence with evidence) is seen deciding a claim both ways, its claim
// confirmed and a copy of it with one expectation turned the other way
// refuted, with the evidence in the reason. The package has only its test:
// the judging is the report command's (runner.JudgeAgain), not its own.
package falseclaims
