package local

import (
	"fmt"
	"net"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubeproof/kubeproof/internal/pki"
)

// clientIdentity is a client certificate the cluster's parts authenticate with.
type clientIdentity struct {
	file   string // base name under pki/ and of the kubeconfig under conf/
	user   string
	groups []string
}

func (l layout) identities() []clientIdentity {
	return []clientIdentity{
		{"admin", "kubernetes-admin", []string{"system:masters"}},
		{ControllerManager, "system:kube-controller-manager", nil},
		{Scheduler, "system:kube-scheduler", nil},
		{Kubelet, "system:node:" + l.nodeName(), []string{"system:nodes"}},
		{KubeProxy, "system:kube-proxy", nil},
	}
}

// makePKI writes every certificate, key and kubeconfig of the cluster.
func makePKI(c Config, l layout) error {
	nw := c.network()
	ca, err := pki.NewCA("kubeproof-" + c.Name + "-ca")
	if err != nil {
		return err
	}
	etcdCA, err := pki.NewCA("kubeproof-" + c.Name + "-etcd-ca")
	if err != nil {
		return err
	}
	frontProxyCA, err := pki.NewCA("kubeproof-" + c.Name + "-front-proxy-ca")
	if err != nil {
		return err
	}
	loopback := net.ParseIP("127.0.0.1")
	issue := []struct {
		ca   *pki.CA
		name string
		req  pki.Request
	}{
		{etcdCA, "etcd-server", pki.Request{CommonName: "etcd-server", DNSNames: []string{"localhost"},
			IPs: []net.IP{nw.hostIP, loopback}, Usage: pki.ServerAuth | pki.ClientAuth}},
		{etcdCA, "etcd-peer", pki.Request{CommonName: "etcd-peer", DNSNames: []string{"localhost"},
			IPs: []net.IP{nw.hostIP, loopback}, Usage: pki.ServerAuth | pki.ClientAuth}},
		{etcdCA, "apiserver-etcd-client", pki.Request{CommonName: "kube-apiserver-etcd-client", Usage: pki.ClientAuth}},
		// The harness's own etcd client, for checks that read etcd directly.
		{etcdCA, "kubeproof-etcd-client", pki.Request{CommonName: "kubeproof-etcd-client", Usage: pki.ClientAuth}},
		{ca, "apiserver", pki.Request{CommonName: "kube-apiserver",
			DNSNames: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
			IPs:      []net.IP{nw.hostIP, nw.apiServiceIP, loopback}, Usage: pki.ServerAuth}},
		{ca, "apiserver-kubelet-client", pki.Request{CommonName: "kube-apiserver-kubelet-client",
			Organizations: []string{"system:masters"}, Usage: pki.ClientAuth}},
		{ca, "kubelet-server", pki.Request{CommonName: l.nodeName(), DNSNames: []string{l.nodeName()},
			IPs: []net.IP{nw.nodeIP}, Usage: pki.ServerAuth}},
		{frontProxyCA, "front-proxy-client", pki.Request{CommonName: "front-proxy-client", Usage: pki.ClientAuth}},
	}
	for _, id := range l.identities() {
		issue = append(issue, struct {
			ca   *pki.CA
			name string
			req  pki.Request
		}{ca, id.file, pki.Request{CommonName: id.user, Organizations: id.groups, Usage: pki.ClientAuth}})
	}
	for _, is := range issue {
		kp, err := is.ca.Issue(is.req)
		if err != nil {
			return err
		}
		if err := kp.Write(l.pkiDir(), is.name); err != nil {
			return err
		}
	}
	for name, c := range map[string]*pki.CA{"ca": ca, "etcd-ca": etcdCA, "front-proxy-ca": frontProxyCA} {
		kp, err := c.KeyPair()
		if err != nil {
			return err
		}
		if err := kp.Write(l.pkiDir(), name); err != nil {
			return err
		}
	}
	priv, pub, err := pki.NewSigningKey()
	if err != nil {
		return err
	}
	if err := pki.WriteFile(l.pki("sa.key"), priv, 0o600); err != nil {
		return err
	}
	if err := pki.WriteFile(l.pki("sa.pub"), pub, 0o644); err != nil {
		return err
	}

	server := fmt.Sprintf("https://%s", net.JoinHostPort(nw.hostIP.String(), fmt.Sprint(c.APIServerPort)))
	for _, id := range l.identities() {
		path := l.conf(id.file + ".kubeconfig")
		if id.file == "admin" {
			path = l.adminKubeconfig()
		}
		if err := writeKubeconfig(path, c.Name, server, l.pki("ca.crt"), l.pki(id.file+".crt"), l.pki(id.file+".key"), id.user); err != nil {
			return err
		}
	}
	return nil
}

// writeKubeconfig writes a kubeconfig with embedded certificates (mode 0600).
func writeKubeconfig(path, clusterName, server, caFile, certFile, keyFile, user string) error {
	var data [3][]byte
	for i, f := range []string{caFile, certFile, keyFile} {
		d, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("write kubeconfig %s: %w", path, err)
		}
		data[i] = d
	}
	caData, certData, keyData := data[0], data[1], data[2]
	ctxName := "kubeproof-" + clusterName
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ctxName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certData, ClientKeyData: keyData}
	cfg.Contexts[ctxName] = &clientcmdapi.Context{Cluster: ctxName, AuthInfo: user}
	cfg.CurrentContext = ctxName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
