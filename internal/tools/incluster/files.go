package incluster

import (
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// File is a file of the user's that the run inside reads: a claims file,
// a manifest its probes apply, the document its quotes are checked
// against, a pull secret's docker config.
type File struct {
	// Path is where it is here.
	Path string
	// Secret: it holds credentials (a Secret carries it, not a ConfigMap).
	Secret bool
}

// PodPath is where the run inside finds the file at path here: under
// FilesDir (SecretDir for a secret) at its absolute path, so that paths
// relative to it lead where they lead here.
func PodPath(path string, secret bool) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", exitcode.Errorf(exitcode.Usage, "%s: %v", path, err)
	}
	if secret {
		return SecretDir + abs, nil
	}
	return FilesDir + abs, nil
}

// carried is a file read, with its key in the ConfigMap or Secret.
type carried struct {
	key   string
	local string
	data  []byte
}

// maxCarried is what a ConfigMap holds (1 MiB), less room for its object.
const maxCarried = 1000 * 1024

// carry reads the files, each once, into the ConfigMap's and the Secret's
// entries.
func carry(files []File) (plain, secret []carried, err error) {
	seen := map[string]bool{}
	size := map[bool]int{}
	for _, f := range files {
		abs, err := filepath.Abs(f.Path)
		if err != nil || seen[abs] {
			continue
		}
		seen[abs] = true
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil, nil, exitcode.Errorf(exitcode.Usage, "a file the run inside the cluster needs: %v", err)
		}
		if size[f.Secret] += len(data); size[f.Secret] > maxCarried {
			return nil, nil, exitcode.Errorf(exitcode.Usage, "the files the run inside the cluster needs are larger than a ConfigMap holds (1 MiB), at %s", f.Path)
		}
		c := carried{local: abs, data: data}
		if f.Secret {
			c.key = fmt.Sprintf("f%d", len(secret))
			secret = append(secret, c)
		} else {
			c.key = fmt.Sprintf("f%d", len(plain))
			plain = append(plain, c)
		}
	}
	return plain, secret, nil
}

func (n names) filesConfigMap(files []carried) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: n.inNamespace(filesConfigMap), BinaryData: map[string][]byte{}}
	for _, f := range files {
		cm.BinaryData[f.key] = f.data
	}
	return cm
}

func (n names) pullSecret(files []carried) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: n.inNamespace(pullSecret), Data: map[string][]byte{}}
	for _, f := range files {
		s.Data[f.key] = f.data
	}
	return s
}
