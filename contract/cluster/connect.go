package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	// The auth-provider plugins kubectl has (oidc; gcp and azure, which
	// now only say they were removed): a kubeconfig whose user names one
	// works here as it does with kubectl.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrKubeconfig: the kubeconfig is missing, unreadable or invalid.
// ErrUnreachable: the cluster it names does not answer, or is not ready.
// ErrCredentials: the cluster answers, and refuses the kubeconfig's
// credentials (401 Unauthorized).
// Errors of RESTConfig, NewClient and Connect wrap one of them; whoever
// reports them to a user (the CLI) decides what each means to its caller.
var (
	ErrKubeconfig  = errors.New("bad kubeconfig")
	ErrUnreachable = errors.New("cluster unreachable")
	ErrCredentials = errors.New("credentials refused")
)

// connectError is a message of its own that errors.Is finds kind in.
type connectError struct {
	kind error
	msg  string
}

func (e *connectError) Error() string        { return e.msg }
func (e *connectError) Is(target error) bool { return target == e.kind }

func kubeconfigErrorf(format string, args ...any) error {
	return &connectError{kind: ErrKubeconfig, msg: fmt.Sprintf(format, args...)}
}

// RESTConfig loads a kubeconfig the way kubectl does: path is a file, or a
// list of files ($KUBECONFIG's form, merged); an empty path means kubectl's
// default loading rules ($KUBECONFIG, then ~/.kube/config). kubeContext
// picks a context other than the current one. Errors wrap ErrKubeconfig:
// the file is missing, unreadable or invalid.
func RESTConfig(path, kubeContext string) (*rest.Config, error) {
	rules, err := LoadingRules(path)
	if err != nil {
		return nil, err
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: kubeContext}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	switch {
	case clientcmd.IsEmptyConfig(err):
		// kubectl skips a file $KUBECONFIG names that does not exist: say
		// which, rather than that there is no $KUBECONFIG.
		if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); path == "" && env != "" {
			return nil, kubeconfigErrorf("no kubeconfig: $KUBECONFIG names %s, and none of it exists", env)
		}
		return nil, kubeconfigErrorf("no kubeconfig: none named, no $KUBECONFIG and no ~/.kube/config")
	case err != nil:
		return nil, kubeconfigErrorf("kubeconfig %s is invalid: %v", describeRules(rules), err)
	}
	return cfg, nil
}

// LoadingRules are kubectl's rules for finding the kubeconfig: path when
// given (a file, or a list of files to merge), the default rules otherwise.
// A single named file must exist; in a list, as in kubectl, missing files
// are passed over. A file that is there but cannot be read is an error.
func LoadingRules(path string) (*clientcmd.ClientConfigLoadingRules, error) {
	if path == "" {
		return clientcmd.NewDefaultClientConfigLoadingRules(), nil
	}
	files := filepath.SplitList(path)
	for _, f := range files {
		if _, err := os.ReadFile(f); err != nil && (len(files) == 1 || !errors.Is(err, fs.ErrNotExist)) {
			return nil, kubeconfigErrorf("kubeconfig %s is unreadable: %v", f, unwrapPathError(err))
		}
	}
	if len(files) == 1 {
		return &clientcmd.ClientConfigLoadingRules{ExplicitPath: files[0]}, nil
	}
	return &clientcmd.ClientConfigLoadingRules{Precedence: files}, nil
}

// CurrentContext is the context a kubeconfig (as LoadingRules find it)
// would use: kubeContext if given, its current context otherwise.
func CurrentContext(path, kubeContext string) string {
	if kubeContext != "" {
		return kubeContext
	}
	rules, err := LoadingRules(path)
	if err != nil {
		return ""
	}
	raw, err := rules.Load()
	if err != nil {
		return ""
	}
	return raw.CurrentContext
}

// KubeconfigFiles names the files a kubeconfig is read from, as
// LoadingRules find them (path, else $KUBECONFIG's, else ~/.kube/config),
// for messages; "" when they cannot be named.
func KubeconfigFiles(path string) string {
	rules, err := LoadingRules(path)
	if err != nil {
		return ""
	}
	return describeRules(rules)
}

// describeRules names the files a kubeconfig was read from, for messages.
func describeRules(rules *clientcmd.ClientConfigLoadingRules) string {
	if rules.ExplicitPath != "" {
		return rules.ExplicitPath
	}
	return strings.Join(rules.GetLoadingPrecedence(), string(filepath.ListSeparator))
}

// NewClient loads the kubeconfig as RESTConfig does and makes a client of
// it; it does not reach the cluster. Errors wrap ErrKubeconfig.
func NewClient(path, kubeContext string) (*rest.Config, kubernetes.Interface, error) {
	cfg, err := RESTConfig(path, kubeContext)
	if err != nil {
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, kubeconfigErrorf("kubeconfig %s: %v", path, err)
	}
	return cfg, client, nil
}

// Connect loads the kubeconfig and checks that the API server answers
// /readyz within timeout. Errors wrap ErrKubeconfig or ErrUnreachable.
func Connect(ctx context.Context, path, kubeContext string, timeout time.Duration) (*rest.Config, kubernetes.Interface, error) {
	cfg, client, err := NewClient(path, kubeContext)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if apierrors.IsUnauthorized(err) {
		// The server answered: it is up, and does not know the user.
		return nil, nil, &connectError{kind: ErrCredentials, msg: fmt.Sprintf("cluster at %s refused the kubeconfig's credentials (401 Unauthorized): they are wrong, expired or of another cluster", cfg.Host)}
	}
	if err != nil {
		msg := fmt.Sprintf("cluster at %s is not reachable or not ready: %v", cfg.Host, err)
		// /readyz lists its checks a line each: one line here.
		if b := strings.Join(strings.Fields(trimBody(body)), " "); b != "" {
			msg += ": " + b
		}
		return nil, nil, &connectError{kind: ErrUnreachable, msg: msg}
	}
	return cfg, client, nil
}

func trimBody(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s", pe.Err)
	}
	return err
}
