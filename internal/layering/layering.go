// Package layering states kubeproof's layers, which its test holds the code
// to. Three kinds of code live in the repository, each in its own place:
//
//  1. what a spec stands on (framework/..., webhooks/..., fixtures, suites/...):
//     the per-spec Framework, watches, the audit log and etcd readers,
//     identities, the claims catalog and judge, and the cluster contract
//     (framework/cluster: Info, capabilities, abilities, Open);
//  2. how clusters are made (internal/provision/...): what a cluster is made
//     with and the registry of providers (create), the providers, the
//     binaries and images they build, the kind node image, the private
//     Docker daemon, the host changes and processes they manage;
//  3. what the CLI offers on top (internal/cli/..., cmd/...): run, trace,
//     bench, faults, reports, charts.
//
// Beside them, internal/{exitcode,progress,pki} support every layer.
// Arrows go from 3 to 1 and 2, and from 2 to the contract of 1
// (framework/cluster, the image names of framework/images, and the watches
// of framework/observe); never from 1 to 2 or 3.
package layering
