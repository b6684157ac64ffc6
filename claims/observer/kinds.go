package observer

import "github.com/kubeproof/kubeproof/contract/cluster"

// nodeExec is what the observers that read a node need.
var nodeExec = []cluster.Capability{cluster.NodeExec}

// Kinds is every kind of observer a claims file can name, one row each;
// the kind's file (object.go for object:) holds the rest of it.
var Kinds = []Kind{
	{Key: "object", New: func() Spec { return new(Object) }},
	{Key: "events", New: func() Spec { return new(Events) }},
	{Key: "audit", New: func() Spec { return new(Audit) }, Needs: []cluster.Capability{cluster.AuditLog}},
	{Key: "endpointSlices", New: func() Spec { return new(EndpointSlices) }},
	{Key: "etcd", New: func() Spec { return new(Etcd) }, Needs: []cluster.Capability{cluster.EtcdAccess}},
	{Key: "metric", New: func() Spec { return new(Metric) }},
	{Key: "objects", New: func() Spec { return new(Objects) }},
	{Key: "nodeConditions", New: func() Spec { return new(NodeConditions) }},
	{Key: "featureGates", New: func() Spec { return new(FeatureGates) }},
	{Key: "nodeFile", New: func() Spec { return new(NodeFile) }, Needs: nodeExec},
	{Key: "runtime", New: func() Spec { return new(Runtime) }, Needs: nodeExec},
	{Key: "container", New: func() Spec { return new(Container) }, Needs: nodeExec},
	{Key: "cniCalls", New: func() Spec { return new(CNICalls) }, Needs: nodeExec},
	{Key: "host", New: func() Spec { return new(Host) }, Needs: nodeExec},
}
