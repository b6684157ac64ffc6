package main

import (
	"runtime/debug"

	"github.com/kubeproof/kubeproof/internal/buildinfo"
)

// buildVersion and buildCommit are set by the Makefile and the release
// (-X main.buildVersion=... -X main.buildCommit=...).
var (
	buildVersion = ""
	buildCommit  = ""
)

func init() { buildinfo.Set(version(), buildCommit) }

func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
