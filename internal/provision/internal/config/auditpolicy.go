package config

// AuditPolicy is the audit policy of every cluster kubeproof makes. It
// records every request at Metadata level (who, what, when, with
// microsecond timestamps) and writes at Request level (the object sent), so
// that checks can see who created, bound or updated what. Secrets and tokens
// stay at Metadata so their content never reaches the log. The
// RequestReceived stage is omitted: ResponseComplete carries both times.
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets", "configmaps", "serviceaccounts/token"]
  - group: "authentication.k8s.io"
    resources: ["tokenreviews"]
- level: Request
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: Metadata
`
