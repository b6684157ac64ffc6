// Package layering states kubeproof's layers, which its test holds the code
// to (docs/architecture.md draws the same map). Three kinds of code live in
// the repository, each in its own place:
//
//  1. the spec side, in five rooms stacked one on another: what providers
//     and specs agree on (contract/...: the cluster contract, contract/cluster
//     with Info, capabilities, abilities, Open; image names, ownership
//     labels, the test app's, the CNI trace's and the registry's log
//     formats; fixtures), how
//     kubeproof reaches a cluster's parts (kube/...: watches, the audit log
//     and etcd readers, kubectl, metrics, the node's runtime, identities,
//     Pod Security; webhooks/...), the claims language and catalog
//     (claims/...), the per-spec Framework (framework, which imports no
//     package under it, as the Kubernetes e2e framework's may not), and the
//     specs (suites/...);
//  2. how clusters are made (internal/provision/...): one door, the face
//     package internal/provision (the provider table, what a cluster is
//     made with, what is built beside it), and behind it, under
//     internal/provision/internal, the providers, binaries, images, the
//     kind node image, the private Docker daemon, host changes, processes;
//     the Go compiler refuses any import of those from outside;
//  3. what the CLI offers on top, in three rooms stacked one on another:
//     the core (internal/judge: a verdict per claim; internal/report: the
//     reports), the engine (internal/runner: the cluster a run uses, the
//     spec processes, interrupts), and what stands on the engine
//     (internal/tools/...: bench, trace, the fault matrix, claims lint, the
//     evidence catalog; internal/clusterflags: the flag table); then the
//     commands (cmd/...) and the project's own harnesses (ci/...).
//
// Beside them, internal/{exitcode,progress,pki,debpkg,buildinfo,jsonschema,
// sourcedoc} support every layer and import only each other, and internal/{layering,doclinks} are tests of
// the repository that import nothing of it. Arrows go from 3 to 1 and to
// the face of 2, and from 2 to a part of 1: the contract
// (contract/cluster), the image names of contract/images, the watches of
// kube/observe and the log formats of contract/cnitrace and
// contract/registrylog; never from 1
// to 2 or 3. Within 1 and within 3 they go down only: a library of the
// spec side imports neither the Framework nor the specs, the core imports
// neither the engine nor the tools, the engine neither the tools nor the
// flag table (the commands build the provisioning request it is given). The contract
// itself imports nothing of internal/, so a spec binary and a provider
// share only Info, capabilities, abilities and Open.
//
// The programs that run on a provider's nodes or under its Docker daemon
// (internal/provision/cmd/kubeproof-cni, -runc) are provisioning's own and
// live behind its door.
//
// cmd/kubeproof holds no engine: its files parse flags, call a package and
// print what comes back. The test holds it to that in two ways a reviewer
// can check by eye. By its imports: none of the packages that start or
// signal processes or serve the network (os/exec, os/signal, syscall,
// golang.org/x/sys/unix, net, net/http, Ginkgo's CLI), in its code or its
// tests; a command that needs one of those gets it from a package of
// internal/. And by size: no file over 450 lines, so that logic which
// grows finds a package of its own instead. The other programs under cmd/
// are small mains whose whole job is a process or a server (the images'
// programs), so the import rule is for cmd/kubeproof alone.
package layering
