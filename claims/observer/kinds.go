package observer

import "github.com/kubeproof/kubeproof/contract/cluster"

// Kinds is every kind of observer a claims file can name, one row each;
// the kind's file (object.go for object:) holds the rest of it.
var Kinds = []Kind{
	{Key: "object", New: func() Spec { return new(Object) }},
	{Key: "events", New: func() Spec { return new(Events) }},
	{Key: "audit", New: func() Spec { return new(Audit) }, Needs: []cluster.Capability{cluster.AuditLog}},
	{Key: "endpointSlices", New: func() Spec { return new(EndpointSlices) }},
	{Key: "etcd", New: func() Spec { return new(Etcd) }, Needs: []cluster.Capability{cluster.EtcdAccess}},
	{Key: "metric", New: func() Spec { return new(Metric) }},
	{Key: "nodeConditions", New: func() Spec { return new(NodeConditions) }},
}
