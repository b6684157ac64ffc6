package probes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubeproof/kubeproof/claims/probe"
	"github.com/kubeproof/kubeproof/internal/pki"
	"github.com/kubeproof/kubeproof/kube/identity"
	"github.com/kubeproof/kubeproof/kube/kubectl"
)

// kubectlAs is kubectl with a kubeconfig of its own: the cluster's server
// and CA, and the identity's credentials: a client certificate the CSR API
// issued (or one a CA of the probe's own signed, which the cluster does
// not trust), a ServiceAccount's token, or none.
func (r *run) kubectlAs(ctx context.Context, id probe.Identity) (kubectl.Runner, error) {
	cfg := clientcmdapi.NewConfig()
	ca := r.f.RESTConfig.CAData
	if len(ca) == 0 && r.f.RESTConfig.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(r.f.RESTConfig.CAFile); err != nil {
			return kubectl.Runner{}, fmt.Errorf("the cluster's CA: %w", err)
		}
	}
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: r.f.RESTConfig.Host, CertificateAuthorityData: ca}
	auth := &clientcmdapi.AuthInfo{}
	switch {
	case id.Anonymous:
	case id.ServiceAccount != "":
		token, err := identity.ServiceAccountToken(ctx, r.f.Client, r.f.Namespace, id.ServiceAccount)
		if err != nil {
			return kubectl.Runner{}, err
		}
		auth.Token = token
	case id.CA == probe.CAUntrusted:
		own, err := pki.NewCA("kubeproof probe " + r.p.ID + " (a CA no cluster trusts)")
		if err != nil {
			return kubectl.Runner{}, fmt.Errorf("a CA of the probe's own: %w", err)
		}
		kp, err := own.Issue(pki.Request{CommonName: id.User, Organizations: id.Groups, Usage: pki.ClientAuth})
		if err != nil {
			return kubectl.Runner{}, fmt.Errorf("a certificate for %s: %w", id.User, err)
		}
		auth.ClientCertificateData, auth.ClientKeyData = kp.CertPEM, kp.KeyPEM
	default:
		auth.ClientCertificateData, auth.ClientKeyData = r.f.ClientCertificate(ctx, id.User, id.Groups...)
	}
	cfg.AuthInfos["who"] = auth
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "who"}
	cfg.CurrentContext = "c"
	path := filepath.Join(ginkgo.GinkgoT().TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return kubectl.Runner{}, fmt.Errorf("write a kubeconfig for %s: %w", id, err)
	}
	return kubectl.Runner{Path: r.f.Kubectl.Path, Kubeconfig: path}, nil
}
