// Package layering states kubeproof's layers, which its test holds the code
// to (docs/architecture.md draws the same map). Three kinds of code live in
// the repository, each in its own place:
//
//  1. what a spec stands on (framework/..., webhooks/..., fixtures, suites/...):
//     the per-spec Framework, watches, the audit log and etcd readers,
//     identities, the claims catalog and its schema, and the cluster
//     contract (framework/cluster: Info, capabilities, abilities, Open);
//  2. how clusters are made (internal/provision/...): what a cluster is made
//     with and the registry of providers (create), the releases, the
//     providers, the binaries and images they build, the kind node image,
//     the private Docker daemon, the host changes and processes they manage;
//  3. what the CLI offers on top (internal/runner, internal/cli/...,
//     cmd/..., and the project's own harnesses in ci/...): the engine that
//     runs the suites, the cluster flags, trace, bench, faults, the judge of
//     claims, reports, charts, and the commands.
//
// Beside them, internal/{exitcode,progress,pki} support every layer and
// import only each other, and internal/{layering,doclinks} are tests of the
// repository that import nothing of it. Arrows go from 3 to 1 and 2, and
// from 2 to a part of 1: the contract (framework/cluster), the image names
// of framework/images, the watches of framework/observe and the log format
// of framework/cnitrace; never from 1 to 2 or 3. The contract itself
// imports nothing of internal/, so a spec binary and a provider share only
// Info, capabilities, abilities and Open.
//
// Within the CLI, the commands (cmd/...) reach provisioning only through
// the packages of internal/: the engine (internal/runner: the cluster, the
// spec processes, interrupts, judging) and the packages with one purpose
// beside it (internal/cli/artifacts, dockerapi, ociregistry, bench, ...).
// The programs that run on a provider's nodes or under its Docker daemon
// (cmd/kubeproof-cni, cmd/kubeproof-runc) are provisioning's own and sit in
// its layer.
//
// cmd/kubeproof holds no engine: its files parse flags, call a package and
// print what comes back. The test holds it to that in two ways a reviewer
// can check by eye. By its imports: none of the packages that start or
// signal processes or serve the network (os/exec, os/signal, syscall,
// golang.org/x/sys/unix, net, net/http, Ginkgo's CLI), none of
// internal/provision, in its code or its tests; a command that needs one
// of those gets it from a package of internal/. And by size: no file over
// 450 lines, so that logic which grows finds a package of its own
// instead. The other programs under cmd/ are small mains whose whole job
// is a process or a server (the images' programs), so the import rule is
// for cmd/kubeproof alone.
package layering
