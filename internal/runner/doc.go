// Package runner is kubeproof's engine: what a command does once its flags
// are read. It chooses or makes the cluster (through the provider
// registry; it holds the providers' registrations), pushes the images the
// specs run, asks the cluster what the run may do, runs the specs in child
// processes of their own (this binary as a Ginkgo test binary, or as
// Ginkgo's CLI for parallel runs), passes interrupts on to them, judges
// the claims from their report, writes the reports, exports the cluster's
// logs on failure and removes a cluster it made.
//
// The commands of cmd/kubeproof only turn flags into a Plan (or the
// options of the other entry points: Faults, NewProvider, ClusterFor,
// RunSpecs) and print what comes back, as kind's create cluster command
// hands its flags to provider.Create and chainsaw's test command calls its
// runner and then saves the report.
package runner
