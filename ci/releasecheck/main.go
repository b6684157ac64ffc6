// Command releasecheck checks kubeproof's release as its users get it; the
// steps that need a shell (krew, a cluster, go install) are
// ci/release-check.sh's, which runs it (make release-check, part of make
// test).
//
//	releasecheck dist --dist DIR --version V --registry REG
//	    the archives of the four platforms (kubeproof-V-OS-ARCH.tar.gz),
//	    each with kubeproof built for its platform and stamped with V and
//	    REG, the linux ones with the programs of the images; SHA256SUMS
//	    naming exactly them; the krew manifest pointing at each with its
//	    checksum; and in REG each image the specs run, an index of
//	    linux/amd64 and linux/arm64 tagged V, whose program is, byte for
//	    byte, the one that platform's archive carries
//	releasecheck report --dir DIR --min-decided PERCENT
//	    a run's claims.json: how many claims it decided, what kept the
//	    others not checkable; fails on an error verdict or fewer decided
//	modproxy --out DIR --version V
//	    a Go module proxy (GOPROXY=file://DIR) serving this commit of
//	    kubeproof's module as version V, for `go install ...@V`
//
// Exit codes: 0 the check holds, 1 it does not, 2 usage.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	switch os.Args[1] {
	case "dist":
		dist := fs.String("dist", "_output/goreleaser", "goreleaser's dist directory")
		version := fs.String("version", "", "the release's version, v...")
		registry := fs.String("registry", "", "the registry path the release pushed its images to")
		parse(fs)
		err = checkDist(*dist, *version, *registry)
	case "report":
		dir := fs.String("dir", "", "the run's report directory")
		minDecided := fs.Float64("min-decided", 53, "the least share of claims decided, in percent")
		parse(fs)
		err = checkReport(*dir, *minDecided)
	case "modproxy":
		out := fs.String("out", "", "the proxy's directory")
		version := fs.String("version", "", "the module version to serve HEAD as")
		parse(fs)
		err = modProxy(*out, *version)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "releasecheck %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func parse(fs *flag.FlagSet) {
	if err := fs.Parse(os.Args[2:]); err != nil || fs.NArg() > 0 {
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: releasecheck dist|report|modproxy [flags] (see the package doc)")
	os.Exit(2)
}
